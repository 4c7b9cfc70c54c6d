// One learner's attempt, phase by phase: the rail shows where it is and only that phase's
// controls are enabled; the next step the lab names is always shown. The attempt's events
// arrive over its event stream (resumed with Last-Event-ID), live or replayed from the log.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { errorOfUnknown, get, kApi, post } from '../api/client';
import { eventData, openEventStream } from '../api/sse';
import type { AckResult, ApiErrorBody, ApplyResult, AttemptState, Evidence, ProbeResult, Scenario } from '../api/types';
import { EvidenceList } from '../attempt/EvidenceList';
import { describe as describeEvent, fold, type LoggedEvent } from '../attempt/events';
import { IrPanel } from '../attempt/IrPanel';
import { CatalogPanel } from '../attempt/CatalogPanel';
import { ProbePicker } from '../attempt/ProbePicker';
import { ErrorBox } from '../components/ErrorBox';
import { GateView } from '../components/GateView';
import { PhaseRail } from '../components/PhaseRail';
import { Terminal } from '../components/Terminal';

const kRefresh = new Set([
  'attempt.phase', 'probe.completed', 'intervention.submitted', 'script.authorized', 'apply.completed', 'ack.readback',
  'attempt.acknowledged', 'attempt.verified', 'gate.verdict', 'receipt.issued', 'world.reset', 'attempt.reflected', 'attempt.abandoned',
]);

