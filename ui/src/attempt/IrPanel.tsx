// Writing the fix: the InterventionIR in the editor, checked by the lab without submitting
// (validate) and then submitted. Refusals are listed with their JSON path and marked in the
// editor at that path.
import { useEffect, useMemo, useRef, useState } from 'react';
import { ApiError, errorOfUnknown, postRaw } from '../api/client';
import type { ApiErrorBody, CallSpec, Scenario, ValidationResult } from '../api/types';
import { skeleton } from '../catalog/params';
import { ErrorBox } from '../components/ErrorBox';
import { IrEditor, type IrEditorHandle, type ServerError } from '../components/IrEditor';
import { pathOfMessage, syntaxProblem } from '../ir/json_path';
import { addAction, addCheck, type Edit, pretty, startingIr } from '../ir/template';
import { CatalogPanel } from './CatalogPanel';

// The IR text is the learner's work: kept for this browser session, per attempt, so a reload
// does not lose it. It is no secret (the lab stores it as the attempt's evidence anyway).
const storeKey = (attempt: string): string => `aura-ir-${attempt}`;

export function IrPanel({ attempt, scenario, hypothesis, evidence, revision, enabled, onSubmitted }: {
  attempt: string;
  scenario: Scenario;
  hypothesis: string | undefined;
  evidence: string[];
  revision: number | undefined;
  enabled: boolean;
  onSubmitted: () => void;
}) {
  const [text, setText] = useState(() => sessionStorage.getItem(storeKey(attempt)) ?? startingIr(hypothesis, evidence));
  const [errors, setErrors] = useState<ServerError[]>([]);
  const [checked, setChecked] = useState<'ok' | null>(null);
  const [refusal, setRefusal] = useState<ApiErrorBody | null>(null);
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const editor = useRef<IrEditorHandle>(null);
  const syntax = useMemo(() => syntaxProblem(text), [text]);

  useEffect(() => {
    sessionStorage.setItem(storeKey(attempt), text);
  }, [attempt, text]);

  const edit = (r: Edit) => {
    if (r.ok) {
      editor.current?.setText(r.text);
      setNote('');
    } else setNote(r.error);
  };
  const onAddAction = (c: CallSpec, where: 'actions' | 'rollback') => edit(addAction(text, skeleton(c, scenario.targets), where));
  const onAddCheck = (id: string, kind: 'postcondition' | 'invariant') => edit(addCheck(text, id, kind));
  const refreshEvidence = () => {
    try {
      const d = JSON.parse(text) as Record<string, unknown>;
      d.evidence = evidence;
      edit({ ok: true, text: pretty(d) });
    } catch {
      setNote('the IR is not valid JSON yet: fix the marked problem first');
    }
  };

  // A refusal of the whole request (400 from the front: the IR's shape) or a validation result.
  const takeRefusal = (e: unknown) => {
    const body = errorOfUnknown(e);
    const path = body.path ?? pathOfMessage(body.message);
    const message = path && body.message.startsWith(`${path}: `) ? body.message.slice(path.length + 2) : body.message;
    if (e instanceof ApiError && path) {
      setErrors([{ path, message }]);
      setRefusal(null);
    } else {
      setErrors([]);
      setRefusal(body);
    }
  };

  const validate = async () => {
    setBusy(true);
    setChecked(null);
    setRefusal(null);
    try {
      const r = await postRaw<ValidationResult>(`/attempts/${attempt}/intervention/validate`, text);
      setErrors(r.errors);
      setChecked(r.ok ? 'ok' : null);
    } catch (e) {
      takeRefusal(e);
    } finally {
      setBusy(false);
    }
  };
  const submit = async () => {
    setBusy(true);
    setChecked(null);
    setRefusal(null);
    try {
      await postRaw<unknown>(`/attempts/${attempt}/intervention`, text);
      setErrors([]);
      onSubmitted();
    } catch (e) {
      takeRefusal(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="ir-title" className="ir-panel">
      <h3 id="ir-title">Your fix: the InterventionIR{revision ? ` (revision ${revision} submitted)` : ''}</h3>
      <p className="hint">
        Cite the evidence your probes unlocked ({evidence.length ? evidence.join(', ') : 'none yet'}), name your hypothesis,
        say what would prove you wrong, list the actions (from the catalog below) and how to undo them, and promise the
        checks your fix must pass. Name targets by role or selector: a literal name does not transfer to the twin.
      </p>
      <IrEditor ref={editor} initial={text} errors={errors} onChange={(t) => { setText(t); setChecked(null); }} label="InterventionIR (JSON)" />
      <p className={syntax ? 'field-error' : 'hint'} data-ir-syntax="" aria-live="polite">
        {syntax ? `Not valid JSON yet: ${syntax.message}` : 'Valid JSON.'}
      </p>
      <div className="row">
        <button type="button" onClick={refreshEvidence} disabled={busy}>Cite all unlocked evidence</button>
        <button type="button" onClick={() => void validate()} disabled={busy || !enabled}>Check with the lab</button>
        <button type="button" className="primary" onClick={() => void submit()} disabled={busy || !enabled}>
          {revision ? 'Submit as a new revision' : 'Submit the IR'}
        </button>
      </div>
      {!enabled && <p className="hint">The IR can be checked and submitted in phases Inspect and Contract.</p>}
      {note && <p className="field-error" role="alert">{note}</p>}
      {checked === 'ok' && <p className="ok-text" role="status">The lab accepts this IR as it is.</p>}
      {errors.length > 0 && (
        <div className="error" role="alert" data-ir-errors="">
          <p className="error-title">The lab refused the IR</p>
          <ul>
            {errors.map((e, i) => (
              <li key={i}>
                <code>{e.path}</code>: {e.message}{' '}
                <button type="button" className="link" onClick={() => editor.current?.select(e.path)}>show in the editor</button>
              </li>
            ))}
          </ul>
        </div>
      )}
      <ErrorBox error={refusal} title="The lab refused the IR" />
      <CatalogPanel scenario={scenario} onAddAction={onAddAction} onAddCheck={onAddCheck} />
    </section>
  );
}
