// The receipt viewer: every section in words, a download of the exact file, and verification
// in this page (the Ed25519 signature, the section hashes and the inclusion proofs against the
// signed checkpoint, with @noble) beside the lab's own verification with a replay of its log.
// A receipt file dropped or chosen here is verified the same way: a tampered one shows which
// check failed and why.
import { sha256 } from '@noble/hashes/sha2.js';
import { useEffect, useMemo, useState } from 'react';
import { errorOfUnknown, get, getText, kApi, postRaw } from '../api/client';
import type { ApiErrorBody } from '../api/types';
import { Checks } from '../components/Checks';
import { ErrorBox } from '../components/ErrorBox';
import { Verdict } from '../components/GateView';
import { bytesToHex, utf8 } from '../verify/bytes';
import { parseVerifierKey, type VerifierKey } from '../verify/keys';
import { type Check, type ProofReply, type ReceiptDocument, verifyLatestProofs, verifyReceipt } from '../verify/receipt';

interface ServerVerify {
  offline?: { ok: boolean; failures?: unknown[]; error?: string; verdict?: string };
  replay?: { ok: boolean; failures?: unknown[]; error?: string; verdict?: string };
}

export function ReceiptPage({ sha, attempt }: { sha?: string; attempt?: string }) {
  const [text, setText] = useState<string | null>(null);
  const [source, setSource] = useState('');
  const [loadError, setLoadError] = useState<ApiErrorBody | null>(null);
  const [serverKey, setServerKey] = useState<string | null>(null);
  const [keyChoice, setKeyChoice] = useState<'server' | 'pinned'>('server');
  const [pinned, setPinned] = useState('');
  const [paste, setPaste] = useState('');

  useEffect(() => {
    get<{ verifier_key: string }>('/lab-key').then((k) => setServerKey(k.verifier_key), (e) => setLoadError(errorOfUnknown(e)));
  }, []);
  useEffect(() => {
    setText(null);
    if (!sha && !attempt) return;
    const url = sha ? `${kApi}/receipts/${sha}` : `${kApi}/attempts/${attempt}/receipt`;
    getText(url).then(
      (t) => {
        setText(t);
        setSource(sha ? `the judge run's receipt ${sha}, from the lab` : `the receipt of your attempt ${attempt}, from the lab`);
      },
      (e) => setLoadError(errorOfUnknown(e)),
    );
  }, [sha, attempt]);

  const openFile = async (f: File) => {
    setText(await f.text());
    setSource(`the file ${f.name} (${f.size} bytes)`);
  };

  const keyText = keyChoice === 'server' ? serverKey : pinned.trim();
  const key = useMemo(() => (keyText ? parseVerifierKey(keyText) : null), [keyText]);

  return (
    <>
      <h1 tabIndex={-1}>Receipt</h1>
      <p className="lede">
        A receipt is the lab's signed statement that an intervention was gated and VERIFIED, naming the events that prove
        it. Anyone with the lab's public key can check it without the lab.
      </p>
      <ErrorBox error={loadError} title="Could not read" />
      <div className="card">
        <h2>Which receipt</h2>
        <div
          className="dropzone"
          data-dropzone=""
          onDragOver={(e) => e.preventDefault()}
          onDrop={(e) => {
            e.preventDefault();
            const f = e.dataTransfer.files[0];
            if (f) void openFile(f);
          }}
        >
          <label htmlFor="receipt-file">Drop a receipt file here, or choose one:</label>
          <input id="receipt-file" type="file" accept=".json,application/json" onChange={(e) => { const f = e.target.files?.[0]; if (f) void openFile(f); }} />
        </div>
        <details>
          <summary>Or paste a receipt</summary>
          <label htmlFor="receipt-paste">Receipt (the DSSE envelope, JSON)</label>
          <textarea id="receipt-paste" rows={4} value={paste} onChange={(e) => setPaste(e.target.value)} />
          <button type="button" onClick={() => { setText(paste); setSource('the text you pasted'); }} disabled={!paste.trim()}>Verify the pasted receipt</button>
        </details>
      </div>

      <div className="card">
        <h2>Verify with which key</h2>
        <fieldset>
          <legend>The lab's public key</legend>
          <label className="radio">
            <input type="radio" name="key" checked={keyChoice === 'server'} onChange={() => setKeyChoice('server')} />
            <span>
              The key this lab serves: <code className="wrap">{serverKey ?? '…'}</code>
              <span className="hint"> Checked with the lab's own key, a receipt proves only that this lab signed it.</span>
            </span>
          </label>
          <label className="radio">
            <input type="radio" name="key" checked={keyChoice === 'pinned'} onChange={() => setKeyChoice('pinned')} />
            <span>A key I pinned from elsewhere (its lab.pub line)</span>
          </label>
        </fieldset>
        {keyChoice === 'pinned' && (
          <>
            <label htmlFor="pinned-key">Pinned verifier key</label>
            <input id="pinned-key" className="wide" value={pinned} onChange={(e) => setPinned(e.target.value)} placeholder="aura.lab/…+xxxxxxxx+AQ…" spellCheck={false} />
          </>
        )}
        {key && !key.ok && <p className="field-error" role="alert">That key does not read: {key.error}</p>}
      </div>

      {text !== null && key?.ok && (
        <Verified text={text} source={source} keyOk={key.key} keyIsServer={keyChoice === 'server'} />
      )}
    </>
  );
}

