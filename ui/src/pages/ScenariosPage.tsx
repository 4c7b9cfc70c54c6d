// The loaded scenarios: read a briefing, then start an attempt.
import { useState } from 'react';
import { get } from '../api/client';
import type { Scenario, ScenarioSummary } from '../api/types';
import { ErrorBox } from '../components/ErrorBox';
import { useLoad } from '../components/hooks';
import { StartAttempt } from './start';

export function ScenariosPage() {
  const list = useLoad(() => get<{ scenarios: ScenarioSummary[] }>('/scenarios'), []);
  return (
    <>
      <h1 tabIndex={-1}>Scenarios</h1>
      <p className="lede">
        Each scenario is an incident on worlds of its own. Work one from Observe to Reflect: predict, probe, write your fix
        as an InterventionIR, apply it, verify it, and let the transfer gate try it on fresh worlds.
      </p>
      <ErrorBox error={list.error} title="Could not list the scenarios" />
      <ul className="cards">
        {(list.data?.scenarios ?? []).map((s) => (
          <li key={s.id} className="card" data-scenario={s.id}>
            <h2>{s.title}</h2>
            <p>
              <code>{s.id}</code> · {s.family} · version {s.version}{' '}
              <span className={`badge ${s.available ? 'badge-pass' : 'badge-fail'}`}>{s.available ? 'available' : 'unavailable'}</span>
            </p>
            <Briefing id={s.id} />
            <StartAttempt scenario={s.id} available={s.available} {...(s.reason ? { reason: s.reason } : {})} />
          </li>
        ))}
      </ul>
    </>
  );
}

function Briefing({ id }: { id: string }) {
  const [open, setOpen] = useState(false);
  const sc = useLoad(() => (open ? get<Scenario>(`/scenarios/${id}`) : Promise.resolve(null)), [open, id]);
  return (
    <details onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary>Read the briefing</summary>
      <ErrorBox error={sc.error} />
      {sc.data && (
        <>
          <p className="briefing">{sc.data.briefing}</p>
          <p>
            Probe budget {sc.data.probe_budget}; {sc.data.probes.length} probes and {sc.data.actions.length} actions in its catalog;{' '}
            {sc.data.hypotheses.length} competing hypotheses.
          </p>
        </>
      )}
    </details>
  );
}