export function AttemptPage({ attempt }: { attempt: string }) {
  const [state, setState] = useState<AttemptState | null>(null);
  const [loadError, setLoadError] = useState<ApiErrorBody | null>(null);
  const [scenario, setScenario] = useState<Scenario | null>(null);
  const [events, setEvents] = useState<LoggedEvent[]>([]);
  const [evidence, setEvidence] = useState<Evidence[]>([]);
  const [error, setError] = useState<ApiErrorBody | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [stream, setStream] = useState('connecting');
  const [lastProbe, setLastProbe] = useState<string | undefined>();
  const [applyLines, setApplyLines] = useState<string[] | null>(null);
  const [ackReply, setAckReply] = useState<AckResult | null>(null);
  const openedAt = useRef<number | null>(null);
  const panel = useRef<HTMLElement>(null);
  const phaseRef = useRef<string>('');

  const refresh = useCallback(async () => {
    try {
      const s = await get<AttemptState>(`/attempts/${attempt}`);
      phaseRef.current = s.phase;
      setState(s);
      setLoadError(null);
      if (openedAt.current === null) openedAt.current = s.last_seq ?? 0;
      if (s.evidence.length > 0) setEvidence((await get<{ evidence: Evidence[] }>(`/attempts/${attempt}/evidence`)).evidence);
      return s;
    } catch (e) {
      setLoadError(errorOfUnknown(e));
      return null;
    }
  }, [attempt]);

  useEffect(() => {
    void refresh().then(async (s) => {
      if (s) setScenario(await get<Scenario>(`/scenarios/${s.scenario}`));
    });
  }, [refresh]);

  // The event stream: every event from the start (the log's history, then live ones), resumed
  // after the last seq whenever it ends while the attempt is not done.
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const h = openEventStream({
      url: `${kApi}/attempts/${attempt}/events`,
      retryMs: 1000,
      onEvent: (e) => {
        const data = eventData(e);
        if (data === null) return;
        const seq = Number(e.id);
        const live = openedAt.current !== null && seq > openedAt.current;
        setEvents((old) => [...old, { seq, type: e.event, data, live }]);
        if (kRefresh.has(e.event)) {
          clearTimeout(timer);
          timer = setTimeout(() => void refresh(), 150);
        }
      },
      onStatus: (s, d) => setStream(d ? `${s}: ${d}` : s),
      shouldReconnect: () => phaseRef.current !== 'done',
    });
    return () => {
      clearTimeout(timer);
      h.close();
    };
  }, [attempt, refresh]);

  const folded = useMemo(() => fold(events), [events]);

  const command = async <T,>(name: string, body: unknown = {}): Promise<T | null> => {
    setBusy(name);
    setError(null);
    try {
      const r = await post<T>(`/attempts/${attempt}/${name}`, body);
      await refresh();
      return r;
    } catch (e) {
      setError(errorOfUnknown(e));
      await refresh();
      return null;
    } finally {
      setBusy(null);
    }
  };

  if (loadError && !state) {
    return (
      <>
        <h1 tabIndex={-1}>Attempt <code>{attempt}</code></h1>
        <ErrorBox error={loadError} title="This attempt cannot be opened here" />
        {loadError.status === 401 && (
          <p>
            This browser holds no token for this attempt: the token is a cookie the lab set in the browser that started it,
            for that browser session. <a href="#/scenarios">Start a new attempt</a>.
          </p>
        )}
      </>
    );
  }
  if (!state || !scenario) {
    return (
      <>
        <h1 tabIndex={-1}>Attempt <code>{attempt}</code></h1>
        <p role="status">Loading the attempt…</p>
      </>
    );
  }

  const phase = state.phase;
  const remaining = state.probe_budget - state.spent;
  const canReset = ['inspect', 'contract', 'apply', 'ack', 'verify', 'transfer_gate'].includes(phase);
  const gateRunning = folded.gate.started && !folded.gate.verdict && phase === 'transfer_gate';
  return (
    <>
      <h1 tabIndex={-1}>
        {scenario.title}
      </h1>
      <p className="meta">
        Attempt <code>{state.attempt}</code> of <code>{state.scenario}</code> by {state.learner} ({state.mode}) · probe budget{' '}
        {state.spent} of {state.probe_budget} spent
        {state.verdict && <> · verdict <strong>{state.verdict}</strong></>}
      </p>
      <div className="next" aria-live="polite" data-next="">
        <strong>Next step:</strong> {state.next}
      </div>
      <PhaseRail phase={phase} onSelect={() => panel.current?.focus()} />
      <ErrorBox error={error} />
      {busy && <p role="status" className="busy">Working: {busy}…</p>}

      <section ref={panel} tabIndex={-1} aria-labelledby="phase-title" className="phase-panel" data-phase-panel={phase}>
        <h2 id="phase-title">{phaseTitle(phase)}</h2>

        {(phase === 'observe' || phase === 'predict') && (
          <>
            <Briefing scenario={scenario} />
            <PredictForm scenario={scenario} busy={busy !== null} onPredict={(b) => void command('predict', b)} />
          </>
        )}

        {phase === 'inspect' && (
          <>
            <p>
              You predicted <strong>{state.hypothesis}</strong>. Probe the system to test it; each probe costs budget and
              unlocks evidence your fix can cite.
            </p>
            <ProbePicker
              probes={scenario.probes}
              terms={scenario.targets}
              remaining={remaining}
              busy={busy !== null}
              onRun={(call, params) => {
                void command<ProbeResult>('probe', { call, params }).then((r) => r && setLastProbe(r.evidence));
              }}
            />
          </>
        )}

        {phase === 'contract' && (
          <>
            <p>
              Revision {state.ir_revision} of your IR is submitted. Apply it to your live world, or submit a revision first.
            </p>
            {state.scripts_pending.length > 0 && (
              <div className="card">
                <h3>Scripts waiting for your authorisation</h3>
                <ul>
                  {state.scripts_pending.map((sha) => (
                    <li key={sha}>
                      <code>{sha}</code>{' '}
                      <button type="button" onClick={() => void command('authorize', { sha256: sha })} disabled={busy !== null}>
                        Authorise this script
                      </button>
                    </li>
                  ))}
                </ul>
              </div>
            )}
            <button
              type="button"
              className="primary"
              disabled={busy !== null || state.scripts_pending.length > 0}
              onClick={() => void command<ApplyResult>('apply').then((r) => r && setApplyLines(r.lines ?? null))}
            >
              Apply revision {state.ir_revision} to the live world
            </button>
          </>
        )}

        {(phase === 'apply' || phase === 'ack') && (
          <>
            <ApplyReport lines={applyLines} folded={folded} />
            <Readback reply={ackReply} folded={folded} />
            <AckForm busy={busy !== null} seq={ackReply?.readback_seq ?? folded.readback?.seq} onAck={(note) => void command<AckResult>('ack', note ? { note } : {}).then((r) => r && setAckReply(r))} />
          </>
        )}

        {phase === 'verify' && (
          <>
            <Readback reply={ackReply} folded={folded} />
            <p>Run the primary's checks on your live world: the postconditions and invariants of this scenario.</p>
            <button type="button" className="primary" disabled={busy !== null} onClick={() => void command('verify')}>
              Verify the live world
            </button>
          </>
        )}

        {phase === 'transfer_gate' && (
          <>
            <Facts folded={folded} />
            <p>
              The gate builds fresh worlds and tries your fix on each: the primary, a hidden twin with the same cause
              elsewhere, a healthy control, the fix applied twice, and the fix undone by your rollback.
            </p>
            <button type="button" className="primary" disabled={busy !== null || gateRunning} onClick={() => void command('gate')}>
              {gateRunning ? 'The gate is running…' : 'Run the transfer gate'}
            </button>
          </>
        )}

        {phase === 'receipt' && (
          <>
            <p>The gate verified your fix. The lab signs a receipt naming the events that prove it.</p>
            <button type="button" className="primary" disabled={busy !== null} onClick={() => void command('receipt')}>
              Issue the receipt
            </button>
          </>
        )}

        {phase === 'reflect' && (
          <>
            {state.receipt_sha256 && <ReceiptLink attempt={attempt} sha={state.receipt_sha256} />}
            <ReflectForm busy={busy !== null} onReflect={(text) => void command('reflect', { text })} />
          </>
        )}

        {phase === 'done' && (
          <>
            <p>This attempt is done{state.verdict ? ` with the verdict ${state.verdict}` : ''}.</p>
            {state.receipt_sha256 && <ReceiptLink attempt={attempt} sha={state.receipt_sha256} />}
            <p>
              <a href="#/scenarios">Start another attempt</a>
            </p>
          </>
        )}
      </section>

      {folded.gate.started && (
        <section aria-labelledby="gate-title" className="gate-section">
          <h2 id="gate-title">Transfer gate</h2>
          <p className={`source source-${events.some((e) => e.live && e.type.startsWith('gate.')) ? 'live' : 'replay'}`}>
            {events.some((e) => e.live && e.type.startsWith('gate.')) ? 'Live: as the gate runs.' : 'Replayed from the log.'}
          </p>
          <GateView gate={folded.gate} caption="Your fix on fresh worlds" />
        </section>
      )}

      {(phase === 'inspect' || phase === 'contract') && (
        <IrPanel
          attempt={attempt}
          scenario={scenario}
          hypothesis={state.hypothesis}
          evidence={state.evidence}
          revision={state.ir_revision}
          enabled
          onSubmitted={() => void refresh()}
        />
      )}

      {phase !== 'observe' && phase !== 'predict' && (
        <section aria-labelledby="evidence-title">
          <h2 id="evidence-title">Evidence ({evidence.length})</h2>
          <EvidenceList attempt={attempt} items={evidence} {...(lastProbe ? { openId: lastProbe } : {})} />
        </section>
      )}

      {phase !== 'observe' && phase !== 'predict' && (
        <details className="briefing-again">
          <summary>The briefing and the hypotheses</summary>
          <Briefing scenario={scenario} />
        </details>
      )}
      {!(phase === 'inspect' || phase === 'contract') && <CatalogPanel scenario={scenario} />}

      <section aria-labelledby="manage-title" className="manage">
        <h2 id="manage-title">Reset or abandon</h2>
        <ResetAbandon canReset={canReset} canAbandon={phase !== 'done'} busy={busy !== null} onReset={(reason) => void command('reset', { reason })} onAbandon={(reason) => void command('abandon', { reason })} />
      </section>

      <details className="event-log">
        <summary>Event log ({events.length}; stream {stream})</summary>
        <ol>
          {events.map((e) => (
            <li key={e.seq}>
              <span className="seq">{e.seq}</span> <span className={e.live ? 'tag-live' : 'tag-replay'}>{e.live ? 'live' : 'replayed'}</span> {describeEvent(e)}
            </li>
          ))}
        </ol>
      </details>
    </>
  );
}