function Verified({ text, source, keyOk, keyIsServer }: { text: string; source: string; keyOk: VerifierKey; keyIsServer: boolean }) {
  const report = useMemo(() => verifyReceipt(text, keyOk), [text, keyOk]);
  const digest = useMemo(() => bytesToHex(sha256(utf8(text))), [text]);
  const [latest, setLatest] = useState<Check[] | null>(null);
  const [latestNote, setLatestNote] = useState('');
  const [server, setServer] = useState<ServerVerify | null>(null);
  const [serverError, setServerError] = useState<ApiErrorBody | null>(null);
  const doc = report.document;

  useEffect(() => {
    setLatest(null);
    setLatestNote('');
    if (!doc) return;
    get<ProofReply>(`/proof/receipts/${digest}`).then(
      (p) => setLatest(verifyLatestProofs(p, doc, keyOk)),
      (e) => setLatestNote(`The lab has no proofs for a receipt with this digest: ${errorOfUnknown(e).message}`),
    );
  }, [digest, doc, keyOk]);
  useEffect(() => {
    setServer(null);
    setServerError(null);
    postRaw<ServerVerify>('/receipts/verify', text).then(setServer, (e) => setServerError(errorOfUnknown(e)));
  }, [text]);

  const download = useMemo(() => URL.createObjectURL(new Blob([text], { type: 'application/json' })), [text]);
  useEffect(() => () => URL.revokeObjectURL(download), [download]);
  const failedField = report.checks.find((c) => !c.ok)?.field;

  return (
    <>
      <section aria-labelledby="verify-title" className="card" data-receipt-ok={report.ok ? 'true' : 'false'}>
        <h2 id="verify-title">Verification</h2>
        <p>
          Verifying {source}; its SHA-256 is <code className="wrap">{digest}</code>.{' '}
          <a href={download} download={`${doc?.attempt ?? 'receipt'}.receipt.json`}>Download the receipt file</a>
        </p>
        <p className={report.ok ? 'ok-text' : 'fail-text'} data-summary="" role="status">
          {report.ok
            ? `Verified in this page: signed by ${keyOk.name}+${keyOk.keyIdHex}, every section hash, the gate and the inclusion proofs hold.${keyIsServer ? ' (With the key this lab serves: this proves the lab signed it; pin the key from elsewhere to prove more.)' : ' (With the key you pinned.)'}`
            : `Does NOT verify: the check ${failedField} failed.`}
        </p>
        <div className="two-col">
          <div>
            <Checks checks={report.checks} caption="In this page (offline: the receipt and the key only)" />
            {latest && <Checks checks={latest} caption="In this page: the lab's proofs against its latest checkpoint" />}
            {latestNote && <p className="hint">{latestNote}</p>}
          </div>
          <div>
            <h3>The lab's verification (with a replay of its log)</h3>
            <ErrorBox error={serverError} title="The lab refused to verify it" />
            {!server && !serverError && <p role="status">Asking the lab…</p>}
            {server && <ServerResult r={server} />}
          </div>
        </div>
        {!doc && report.payloadText === undefined && (
          <p className="hint">Nothing in a receipt whose signature fails is read, so its sections are not shown.</p>
        )}
      </section>
      {doc && <Sections doc={doc} />}
    </>
  );
}

