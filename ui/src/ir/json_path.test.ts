import { describe, expect, it } from 'vitest';
import { locate, parsePath, pathOfMessage, syntaxProblem } from './json_path';

const ir = `{
  "v": 1,
  "hypothesis": "stale-override",
  "evidence": ["ev-3", "ev-9"],
  "actions": [
    {"call": "vars.unset", "params": {"node": {"selector": "stale-app-rot"}, "key": "app_root"}},
    {"call": "fleet.converge", "params": {}}
  ],
  "rollback": [{"call": "journal.undo"}]
}`;

describe('the server\'s JSON paths in the learner\'s document', () => {
  it('parses paths', () => {
    expect(parsePath('$.actions[0].params.node')).toEqual([{ key: 'actions' }, { index: 0 }, { key: 'params' }, { key: 'node' }]);
    expect(parsePath('$')).toEqual([]);
    expect(parsePath('actions[0]')).toBeNull();
  });

  it('an element of an array: that element', () => {
    const l = locate(ir, '$.evidence[1]')!;
    expect(ir.slice(l.from, l.to)).toBe('"ev-9"');
    expect(l.exact).toBe(true);
  });

  it('a member: its name through its value', () => {
    const l = locate(ir, '$.actions[0].params.node')!;
    expect(ir.slice(l.from, l.to)).toBe('"node": {"selector": "stale-app-rot"}');
  });

  it('a member that is missing: the object it belongs in', () => {
    const l = locate(ir, '$.actions[1].params.node')!;
    expect(l.exact).toBe(false);
    expect(ir.slice(l.from, l.from + 1)).toBe('{');
    expect(ir.slice(0, l.from).split('\n').length).toBe(7);  // the line of actions[1]
  });

  it('finds the path at the front of a refusal\'s message', () => {
    expect(pathOfMessage('$.actions[0].params.node: no target term named "x"')).toBe('$.actions[0].params.node');
    expect(pathOfMessage('probe: params.path: "/etc/../x" is not a normalised absolute path')).toBe('$.params.path');
    expect(pathOfMessage('attempt 3f is in phase inspect')).toBeNull();
  });

  it('a syntax error has its line and column', () => {
    const p = syntaxProblem('{\n  "v": 1,\n  "claim": "x"\n  "falsifier": "y"\n}')!;
    expect(p.line).toBe(4);
    expect(p.column).toBe(3);
    expect(p.message).toMatch(/^line 4, column 3: expected ',' or '}'/);
  });

  it('a duplicate member is a problem too, at its path', () => {
    const p = syntaxProblem('{"v":1,"claim":"a","claim":"b"}')!;
    expect(p.message).toMatch(/duplicate member \(at \$\.claim\)/);
  });

  it('valid JSON has no problem', () => {
    expect(syntaxProblem(ir)).toBeNull();
  });
});
