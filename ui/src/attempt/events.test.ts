import { describe, expect, it } from 'vitest';
import { fold, type LoggedEvent } from './events';

const ev = (seq: number, type: string, data: Record<string, unknown>): LoggedEvent => ({ seq, type, data, live: false });

describe('the attempt page\'s view of its events', () => {
  it('keeps only the latest apply\'s actions and clears them on reset', () => {
    const log = [
      ev(1, 'attempt.phase', { from: 'contract', to: 'apply' }),
      ev(2, 'action.completed', { index: 0, call: { call: 'a' }, exit_code: 1, error: 'no node' }),
      ev(3, 'apply.completed', { actions: 1, failed: 1, aborted: false }),
      ev(4, 'ack.readback', { as_requested: false, actions: [] }),
    ];
    const f = fold(log);
    expect(f.actions).toEqual([{ index: 0, call: '{"call":"a"}', exit_code: 1, error: 'no node', truncated: false }]);
    expect(f.readback?.as_requested).toBe(false);
    const after = fold([...log, ev(5, 'world.reset', { previous: 'destroyed' })]);
    expect(after.actions).toEqual([]);
    expect(after.readback).toBeUndefined();
  });
  it('collects the latest verify\'s facts and the gate', () => {
    const f = fold([
      ev(1, 'attempt.phase', { from: 'ack', to: 'verify' }),
      ev(2, 'verify.fact', { check: 'fleet-healthy', kind: 'postcondition', ok: true, observed: 'ok' }),
      ev(3, 'gate.started', {}),
      ev(4, 'gate.property', { property: 'twin', status: 'fail', reason: 'check fleet-healthy failed at after_apply on world twin-1' }),
      ev(5, 'gate.verdict', { verdict: 'RECOVERED_UNPROVEN', recovered: true }),
    ]);
    expect(f.facts.map((x) => x.check)).toEqual(['fleet-healthy']);
    expect(f.gate.properties[1]).toMatchObject({ status: 'fail', world: 'twin-1' });
    expect(f.gate.verdict).toBe('RECOVERED_UNPROVEN');
  });
});