function ServerResult({ r }: { r: ServerVerify }) {
  const part = (name: string, p: ServerVerify['offline']) => (
    <div data-server={name} data-ok={p?.ok ? 'true' : 'false'}>
      <p>
        <strong>{name}</strong>: <span className={`badge ${p?.ok ? 'badge-pass' : 'badge-fail'}`}>{p?.ok ? 'ok' : 'FAIL'}</span>
        {p?.verdict ? ` (verdict ${p.verdict})` : ''}
      </p>
      {p?.error && <p className="fail-text">{p.error}</p>}
      {p?.failures && p.failures.length > 0 && (
        <ul className="fail-text">
          {p.failures.map((f, i) => (
            <li key={i}>{typeof f === 'string' ? f : 'field' in (f as object) ? `${(f as { field: string }).field}: ${(f as { what?: string }).what ?? ''}` : JSON.stringify(f)}</li>
          ))}
        </ul>
      )}
    </div>
  );
  return (
    <>
      {part('offline', r.offline)}
      {part('replay', r.replay)}
    </>
  );
}

function Sections({ doc }: { doc: ReceiptDocument }) {
  const facts = [...doc.facts.before, ...doc.facts.after];
  return (
    <>
      <section className="card" aria-labelledby="sec-verdict">
        <h2 id="sec-verdict">Verdict</h2>
        <Verdict verdict={doc.gate.verdict} recovered={doc.gate.recovered} />
        <div className="table-scroll">
          <table>
            <caption>The five properties, each citing the facts that decided it</caption>
            <thead><tr><th scope="col">Property</th><th scope="col">Status</th><th scope="col">Cited seqs</th></tr></thead>
            <tbody>
              {doc.gate.properties.map((p) => (
                <tr key={p.property}>
                  <th scope="row">{p.property}</th>
                  <td><span className={`badge badge-${p.status}`}>{p.status}</span>{p.reason ? ` ${p.reason}` : ''}</td>
                  <td>{p.cited.join(', ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p>
          Scenario <code>{doc.scenario.id}</code> version {doc.scenario.version}; package digest <code className="wrap">{doc.scenario.package_digest}</code>;
          attempt <code>{doc.attempt}</code>.
        </p>
      </section>
      <section className="card" aria-labelledby="sec-actions">
        <h2 id="sec-actions">Actions</h2>
        <p>IR revision {doc.intervention.revision}, SHA-256 <code className="wrap">{doc.intervention.ir_sha256}</code></p>
        <h3>Applied</h3>
        <ol className="json-list">{doc.intervention.actions.map((a, i) => <li key={i}><code className="wrap">{JSON.stringify(a)}</code></li>)}</ol>
        <h3>Rollback</h3>
        <ol className="json-list">{doc.rollback.actions.map((a, i) => <li key={i}><code className="wrap">{JSON.stringify(a)}</code></li>)}</ol>
        <p>Rollback facts: seqs {doc.rollback.facts.join(', ')}</p>
      </section>
      <section className="card" aria-labelledby="sec-facts">
        <h2 id="sec-facts">Facts ({facts.length})</h2>
        <div className="table-scroll">
          <table className="facts">
            <caption>The supervisor's checks on the gate's worlds, with their log seqs</caption>
            <thead><tr><th scope="col">Seq</th><th scope="col">Property</th><th scope="col">World</th><th scope="col">Stage</th><th scope="col">Check</th><th scope="col">Result</th></tr></thead>
            <tbody>
              {facts.map((f) => (
                <tr key={f.seq}>
                  <td>{f.seq}</td>
                  <td>{f.property}</td>
                  <td>{f.world}</td>
                  <td>{f.stage}</td>
                  <th scope="row"><code>{f.check}</code>{f.value ? <span className="hint"> {f.value.slice(0, 16)}…</span> : null}</th>
                  <td><span className={`badge ${f.ok ? 'badge-pass' : 'badge-fail'}`}>{f.ok ? 'held' : 'failed'}</span></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section className="card" aria-labelledby="sec-env">
        <h2 id="sec-env">Environment</h2>
        <dl className="kv">
          <dt>Kernel</dt><dd>{doc.environment.kernel_release}</dd>
          <dt>Lab build</dt><dd><code className="wrap">{doc.environment.lab_build_digest}</code></dd>
          <dt>Sandbox profile</dt><dd><code className="wrap">{doc.environment.sandbox_profile_digest}</code></dd>
          <dt>Capabilities</dt><dd>snapshot <code className="wrap">{doc.environment.capability_snapshot_digest}</code> (seq {doc.environment.capabilities_seq})</dd>
          <dt>Worlds built</dt><dd>seqs {doc.environment.worlds.join(', ')}</dd>
        </dl>
        <div className="table-scroll">
          <table>
            <caption>Programs the worlds ran</caption>
            <thead><tr><th scope="col">Path</th><th scope="col">SHA-256</th></tr></thead>
            <tbody>
              {Object.entries(doc.environment.binaries).map(([p, h]) => (
                <tr key={p}><th scope="row"><code>{p}</code></th><td><code className="wrap">{h}</code></td></tr>
              ))}
            </tbody>
          </table>
        </div>
        <div className="table-scroll">
          <table>
            <caption>World images</caption>
            <thead><tr><th scope="col">World</th><th scope="col">Layers</th><th scope="col">Image SHA-256</th></tr></thead>
            <tbody>
              {doc.environment.world_images.map((w) => (
                <tr key={w.world}><th scope="row">{w.world}</th><td>{w.layers.join(', ')}</td><td><code className="wrap">{w.sha256}</code></td></tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section className="card" aria-labelledby="sec-evidence">
        <h2 id="sec-evidence">Evidence</h2>
        <div className="table-scroll">
          <table>
            <caption>What the fix cited, as the probes unlocked it</caption>
            <thead><tr><th scope="col">Id</th><th scope="col">Kind</th><th scope="col">Bytes</th><th scope="col">Seq</th><th scope="col">SHA-256</th></tr></thead>
            <tbody>
              {doc.evidence.map((e) => (
                <tr key={e.id}><th scope="row">{e.id}</th><td>{e.kind}</td><td>{e.bytes}</td><td>{e.seq}</td><td><code className="wrap">{e.sha256}</code></td></tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section className="card" aria-labelledby="sec-model">
        <h2 id="sec-model">Model assistance</h2>
        {doc.model_assistance.used ? (
          <ul>
            {doc.model_assistance.calls.map((c) => (
              <li key={c.call}>call {c.call}: model {c.model}, request <code>{c.request_sha256.slice(0, 12)}…</code>, response <code>{c.response_sha256.slice(0, 12)}…</code></li>
            ))}
          </ul>
        ) : (
          <p>None: no model helped with this attempt.</p>
        )}
      </section>
      <section className="card" aria-labelledby="sec-log">
        <h2 id="sec-log">Events and checkpoint</h2>
        <p>
          {doc.events.count} events of <code>{doc.events.stream}</code>, seqs {doc.events.first_seq} to {doc.events.last_seq}, each proven
          in the log's Merkle tree at size {doc.checkpoint.size}.
        </p>
        <pre className="note">{doc.checkpoint.note}</pre>
      </section>
    </>
  );
}
