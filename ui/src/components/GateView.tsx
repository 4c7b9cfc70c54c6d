// The transfer gate, property by property: status, the world it ran on and the check that
// decided it, with a timeline of every check (ECharts) beside the table.
import { type GateProgress, decidingCheck, findingText, kPropertyQuestion, kVerdictMeaning } from '../gate/progress';
import { GateChart } from './GateChart';

const kStatusText: Record<string, string> = {
  waiting: 'waiting', running: 'running…', pass: 'pass', fail: 'fail', not_run: 'not run',
};

export function GateTable({ gate, caption }: { gate: GateProgress; caption: string }) {
  return (
    <div className="table-scroll">
      <table className="gate-table">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Property</th>
            <th scope="col">Status</th>
            <th scope="col">World</th>
            <th scope="col">Deciding check</th>
          </tr>
        </thead>
        <tbody>
          {gate.properties.map((p) => (
            <tr key={p.property} data-property={p.property} data-status={p.status}>
              <th scope="row">
                {p.property}
                <span className="question">{kPropertyQuestion[p.property]}</span>
              </th>
              <td>
                <span className={`badge badge-${p.status}`}>{kStatusText[p.status]}</span>
              </td>
              <td>{p.world ?? (p.status === 'waiting' ? '–' : 'not shown to learners')}</td>
              <td>
                {decidingCheck(p) || '–'}
                {p.finding && <p className="finding" data-finding={p.property}>{findingText(p.finding)}</p>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Verdict({ verdict, recovered }: { verdict: string; recovered?: boolean }) {
  return (
    <div className={`verdict verdict-${verdict}`} data-verdict={verdict}>
      <p className="verdict-name">
        Verdict: <strong>{verdict}</strong>
        {recovered !== undefined && <span> (primary {recovered ? 'recovered' : 'not recovered'})</span>}
      </p>
      <p>{kVerdictMeaning[verdict] ?? ''}</p>
    </div>
  );
}

export function GateView({ gate, caption }: { gate: GateProgress; caption: string }) {
  return (
    <div className="gate-view">
      <GateTable gate={gate} caption={caption} />
      {gate.properties.some((p) => p.facts.length > 0) && <GateChart gate={gate} />}
      {gate.verdict && <Verdict verdict={gate.verdict} {...(gate.recovered !== undefined ? { recovered: gate.recovered } : {})} />}
    </div>
  );
}