function phaseTitle(p: string): string {
  return ({
    observe: 'Observe: read the briefing, then predict',
    predict: 'Predict',
    inspect: 'Inspect: probe, then write your fix',
    contract: 'Contract: your fix is submitted',
    apply: 'Apply',
    ack: 'ACK: confirm what the apply did',
    verify: 'Verify: the live world\'s checks',
    transfer_gate: 'TransferGate: your fix on fresh worlds',
    receipt: 'Receipt',
    reflect: 'Reflect',
    done: 'Done',
  } as Record<string, string>)[p] ?? p;
}

function Briefing({ scenario }: { scenario: Scenario }) {
  return (
    <div className="card">
      <h3>Briefing</h3>
      <p className="briefing">{scenario.briefing}</p>
      <h3>Competing hypotheses</h3>
      <ul>
        {scenario.hypotheses.map((h) => (
          <li key={h.id}>
            <code>{h.id}</code>: {h.text}
          </li>
        ))}
      </ul>
    </div>
  );
}

function PredictForm({ scenario, busy, onPredict }: { scenario: Scenario; busy: boolean; onPredict: (b: { hypothesis: string; expect: string; confidence?: number }) => void }) {
  const [hypothesis, setHypothesis] = useState('');
  const [expect, setExpect] = useState('');
  const [confidence, setConfidence] = useState('50');
  const [tried, setTried] = useState(false);
  const confBad = !/^(100|[1-9]?[0-9])$/.test(confidence);
  const problems = [!hypothesis && 'pick a hypothesis', !expect.trim() && 'say what you expect a probe to show', confBad && 'confidence is a whole number from 0 to 100'].filter(Boolean) as string[];
  return (
    <form
      className="card"
      onSubmit={(e) => {
        e.preventDefault();
        setTried(true);
        if (problems.length === 0) onPredict({ hypothesis, expect: expect.trim(), confidence: Number(confidence) });
      }}
      noValidate
    >
      <fieldset>
        <legend>Which hypothesis do you believe?</legend>
        {scenario.hypotheses.map((h) => (
          <label key={h.id} className="radio">
            <input type="radio" name="hypothesis" value={h.id} checked={hypothesis === h.id} onChange={() => setHypothesis(h.id)} />
            <span>
              <code>{h.id}</code>: {h.text}
            </span>
          </label>
        ))}
      </fieldset>
      <label htmlFor="expect">What do you expect a probe to show?</label>
      <textarea id="expect" value={expect} onChange={(e) => setExpect(e.target.value)} rows={3} maxLength={4096} />
      <label htmlFor="confidence">Confidence (0 to 100)</label>
      <input id="confidence" inputMode="numeric" value={confidence} onChange={(e) => setConfidence(e.target.value)} aria-invalid={confBad} />
      {tried && problems.length > 0 && (
        <ul className="field-error" role="alert">
          {problems.map((p) => <li key={p}>{p}</li>)}
        </ul>
      )}
      <button type="submit" className="primary" disabled={busy}>Record my prediction</button>
    </form>
  );
}

