// The gate progress folded from a real O2 judge run's event stream (fixtures/: the stream as
// the lab's front sent it, and the run's final state).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SseParser } from '../api/sse';
import type { JudgeRun } from '../api/types';
import { applyGateEvent, applyJudgeEvent, type CaseProgress, decidingCheck, emptyGate, findingText } from './progress';

const sse = readFileSync(new URL('./fixtures/o2-judge-run.sse', import.meta.url), 'utf8');
const run = JSON.parse(readFileSync(new URL('./fixtures/o2-judge-run.json', import.meta.url), 'utf8')) as JudgeRun;
const events = new SseParser().push(sse);

function fold(evs = events): CaseProgress[] {
  let cases: CaseProgress[] = [];
  for (const e of evs) cases = applyJudgeEvent(cases, e.event, JSON.parse(e.data) as Record<string, unknown>, Number(e.id));
  return cases;
}

describe('judge run progress from the O2 stream', () => {
  const cases = fold();
  it('opens one case per attempt, in order', () => {
    expect(cases).toHaveLength(run.cases!.length);
    expect(cases.map((c) => c.gate.verdict)).toEqual(run.cases!.map((c) => c.verdict));
  });
  it('bad: four properties fail on never-root, each with the world it ran on', () => {
    const bad = cases[0]!.gate.properties;
    expect(bad.map((p) => p.status)).toEqual(['fail', 'fail', 'fail', 'fail', 'pass']);
    expect(bad.map((p) => p.world)).toEqual(['primary', 'twin-1', 'control', 'primary', 'primary']);
    expect(decidingCheck(bad[1]!)).toBe('never-root failed (after apply)');
    expect(cases[0]!.receipt).toBeUndefined();
  });
  it('gold: every property passes and a receipt is issued with the run\'s digest', () => {
    const gold = cases[1]!;
    expect(gold.gate.properties.every((p) => p.status === 'pass')).toBe(true);
    expect(decidingCheck(gold.gate.properties[0]!)).toMatch(/^all \d+ checks held$/);
    expect(gold.receipt).toBe(run.cases![1]!.receipt_sha256);
  });
  it('the same events replayed in two halves (a resumed stream) give the same result', () => {
    const mid = Math.floor(events.length / 2);
    let cases2: CaseProgress[] = [];
    for (const part of [events.slice(0, mid), events.slice(mid)]) {
      for (const e of part) cases2 = applyJudgeEvent(cases2, e.event, JSON.parse(e.data) as Record<string, unknown>, Number(e.id));
    }
    expect(cases2).toEqual(cases);
  });
  it('a property in progress reads as running with its last check', () => {
    const gold = events.findIndex((e) => e.event === 'gate.fact' && e.data.includes('"property":"twin"'));
    const partial = fold(events.slice(0, gold + 1));
    const twin = partial[partial.length - 1]!.gate.properties[1]!;
    expect(twin.status).toBe('running');
    expect(decidingCheck(twin)).toMatch(/^checking… /);
  });
});

describe('a gate that runs again starts afresh', () => {
  it('gate.started clears the earlier run\'s facts', () => {
    let g = applyGateEvent(emptyGate(), 'gate.started', {}, 1);
    g = applyGateEvent(g, 'gate.fact', { property: 'primary', stage: 'after_apply', check: 'c', ok: false }, 2);
    g = applyGateEvent(g, 'gate.started', {}, 3);
    expect(g.properties[0]!.facts).toEqual([]);
    expect(g.properties[0]!.status).toBe('waiting');
  });
});

describe("a learner's failed property", () => {
  it('shows the grader\'s finding: the check, its description and what was observed', () => {
    let g = applyGateEvent(emptyGate(), 'gate.started', {}, 1);
    const finding = {
      check: 'fleet-healthy',
      description: 'every node serves the release page',
      observed: 'did not hold on 1 of 1 hidden twin world after your fix was applied; it held on the primary',
    };
    // a learner's gate.property carries no reason (it names the world), only the finding
    g = applyGateEvent(g, 'gate.property', { property: 'twin', status: 'fail', finding }, 2);
    const twin = g.properties[1]!;
    expect(twin.finding).toEqual(finding);
    expect(decidingCheck(twin)).toBe('fleet-healthy failed');
    expect(findingText(twin.finding!)).toBe(
      'fleet-healthy: every node serves the release page — observed: did not hold on 1 of 1 hidden twin world after your fix was applied; it held on the primary',
    );
    expect(twin.world).toBeUndefined();
  });
  it('an older event without a finding falls back on the reason', () => {
    let g = applyGateEvent(emptyGate(), 'gate.started', {}, 1);
    g = applyGateEvent(g, 'gate.property', { property: 'twin', status: 'fail', reason: 'check c failed at after_apply on world twin-1' }, 2);
    expect(g.properties[1]!.finding).toBeUndefined();
    expect(decidingCheck(g.properties[1]!)).toBe('c failed (after apply)');
  });
});
