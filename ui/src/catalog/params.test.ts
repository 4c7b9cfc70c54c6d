import { describe, expect, it } from 'vitest';
import type { CallSpec, TargetTerm } from '../api/types';
import { fieldProblem, paramsOf, pathProblem, problems, skeleton } from './params';

const terms: TargetTerm[] = [
  { name: 'web', kind: 'node', type: 'role', description: 'every web node' },
  { name: 'stale-app-root', kind: 'node', type: 'selector', description: '...' },
  { name: 'broken-units', kind: 'service', type: 'selector', description: '...' },
];
const write: CallSpec = {
  name: 'file.write', summary: '', params: [
    { name: 'path', type: 'path', required: true, max_bytes: 256, path_prefixes: ['/fleet/', '/nodes/'], path_excludes: ['/fleet/secret/'] },
    { name: 'content', type: 'string', required: true, min_bytes: 1, max_bytes: 8 },
    { name: 'node', type: 'target', required: false, target_kind: 'node', allow_literal: false },
    { name: 'delay_s', type: 'integer', required: false, min: 0, max: 60 },
  ],
};

describe('catalog parameters checked in the page', () => {
  it('paths: absolute, normalised, under a prefix, not excluded', () => {
    const s = write.params[0]!;
    expect(pathProblem('/fleet/web2/app.conf', s)).toBeNull();
    expect(pathProblem('fleet/x', s)).toMatch(/absolute/);
    expect(pathProblem('/fleet/../etc/shadow', s)).toMatch(/normalised/);
    expect(pathProblem('/etc/shadow', s)).toMatch(/under \/fleet\/, \/nodes\//);
    expect(pathProblem('/fleet-old/x', s)).toMatch(/under/);
    expect(pathProblem('/fleet', s)).toMatch(/under/);
    expect(pathProblem('/fleet/secret/k', s)).toMatch(/may not be under \/fleet\/secret\//);
  });
  it('a "/" prefix covers every absolute path', () => {
    expect(pathProblem('/fleet/inventory.conf', { name: 'p', type: 'path', required: true, path_prefixes: ['/'] })).toBeNull();
  });
  it('strings count bytes, not characters', () => {
    expect(fieldProblem(write.params[1]!, 'ééééé', terms)).toMatch(/at most 8 bytes/);
    expect(fieldProblem(write.params[1]!, 'éééé', terms)).toBeNull();
  });
  it('targets: the term must exist, be of the form named and of the parameter\'s kind', () => {
    const s = write.params[2]!;
    expect(fieldProblem(s, { form: 'role', name: 'web' }, terms)).toBeNull();
    expect(fieldProblem(s, { form: 'selector', name: 'web' }, terms)).toMatch(/is a role, not a selector/);
    expect(fieldProblem(s, { form: 'selector', name: 'broken-units' }, terms)).toMatch(/takes a node/);
    expect(fieldProblem(s, { form: 'literal', name: 'web2' }, terms)).toMatch(/not allowed/);
  });
  it('integers: whole numbers within bounds', () => {
    const s = write.params[3]!;
    expect(fieldProblem(s, '5', terms)).toBeNull();
    expect(fieldProblem(s, '5.0', terms)).toMatch(/whole number/);
    expect(fieldProblem(s, '600', terms)).toMatch(/at most 60/);
  });
  it('required fields are named; optional empty ones are left out of the call', () => {
    expect(problems(write, {}, terms)).toEqual({ path: 'required', content: 'required' });
    expect(paramsOf(write, { path: '/fleet/a', content: 'x', node: { form: 'role', name: '' }, delay_s: '3' }))
      .toEqual({ path: '/fleet/a', content: 'x', delay_s: 3 });
  });
  it('a skeleton names every required parameter', () => {
    expect(skeleton(write, terms)).toEqual({ call: 'file.write', params: { path: '/fleet/', content: '' } });
  });
});
