// The capability panel: each lab available or not with the measured reason, and every host
// capability the lab measured. An unavailable lab cannot be started.
import { get } from '../api/client';
import type { CapabilityPanel, Lab } from '../api/types';
import { ErrorBox } from '../components/ErrorBox';
import { useLoad } from '../components/hooks';
import { StartAttempt } from './start';

export function labReason(l: Lab): string {
  if (l.missing && l.missing.length > 0) return l.missing.join('; ');
  return l.reason ?? '';
}

export function CapabilitiesPage() {
  const panel = useLoad(() => get<CapabilityPanel>('/capabilities'), []);
  const p = panel.data;
  return (
    <>
      <h1 tabIndex={-1}>Capabilities</h1>
      <p className="lede">
        What this machine can run, as the lab measured it (each capability is tried, not assumed). A lab whose needs are
        not all met is unavailable and cannot be started.
      </p>
      <ErrorBox error={panel.error} title="Could not read the capability panel" />
      {p && (
        <>
          <p className="source source-replay">
            Measured by the event at seq {p.measured_seq}
            {p.measured_at ? ` on ${p.measured_at}` : ''}; read from the log.
          </p>
          <section aria-labelledby="labs-title">
            <h2 id="labs-title">Labs</h2>
            <ul className="cards">
              {p.labs.map((l) => (
                <li key={l.scenario} className="card lab" data-lab={l.scenario} data-available={l.available ? 'true' : 'false'}>
                  <h3>{l.title}</h3>
                  <p>
                    <code>{l.scenario}</code>{' '}
                    <span className={`badge ${l.available ? 'badge-pass' : 'badge-fail'}`}>{l.available ? 'available' : 'unavailable'}</span>
                  </p>
                  {!l.available && <p className="reason">Why: {labReason(l) || 'not given'}</p>}
                  <StartAttempt scenario={l.scenario} available={l.available} reason={labReason(l)} />
                </li>
              ))}
            </ul>
          </section>
          <section aria-labelledby="caps-title">
            <h2 id="caps-title">Host capabilities</h2>
            <div className="table-scroll">
              <table className="caps">
                <caption>
                  {p.capabilities.filter((c) => c.available).length} of {p.capabilities.length} available
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Capability</th>
                    <th scope="col">Status</th>
                    <th scope="col">Measured</th>
                  </tr>
                </thead>
                <tbody>
                  {p.capabilities.map((c) => (
                    <tr key={c.id} data-capability={c.id} data-available={c.available ? 'true' : 'false'}>
                      <th scope="row">
                        <code>{c.id}</code>
                      </th>
                      <td>
                        <span className={`badge ${c.available ? 'badge-pass' : 'badge-fail'}`}>{c.available ? 'available' : 'unavailable'}</span>
                      </td>
                      <td>{c.detail}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
        </>
      )}
    </>
  );
}
