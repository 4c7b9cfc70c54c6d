// Home: Judge Mode. Pick a scenario and run its judge cases (bad first, then gold) on fresh
// worlds; the queue position, then each case's progress per property, live over the run's
// event stream (or replayed from the log when the run had already ended), and the verdicts
// with what they mean. No login.
import { useEffect, useRef, useState } from 'react';
import { errorOfUnknown, get, kApi, post } from '../api/client';
import { eventData, openEventStream } from '../api/sse';
import type { ApiErrorBody, JudgeRun, ScenarioSummary } from '../api/types';
import { ErrorBox } from '../components/ErrorBox';
import { GateView, Verdict } from '../components/GateView';
import { useLoad } from '../components/hooks';
import { applyJudgeEvent, type CaseProgress } from '../gate/progress';
import { go } from '../router';

export function JudgePage({ run }: { run?: string }) {
  const scenarios = useLoad(() => get<{ scenarios: ScenarioSummary[] }>('/scenarios'), []);
  const [pick, setPick] = useState('');
  const [error, setError] = useState<ApiErrorBody | null>(null);
  const [busy, setBusy] = useState(false);
  const list = scenarios.data?.scenarios ?? [];

  useEffect(() => {
    if (!pick && list.length > 0) {
      const first = list.find((s) => s.available && s.family.startsWith('incident')) ?? list.find((s) => s.available);
      if (first) setPick(first.id);
    }
  }, [list, pick]);

  const start = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await post<JudgeRun>('/judge', { scenario: pick });
      go(`/judge/${r.run}`);
    } catch (err) {
      setError(errorOfUnknown(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h1 tabIndex={-1}>Judge Mode</h1>
      <p className="lede">
        Judge Mode replays a scenario's two reference fixes as a learner would, each on worlds built afresh: a <em>bad</em> fix
        that makes the symptom go away, then the <em>gold</em> fix. The transfer gate tries each fix on five worlds: the
        broken one, a hidden twin with the same cause elsewhere, a healthy control, the fix applied twice, and the fix undone.
        Only a fix that holds on all five earns a signed receipt.
      </p>
      <form onSubmit={start} className="card" aria-labelledby="judge-pick">
        <fieldset>
          <legend id="judge-pick">Scenario to judge</legend>
          {scenarios.error && <ErrorBox error={scenarios.error} title="Could not list the scenarios" />}
          {list.map((s) => (
            <label key={s.id} className="radio">
              <input type="radio" name="scenario" value={s.id} checked={pick === s.id} disabled={!s.available} onChange={() => setPick(s.id)} />
              <span>
                <strong>{s.title}</strong> <code>{s.id}</code>
                {!s.available && <span className="unavailable"> unavailable{s.reason ? `: ${s.reason}` : ''}</span>}
              </span>
            </label>
          ))}
        </fieldset>
        <button type="submit" className="primary" disabled={!pick || busy}>
          {busy ? 'Queueing…' : 'Run Judge Mode'}
        </button>
        <ErrorBox error={error} title="The run was not queued" />
      </form>
      {run && <RunView key={run} run={run} />}
    </>
  );
}

function RunView({ run }: { run: string }) {
  const [state, setState] = useState<JudgeRun | null>(null);
  const [error, setError] = useState<ApiErrorBody | null>(null);
  const [cases, setCases] = useState<CaseProgress[]>([]);
  const [stream, setStream] = useState('connecting');
  const [mode, setMode] = useState<'live' | 'replay' | null>(null);
  const stateRef = useRef<JudgeRun | null>(null);

  // The run's state (queue position, cases, verdicts, receipts) is polled until it ends: the
  // event stream carries the log's events, the run's own record is read here.
  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout>;
    const poll = async () => {
      try {
        const r = await get<JudgeRun>(`/judge/${run}`);
        if (stop) return;
        stateRef.current = r;
        setState(r);
        setMode((m) => m ?? (r.state === 'done' || r.state === 'failed' ? 'replay' : 'live'));
        if (r.state === 'done' || r.state === 'failed') return;
      } catch (e) {
        if (stop) return;
        setError(errorOfUnknown(e));
        if ((e as { body?: { status?: number } }).body?.status === 404) return;
      }
      timer = setTimeout(poll, 1000);
    };
    void poll();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [run]);

  useEffect(() => {
    const h = openEventStream({
      url: `${kApi}/judge/${run}/events`,
      retryMs: 1000,
      onEvent: (e) => {
        const data = eventData(e);
        if (data === null) return;
        if (e.event === 'judge.run') {
          setState(data as unknown as JudgeRun);
          return;
        }
        setCases((c) => applyJudgeEvent(c, e.event, data, Number(e.id)));
      },
      onStatus: (s, d) => setStream(d ? `${s}: ${d}` : s),
      // the stream ends when the run has ended and all was sent; until then, resume it
      shouldReconnect: () => {
        const s = stateRef.current?.state;
        return s !== 'done' && s !== 'failed';
      },
    });
    return () => h.close();
  }, [run]);

  const finished = state?.state === 'done' || state?.state === 'failed';
  const caseNames = ['bad', 'gold'];
  return (
    <section aria-labelledby="run-title" className="run">
      <h2 id="run-title">
        Run <code>{run}</code> {state && <>of <code>{state.scenario}</code></>}
      </h2>
      {mode && (
        <p className={`source source-${mode}`}>
          {mode === 'live' ? 'Live: events shown as the lab records them.' : 'Replayed from the log: this run had ended when the page opened.'}
        </p>
      )}
      <ErrorBox error={error} title="Could not read the run" />
      <div aria-live="polite" className="run-state" data-state={state?.state ?? ''}>
        {state?.state === 'queued' && (
          <p>
            Queued: {state.position ?? '?'} {state.position === 1 ? 'run' : 'runs'} ahead of it (one runs at a time).
          </p>
        )}
        {state?.state === 'running' && <p>Running case {Math.max(1, state.attempts?.length ?? 1)} of 2…</p>}
        {state?.state === 'done' && <p>Done in {state.seconds?.toFixed(1)} s.</p>}
        {state?.state === 'failed' && <p className="fail-text">The run could not finish: {state.error}</p>}
      </div>
      <p className="stream-status">Event stream: {stream}</p>
      {cases.map((c, i) => {
        const final = state?.cases?.[i];
        const name = final?.case ?? caseNames[i] ?? `case ${i + 1}`;
        return (
          <article key={i} className="card case" data-case={name} aria-labelledby={`case-${i}`}>
            <h3 id={`case-${i}`}>
              Case {i + 1}: {name}
              {final && <> (expected {final.expect})</>}
            </h3>
            <p>Phase: {c.phase.replace('_', ' ')}</p>
            {c.verify.length > 0 && (
              <p>
                Live world checks: {c.verify.filter((v) => v.ok).length} held, {c.verify.filter((v) => !v.ok).length} failed
                {c.verify.some((v) => !v.ok) && <> ({c.verify.filter((v) => !v.ok).map((v) => v.check).join(', ')})</>}
              </p>
            )}
            {c.gate.started && <GateView gate={c.gate} caption={`Transfer gate of the ${name} fix`} />}
            {final && !c.gate.verdict && <Verdict verdict={final.verdict} />}
            {final && (
              <p className="receipt-line">
                {final.receipt_sha256 ? (
                  <a href={`#/receipt/${final.receipt_sha256}`} data-receipt={final.receipt_sha256}>
                    Open the receipt ({final.receipt_sha256.slice(0, 12)}…) and verify it
                  </a>
                ) : (
                  <span data-no-receipt="">No receipt: receipts are issued only for VERIFIED.</span>
                )}
                {final.as_expected !== undefined && <span> The verdict is {final.as_expected ? '' : 'not '}what the scenario expects.</span>}
              </p>
            )}
          </article>
        );
      })}
      {finished && cases.length === 0 && state?.cases?.map((c) => (
        <article key={c.case} className="card case" data-case={c.case}>
          <h3>Case {c.case}</h3>
          <Verdict verdict={c.verdict} />
        </article>
      ))}
    </section>
  );
}