function ApplyReport({ lines, folded }: { lines: string[] | null; folded: ReturnType<typeof fold> }) {
  const text = lines
    ? lines.join('\n')
    : folded.actions.map((a) => `action ${a.index} ${a.call ?? a.script_sha256 ?? ''}: exit ${a.exit_code}${a.error ? ` (${a.error})` : ''}`).join('\n');
  return (
    <div>
      {folded.applied && (
        <p>
          The apply ran {folded.applied.actions} actions: {folded.applied.failed} failed{folded.applied.aborted ? '; the host stopped it (aborted)' : ''}.
        </p>
      )}
      {text && <Terminal text={text} label="What the apply did" />}
    </div>
  );
}

// The readback above is what is acknowledged: apply ended with it. Before recording the
// acknowledgement the supervisor reads the live world back once more; if it no longer holds, or
// is not what was shown, the fresh one is recorded and shown instead, and nothing is acknowledged.
function AckForm({ busy, seq, onAck }: { busy: boolean; seq?: number; onAck: (note: string) => void }) {
  const [note, setNote] = useState('');
  return (
    <form className="card" onSubmit={(e) => { e.preventDefault(); onAck(note); }}>
      <p>
        {seq !== undefined
          ? <>Above is what the supervisor read back, on your live world, of what each action left (recorded at seq {seq}), compared with what the action asked for. Acknowledge it when it is what you meant.</>
          : <>The supervisor reads back, on your live world, what each action left, and compares it with what the action asked for.</>}
        {' '}The world is read back once more before your acknowledgement is recorded: if it changed, you are shown the new readback instead.
      </p>
      <label htmlFor="ack-note">A note (optional)</label>
      <input id="ack-note" value={note} onChange={(e) => setNote(e.target.value)} maxLength={4096} />
      <button type="submit" className="primary" disabled={busy}>{seq !== undefined ? 'Acknowledge this readback' : 'Read back and acknowledge'}</button>
    </form>
  );
}

