// Proof & evaluation: the log's head, its latest signed checkpoint (opened here with the lab's
// key), the last verification of the whole chain and when, how far the projections lag, and
// the front's and daemon's metrics, refreshed live.
import { useMemo } from 'react';
import { get, getText } from '../api/client';
import type { Health, Proof } from '../api/types';
import { ErrorBox } from '../components/ErrorBox';
import { useLoad } from '../components/hooks';
import { parseVerifierKey } from '../verify/keys';
import { openCheckpoint, rootHex } from '../verify/note';
import { parseMetrics } from './metrics';

export function ProofPage() {
  const proof = useLoad(() => get<Proof>('/proof'), [], 5000);
  const health = useLoad(() => get<Health>('/health'), [], 5000);
  const key = useLoad(() => get<{ verifier_key: string }>('/lab-key'), []);
  const metrics = useLoad(() => getText('/metrics'), [], 5000);
  const p = proof.data;
  const opened = useMemo(() => {
    if (!p?.checkpoint || !key.data) return null;
    const k = parseVerifierKey(key.data.verifier_key);
    if (!k.ok) return { ok: false as const, error: k.error };
    return openCheckpoint(p.checkpoint.note, k.key);
  }, [p, key.data]);
  const series = useMemo(() => (metrics.data ? parseMetrics(metrics.data) : []), [metrics.data]);
  const pick = (name: string) => series.filter((s) => s.name === name);
  const byRoute = pick('aura_front_requests_total');
  const gauges = series.filter((s) => !s.labels && !s.name.endsWith('_sum') && !s.name.endsWith('_count'));

  return (
    <>
      <h1 tabIndex={-1}>Proof &amp; evaluation</h1>
      <p className="source source-live" aria-live="polite">
        Live: read every 5 s{proof.at ? `; last at ${proof.at.toLocaleTimeString()}` : ''}.
      </p>
      <ErrorBox error={proof.error ?? health.error} title="Could not read" />
      {p && (
        <div className="two-col">
          <section className="card" aria-labelledby="log-title">
            <h2 id="log-title">The event log</h2>
            <dl className="kv">
              <dt>Head</dt><dd data-head-seq={p.head.seq}>seq {p.head.seq}</dd>
              <dt>Head hash</dt><dd><code className="wrap">{p.head.hash}</code></dd>
              <dt>Projection lag</dt><dd>{p.projection_lag} {p.projection_lag === 1 ? 'event' : 'events'} behind the head</dd>
              <dt>Daemon</dt><dd>{health.data ? `up since ${health.data.daemon?.started_at ?? '?'} (pid ${health.data.daemon?.pid ?? '?'})` : '…'}</dd>
            </dl>
            <h3>Last verification of the whole chain</h3>
            {p.last_verify ? (
              <p data-last-verify={p.last_verify.ok ? 'ok' : 'fail'}>
                <span className={`badge ${p.last_verify.ok ? 'badge-pass' : 'badge-fail'}`}>{p.last_verify.ok ? 'held' : 'FAILED'}</span> at{' '}
                {p.last_verify.at} over {p.last_verify.events} events: {p.last_verify.detail}
              </p>
            ) : (
              <p>Not run yet.</p>
            )}
          </section>
          <section className="card" aria-labelledby="cp-title">
            <h2 id="cp-title">Latest signed checkpoint</h2>
            {p.checkpoint ? (
              <>
                <pre className="note">{p.checkpoint.note}</pre>
                {opened?.ok ? (
                  <p className="ok-text">
                    Opened in this page with the lab's key: {opened.checkpoint.origin}, {opened.checkpoint.size} events, root{' '}
                    <code className="wrap">{rootHex(opened.checkpoint)}</code>.
                  </p>
                ) : opened ? (
                  <p className="fail-text">The checkpoint does not open with the lab's key: {opened.error}</p>
                ) : null}
              </>
            ) : (
              <p>No checkpoint yet: one is signed every 1,000 events, when a receipt is issued, and on demand.</p>
            )}
          </section>
        </div>
      )}
      <section className="card" aria-labelledby="metrics-title">
        <h2 id="metrics-title">Live metrics</h2>
        <ErrorBox error={metrics.error} title="Could not read /metrics" />
        <dl className="kv">
          {gauges.map((g) => (
            <div key={g.name} className="kv-row">
              <dt><code>{g.name}</code></dt>
              <dd>{g.value}</dd>
            </div>
          ))}
        </dl>
        <div className="table-scroll">
          <table>
            <caption>Requests by route and status (since the front started)</caption>
            <thead><tr><th scope="col">Route</th><th scope="col">Status</th><th scope="col">Count</th></tr></thead>
            <tbody>
              {byRoute.map((s, i) => (
                <tr key={i}><th scope="row"><code>{s.labels?.route}</code></th><td>{s.labels?.status}</td><td>{s.value}</td></tr>
              ))}
            </tbody>
          </table>
        </div>
        <details>
          <summary>Every series ({series.length})</summary>
          <pre className="metrics-raw">{metrics.data}</pre>
        </details>
      </section>
    </>
  );
}
