import { describe, expect, it } from 'vitest';
import { addAction, addCheck, startingIr } from './template';

describe('writing into the IR from the catalog', () => {
  it('starts from the prediction and the unlocked evidence, v first', () => {
    const t = startingIr('stale-override', ['ev-1', 'ev-3']);
    expect(t.startsWith('{\n  "v": 1,')).toBe(true);
    expect(JSON.parse(t)).toMatchObject({ hypothesis: 'stale-override', evidence: ['ev-1', 'ev-3'], actions: [] });
  });
  it('adds an action on one line and keeps the learner\'s words', () => {
    const base = startingIr('h', ['ev-1']).replace('"claim": ""', '"claim": "my claim"');
    const r = addAction(base, { call: 'fleet.converge', params: { node: { role: 'web' } } }, 'actions');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.text).toContain('    {"call":"fleet.converge","params":{"node":{"role":"web"}}}');
    expect(JSON.parse(r.text)).toMatchObject({ claim: 'my claim', actions: [{ call: 'fleet.converge' }] });
  });
  it('adds a promised check once', () => {
    let t = startingIr('h', []);
    for (let i = 0; i < 2; i++) {
      const r = addCheck(t, 'fleet-healthy', 'postcondition');
      if (r.ok) t = r.text;
    }
    expect(JSON.parse(t).postconditions).toEqual(['fleet-healthy']);
  });
  it('refuses to edit a document that does not parse', () => {
    expect(addAction('{"v":1,', {}, 'actions')).toEqual({ ok: false, error: expect.stringMatching(/not valid JSON/) });
  });
});
