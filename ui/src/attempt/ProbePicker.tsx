// A probe picked from the scenario's catalog, its parameters as fields generated from their
// schemas and checked as they are typed, with its cost against the remaining budget.
import { useMemo, useState } from 'react';
import type { CallSpec, ParamSchema, TargetTerm } from '../api/types';
import { type FieldValue, paramsOf, problems, termsFor } from '../catalog/params';

export function ProbePicker({ probes, terms, remaining, busy, onRun }: {
  probes: CallSpec[];
  terms: TargetTerm[];
  remaining: number;
  busy: boolean;
  onRun: (call: string, params: Record<string, unknown>) => void;
}) {
  const [name, setName] = useState(probes[0]?.name ?? '');
  const [values, setValues] = useState<Record<string, FieldValue>>({});
  const [touched, setTouched] = useState<Record<string, boolean>>({});
  const spec = probes.find((p) => p.name === name);
  const errs = useMemo(() => (spec ? problems(spec, values, terms) : {}), [spec, values, terms]);
  const cost = spec?.cost ?? 0;
  const tooDear = cost > remaining;
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    if (!spec) return;
    setTouched(Object.fromEntries(spec.params.map((p) => [p.name, true])));
    if (Object.keys(errs).length > 0 || tooDear) return;
    onRun(spec.name, paramsOf(spec, values));
  };
  return (
    <form className="card probe-picker" onSubmit={submit} aria-labelledby="probe-title" noValidate>
      <h3 id="probe-title">Run a probe</h3>
      <p className="budget" aria-live="polite">
        Budget left: <strong data-remaining={remaining}>{remaining}</strong>
      </p>
      <label htmlFor="probe-name">Probe</label>
      <select id="probe-name" value={name} onChange={(e) => { setName(e.target.value); setValues({}); setTouched({}); }}>
        {probes.map((p) => (
          <option key={p.name} value={p.name}>
            {p.name} (cost {p.cost ?? 0}): {p.summary}
          </option>
        ))}
      </select>
      {spec && spec.params.length === 0 && <p className="hint">This probe takes no parameters.</p>}
      {spec?.params.map((p) => (
        <Field
          key={`${spec.name}-${p.name}`}
          schema={p}
          terms={terms}
          value={values[p.name]}
          error={touched[p.name] ? errs[p.name] : undefined}
          onChange={(v) => setValues((old) => ({ ...old, [p.name]: v }))}
          onBlur={() => setTouched((t) => ({ ...t, [p.name]: true }))}
        />
      ))}
      <button type="submit" className="primary" disabled={busy || !spec || tooDear}>
        {busy ? 'Probing…' : `Run ${name} (costs ${cost})`}
      </button>
      {tooDear && <p className="field-error">This probe costs {cost}; only {remaining} of the budget is left.</p>}
    </form>
  );
}

function hintOf(s: ParamSchema): string {
  const parts: string[] = [];
  if (s.description) parts.push(s.description);
  if (s.type === 'path') {
    if (s.path_prefixes?.length) parts.push(`under ${s.path_prefixes.join(', ')}`);
    if (s.path_excludes?.length) parts.push(`not under ${s.path_excludes.join(', ')}`);
  }
  if (s.type === 'integer' && (s.min !== undefined || s.max !== undefined)) parts.push(`from ${s.min ?? '…'} to ${s.max ?? '…'}`);
  if (s.type === 'mode') parts.push('3 or 4 octal digits, like 0640');
  if (s.type === 'string' && s.max_bytes) parts.push(`up to ${s.max_bytes} bytes`);
  if (!s.required) parts.push('optional');
  return parts.join('; ');
}

export function Field({ schema: s, terms, value, error, onChange, onBlur }: {
  schema: ParamSchema;
  terms: TargetTerm[];
  value: FieldValue | undefined;
  error: string | undefined;
  onChange: (v: FieldValue) => void;
  onBlur: () => void;
}) {
  const id = `param-${s.name}`;
  const hint = hintOf(s);
  const described = `${id}-hint ${id}-error`;
  const common = { id, 'aria-invalid': error ? true : undefined, 'aria-describedby': described, onBlur } as const;
  let control: React.ReactNode;
  if (s.type === 'boolean') {
    control = <input type="checkbox" {...common} checked={value === true} onChange={(e) => onChange(e.target.checked)} />;
  } else if (s.type === 'string' && s.enum && s.enum.length > 0) {
    control = (
      <select {...common} value={typeof value === 'string' ? value : ''} onChange={(e) => onChange(e.target.value)}>
        <option value="">choose…</option>
        {s.enum.map((v) => <option key={v} value={v}>{v}</option>)}
      </select>
    );
  } else if (s.type === 'target') {
    const t = typeof value === 'object' ? value : { form: 'role' as const, name: '' };
    const choices = t.form === 'literal' ? [] : termsFor(s, terms, t.form);
    control = (
      <span className="target-field">
        <select aria-label={`${s.name}: form of target`} value={t.form} onChange={(e) => onChange({ form: e.target.value as 'role' | 'selector' | 'literal', name: '' })}>
          <option value="role">role</option>
          <option value="selector">selector</option>
          {s.allow_literal && <option value="literal">literal</option>}
        </select>
        {t.form === 'literal' ? (
          <input {...common} value={t.name} onChange={(e) => onChange({ ...t, name: e.target.value })} placeholder="a name in one world" />
        ) : (
          <select {...common} value={t.name} onChange={(e) => onChange({ ...t, name: e.target.value })}>
            <option value="">choose…</option>
            {choices.map((c) => <option key={c.name} value={c.name}>{c.name}: {c.description}</option>)}
          </select>
        )}
      </span>
    );
  } else {
    control = (
      <input
        {...common}
        type="text"
        inputMode={s.type === 'integer' ? 'numeric' : undefined}
        value={typeof value === 'string' ? value : ''}
        onChange={(e) => onChange(e.target.value)}
        placeholder={s.type === 'path' ? (s.path_prefixes?.[0] ?? '/') : ''}
        autoComplete="off"
        spellCheck={false}
      />
    );
  }
  return (
    <div className="field">
      <label htmlFor={id}>
        {s.name} <span className="type">({s.type}{s.required ? ', required' : ''})</span>
      </label>
      {control}
      <span id={`${id}-hint`} className="hint">{hint}</span>
      <span id={`${id}-error`} className="field-error" role={error ? 'alert' : undefined}>{error ?? ''}</span>
    </div>
  );
}
