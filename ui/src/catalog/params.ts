// A catalog call's parameters as form fields: each value checked in the page against its
// schema (the rules of docs/formats/intervention-ir.md, "Actions") before anything is sent,
// so a probe the lab would refuse is not sent at all. The lab checks again; its word wins.
import type { CallSpec, ParamSchema, TargetTerm } from '../api/types';

// What a field holds: text for most types, a checkbox for booleans, and for targets the form
// (role, selector, literal) with its name.
export type FieldValue = string | boolean | { form: 'role' | 'selector' | 'literal'; name: string };

const utf8Bytes = (s: string): number => new TextEncoder().encode(s).length;
const hasControl = (s: string): boolean => /[\u0000-\u001f\u007f-\u009f]/.test(s);

// A prefix covers what lies beneath it, a whole component at a time ("/fleet/" covers
// "/fleet/web2/app.conf"; neither "/fleet-old/x" nor "/fleet" itself).
export function underPrefix(path: string, prefix: string): boolean {
  const p = prefix.endsWith('/') ? prefix : `${prefix}/`;
  return prefix === '/' ? path.length > 1 : path.startsWith(p) && path.length > p.length;
}

export function pathProblem(path: string, s: ParamSchema): string | null {
  if (!path.startsWith('/')) return 'an absolute path starts with /';
  if (path !== '/' && path.endsWith('/')) return 'no trailing /';
  if (hasControl(path)) return 'no control characters';
  if (path.split('/').slice(1).some((c) => c === '' || c === '.' || c === '..')) {
    return 'not normalised: no empty, "." or ".." component';
  }
  if (utf8Bytes(path) > (s.max_bytes ?? 256)) return `at most ${s.max_bytes ?? 256} bytes`;
  const prefixes = s.path_prefixes ?? [];
  if (prefixes.length > 0 && !prefixes.some((p) => underPrefix(path, p) || (p === '/' && path === '/'))) {
    return `must be under ${prefixes.join(', ')}`;
  }
  const ex = (s.path_excludes ?? []).find((p) => underPrefix(path, p) || path === p.replace(/\/$/, ''));
  if (ex) return `may not be under ${ex}`;
  return null;
}

// The problem with one field's value, or null when it is acceptable. `terms` are the scenario's
// target terms, for target parameters.
export function fieldProblem(s: ParamSchema, v: FieldValue | undefined, terms: TargetTerm[]): string | null {
  const empty = v === undefined || v === '' || (typeof v === 'object' && v.name === '');
  if (empty) return s.required ? 'required' : null;
  switch (s.type) {
    case 'boolean':
      return typeof v === 'boolean' ? null : 'true or false';
    case 'integer': {
      if (typeof v !== 'string' || !/^-?(0|[1-9][0-9]*)$/.test(v)) return 'a whole number';
      const n = Number(v);
      if (s.min !== undefined && n < s.min) return `at least ${s.min}`;
      if (s.max !== undefined && n > s.max) return `at most ${s.max}`;
      return null;
    }
    case 'string': {
      if (typeof v !== 'string') return 'text';
      const n = utf8Bytes(v);
      if (n < (s.min_bytes ?? 1)) return `at least ${s.min_bytes ?? 1} bytes`;
      if (n > (s.max_bytes ?? 256)) return `at most ${s.max_bytes ?? 256} bytes`;
      if (hasControl(v)) return 'no control characters';
      if (s.enum && s.enum.length > 0 && !s.enum.includes(v)) return `one of ${s.enum.join(', ')}`;
      return null;
    }
    case 'path':
      return typeof v === 'string' ? pathProblem(v, s) : 'a path';
    case 'mode':
      return typeof v === 'string' && /^[0-7]{3,4}$/.test(v) ? null : '3 or 4 octal digits, like 0640';
    case 'target': {
      if (typeof v !== 'object') return 'a target';
      if (v.form === 'literal') {
        if (!s.allow_literal) return 'a literal target is not allowed here: name a role or selector';
        if (hasControl(v.name) || utf8Bytes(v.name) > 128) return 'a literal of 1 to 128 bytes, no control characters';
        return null;
      }
      const term = terms.find((t) => t.name === v.name);
      if (!term) return `no ${v.form} named "${v.name}"`;
      if (term.type !== v.form) return `"${v.name}" is a ${term.type}, not a ${v.form}`;
      if (s.target_kind && term.kind !== s.target_kind) return `"${v.name}" names a ${term.kind} target; this parameter takes a ${s.target_kind}`;
      return null;
    }
  }
  return null;
}

export function problems(spec: CallSpec, values: Record<string, FieldValue>, terms: TargetTerm[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of spec.params) {
    const e = fieldProblem(p, values[p.name], terms);
    if (e) out[p.name] = e;
  }
  return out;
}

// The call's params as the lab takes them; empty optional fields are left out.
export function paramsOf(spec: CallSpec, values: Record<string, FieldValue>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of spec.params) {
    const v = values[p.name];
    if (v === undefined || v === '' || (typeof v === 'object' && v.name === '')) continue;
    if (p.type === 'integer' && typeof v === 'string') out[p.name] = Number(v);
    else if (p.type === 'target' && typeof v === 'object') out[p.name] = { [v.form]: v.name };
    else out[p.name] = v;
  }
  return out;
}

// Terms a target parameter may name: of its kind, role or selector.
export function termsFor(s: ParamSchema, terms: TargetTerm[], form: 'role' | 'selector'): TargetTerm[] {
  return terms.filter((t) => t.type === form && (!s.target_kind || t.kind === s.target_kind));
}

// A call skeleton for the IR editor, with every required parameter present and a placeholder
// the learner replaces (the first allowed value where the catalog lists them).
export function skeleton(spec: CallSpec, terms: TargetTerm[]): { call: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = {};
  for (const p of spec.params) {
    if (!p.required) continue;
    switch (p.type) {
      case 'target': {
        const role = termsFor(p, terms, 'role')[0];
        params[p.name] = role ? { role: role.name } : { selector: termsFor(p, terms, 'selector')[0]?.name ?? '' };
        break;
      }
      case 'string':
        params[p.name] = p.enum?.[0] ?? '';
        break;
      case 'path':
        params[p.name] = p.path_prefixes?.[0] ?? '/';
        break;
      case 'integer':
        params[p.name] = p.min ?? 0;
        break;
      case 'boolean':
        params[p.name] = false;
        break;
      case 'mode':
        params[p.name] = '0644';
        break;
    }
  }
  return { call: spec.name, params };
}
