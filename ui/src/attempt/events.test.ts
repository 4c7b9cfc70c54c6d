import { describe, expect, it } from 'vitest';
import { describe as describeEvent, fold, type LoggedEvent } from './events';

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
  it('shows the readback apply ended with, by its seq, and the latest after a fresh one', () => {
    const applied = [
      ev(1, 'attempt.phase', { from: 'contract', to: 'apply' }),
      ev(2, 'action.completed', { index: 0, call: { call: 'a' }, exit_code: 0, error: '' }),
      ev(3, 'apply.completed', { actions: 1, failed: 0, aborted: false }),
      ev(4, 'ack.readback', { as_requested: true, actions: [{ index: 0, typed: true, observed: 'web2: as requested', differences: [] }] }),
      ev(5, 'attempt.phase', { from: 'apply', to: 'ack' }),
    ];
    const f = fold(applied);
    expect(f.readback).toMatchObject({ seq: 4, as_requested: true });
    expect(f.readback?.actions[0]?.observed).toBe('web2: as requested');
    // ack found the world changed: the fresh readback (not acknowledged) is the one shown.
    const changed = fold([...applied, ev(6, 'ack.readback', { as_requested: false, actions: [] })]);
    expect(changed.readback).toMatchObject({ seq: 6, as_requested: false });
    expect(describeEvent(ev(7, 'attempt.acknowledged', { readback: 4, note: '' }))).toBe('readback (seq 4) acknowledged');
  });
  it('says a refused probe read nothing and spent nothing', () => {
    expect(describeEvent(ev(3, 'probe.completed', { probe: 2, evidence: 'ev-2', exit_code: 5, error: 'refused: read /srv : not a regular file (dir)', refused: true })))
      .toBe('probe 2 → ev-2: refused: read /srv : not a regular file (dir); nothing was read, nothing spent');
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
