// A list of verification checks: each held (ok) or failed, with what it checked.
import type { Check } from '../verify/receipt';

export function Checks({ checks, caption }: { checks: Check[]; caption: string }) {
  return (
    <div className="table-scroll">
      <table className="checks">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Check</th>
            <th scope="col">Result</th>
            <th scope="col">What</th>
          </tr>
        </thead>
        <tbody>
          {checks.map((c, i) => (
            <tr key={`${c.field}-${i}`} data-field={c.field} data-ok={c.ok ? 'true' : 'false'}>
              <th scope="row">
                <code>{c.field}</code>
              </th>
              <td>
                <span className={`badge ${c.ok ? 'badge-pass' : 'badge-fail'}`}>{c.ok ? 'ok' : 'FAIL'}</span>
              </td>
              <td>{c.what}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