function Readback({ reply, folded }: { reply: AckResult | null; folded: ReturnType<typeof fold> }) {
  const rb = reply?.lines ? { seq: reply.readback_seq, as_requested: reply.as_requested, actions: reply.lines } : folded.readback;
  if (!rb) return null;
  return (
    <div className="card readback" data-as-requested={rb.as_requested ? 'true' : 'false'}>
      <h3>The readback{rb.seq !== undefined ? ` (seq ${rb.seq})` : ''}: {rb.as_requested ? 'as requested' : 'not as requested'}</h3>
      {!rb.as_requested && <p className="fail-text">Something differs from what your actions asked for. Reset the world to start the apply again.</p>}
      {rb.actions.map((a) => (
        <div key={a.index}>
          <p>
            Action {a.index}: <code>{typeof a.call === 'string' ? a.call : a.call ? JSON.stringify(a.call) : a.script_sha256}</code>
            {!a.typed && ' (nothing to compare)'}
          </p>
          {a.observed && <Terminal text={a.observed} label={`Read back for action ${a.index}`} maxRows={8} />}
          {a.differences.length > 0 && (
            <ul className="fail-text">
              {a.differences.map((d) => <li key={d}>{d}</li>)}
            </ul>
          )}
        </div>
      ))}
    </div>
  );
}

function Facts({ folded }: { folded: ReturnType<typeof fold> }) {
  if (folded.facts.length === 0) return null;
  return (
    <div className="table-scroll">
      <table className="facts">
        <caption>Your live world's checks (verify)</caption>
        <thead>
          <tr><th scope="col">Seq</th><th scope="col">Check</th><th scope="col">Kind</th><th scope="col">Result</th><th scope="col">Observed</th></tr>
        </thead>
        <tbody>
          {folded.facts.map((f) => (
            <tr key={f.seq} data-check={f.check} data-ok={f.ok ? 'true' : 'false'}>
              <td>{f.seq}</td>
              <th scope="row"><code>{f.check}</code></th>
              <td>{f.kind}</td>
              <td><span className={`badge ${f.ok ? 'badge-pass' : 'badge-fail'}`}>{f.ok ? 'held' : 'failed'}</span></td>
              <td className="observed">{f.observed}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ReceiptLink({ attempt, sha }: { attempt: string; sha: string }) {
  return (
    <p className="receipt-line">
      <a href={`#/receipt/attempt/${attempt}`} data-receipt={sha}>
        Open your receipt ({sha.slice(0, 12)}…) and verify it
      </a>
    </p>
  );
}

function ReflectForm({ busy, onReflect }: { busy: boolean; onReflect: (t: string) => void }) {
  const [text, setText] = useState('');
  return (
    <form className="card" onSubmit={(e) => { e.preventDefault(); if (text.trim()) onReflect(text.trim()); }}>
      <label htmlFor="reflection">What did you learn? What would you check first next time?</label>
      <textarea id="reflection" rows={4} value={text} onChange={(e) => setText(e.target.value)} maxLength={4096} />
      <button type="submit" className="primary" disabled={busy || !text.trim()}>Record my reflection</button>
    </form>
  );
}

function ResetAbandon({ canReset, canAbandon, busy, onReset, onAbandon }: {
  canReset: boolean;
  canAbandon: boolean;
  busy: boolean;
  onReset: (reason: string) => void;
  onAbandon: (reason: string) => void;
}) {
  const [reason, setReason] = useState('');
  const [confirm, setConfirm] = useState(false);
  return (
    <div className="card">
      <p className="hint">
        Reset rebuilds your live world from the package (from Inspect to TransferGate, before a verdict); your IR is kept
        but must be applied again. Abandon ends the attempt.
      </p>
      <label htmlFor="manage-reason">Reason</label>
      <input id="manage-reason" value={reason} onChange={(e) => setReason(e.target.value)} maxLength={4096} />
      <div className="row">
        <button type="button" disabled={busy || !canReset} onClick={() => onReset(reason)}>Reset the live world</button>
        {!confirm ? (
          <button type="button" disabled={busy || !canAbandon || !reason.trim()} onClick={() => setConfirm(true)}>Abandon…</button>
        ) : (
          <>
            <button type="button" className="danger" disabled={busy} onClick={() => { setConfirm(false); onAbandon(reason); }}>Yes, abandon this attempt</button>
            <button type="button" onClick={() => setConfirm(false)}>Keep going</button>
          </>
        )}
      </div>
      {!reason.trim() && canAbandon && <p className="hint">Abandoning needs a reason.</p>}
    </div>
  );
}
