// The transfer gate's progress, folded from the events an attempt's or a judge run's stream
// carries (gate.started, gate.action, gate.fact, gate.property, gate.verdict): per property
// its status, the world it ran on and the check that decided it. Pure, so the page shows the
// same whether the events arrive live or are replayed from the log.

export const kProperties = ['primary', 'twin', 'control', 'repeat', 'reversal'] as const;
export type PropertyName = (typeof kProperties)[number];

export const kPropertyQuestion: Record<PropertyName, string> = {
  primary: 'does the fix recover the broken system you saw?',
  twin: 'does it fix the cause, found at another spot (a hidden twin)?',
  control: 'does it leave a healthy system unharmed?',
  repeat: 'applied twice, does it still hold (idempotent)?',
  reversal: 'can it be undone exactly (rollback)?',
};

export interface GateFact {
  seq: number;
  world?: string;
  stage: string;
  check: string;
  ok: boolean;
}

// What a learner is told of a failed property: the check that decided it, its public
// description, and what the grader observed (counts per world role, never a hidden world's
// layout). Absent from gate.property events written before the grader made it.
export interface Finding {
  check: string;
  description: string;
  observed: string;
}

export interface PropertyProgress {
  property: PropertyName;
  status: 'waiting' | 'running' | 'pass' | 'fail' | 'not_run';
  world?: string;
  facts: GateFact[];
  actionsFailed: number;
  reason: string;
  finding?: Finding;
}

export interface GateProgress {
  started: boolean;
  properties: PropertyProgress[];
  verdict?: string;
  recovered?: boolean;
  lastSeq: number;
}

export function emptyGate(): GateProgress {
  return {
    started: false,
    properties: kProperties.map((p) => ({ property: p, status: 'waiting', facts: [], actionsFailed: 0, reason: '' })),
    lastSeq: 0,
  };
}

const isProperty = (p: unknown): p is PropertyName => kProperties.includes(p as PropertyName);

// "check never-root failed at after_apply on world twin-1" -> its check and world
export function parseReason(reason: string): { check?: string; stage?: string; world?: string } {
  const m = /check (\S+) failed at (\S+) on world (\S+)/.exec(reason);
  return m ? { check: m[1]!, stage: m[2]!, world: m[3]! } : {};
}

export function applyGateEvent(g: GateProgress, type: string, data: Record<string, unknown>, seq: number): GateProgress {
  if (!type.startsWith('gate.')) return g;
  if (type === 'gate.started') {
    // a new gate run (a gate may run again after one stopped on an error): start afresh
    return { ...emptyGate(), started: true, lastSeq: seq };
  }
  const next: GateProgress = { ...g, started: true, lastSeq: Math.max(g.lastSeq, seq), properties: g.properties.map((p) => ({ ...p, facts: [...p.facts] })) };
  if (type === 'gate.verdict') {
    next.verdict = String(data.verdict ?? '');
    next.recovered = data.recovered === true;
    return next;
  }
  const prop = next.properties.find((p) => p.property === data.property);
  if (!prop || !isProperty(data.property)) return next;
  if (type === 'gate.action') {
    if (prop.status === 'waiting') prop.status = 'running';
    if (typeof data.world === 'string') prop.world = data.world;
    if (Number(data.exit_code ?? 0) !== 0 || (typeof data.error === 'string' && data.error !== '')) prop.actionsFailed++;
  } else if (type === 'gate.fact') {
    if (prop.status === 'waiting') prop.status = 'running';
    if (typeof data.world === 'string') prop.world = data.world;
    prop.facts.push({
      seq,
      ...(typeof data.world === 'string' ? { world: data.world } : {}),
      stage: String(data.stage ?? ''),
      check: String(data.check ?? ''),
      ok: data.ok === true,
    });
  } else if (type === 'gate.property') {
    const s = String(data.status ?? '');
    prop.status = s === 'pass' || s === 'fail' || s === 'not_run' ? s : prop.status;
    prop.reason = String(data.reason ?? '');
    const r = parseReason(prop.reason);
    if (r.world && !prop.world) prop.world = r.world;
    const f = data.finding as Record<string, unknown> | undefined;
    if (f && typeof f === 'object' && typeof f.observed === 'string' && f.observed !== '') {
      prop.finding = { check: String(f.check ?? ''), description: String(f.description ?? ''), observed: f.observed };
    }
  }
  return next;
}

// The check that decided a property, in words: the failing check (from the grader's finding,
// else the reason, else the first failing fact), or that every check held.
export function decidingCheck(p: PropertyProgress): string {
  const r = parseReason(p.reason);
  if (p.status === 'fail') {
    if (p.finding) return p.finding.check ? `${p.finding.check} failed` : 'failed';
    const f = p.facts.find((x) => !x.ok);
    const check = r.check ?? f?.check;
    const stage = r.stage ?? f?.stage;
    return check ? `${check} failed${stage ? ` (${stage.replace(/_/g, ' ')})` : ''}` : p.reason || 'failed';
  }
  if (p.status === 'pass') {
    const n = p.facts.length;
    return n > 0 ? `all ${n} checks held` : 'held';
  }
  if (p.status === 'not_run') return p.reason || 'not run';
  if (p.status === 'running') {
    const last = p.facts[p.facts.length - 1];
    return last ? `checking… ${last.check} ${last.ok ? 'held' : 'failed'}` : 'applying the fix…';
  }
  return '';
}

export const kVerdictMeaning: Record<string, string> = {
  VERIFIED:
    'The fix recovered the broken system and held on every fresh world: the hidden twin (the same cause elsewhere), a healthy control, applied twice, and undone by its rollback. The lab signs a receipt for it.',
  RECOVERED_UNPROVEN:
    'The broken system recovered, but the fix did not hold on every fresh world: it treats the symptom or does harm, so it is not proven to fix the cause. No receipt is issued.',
  NOT_RECOVERED: 'The fix did not recover the broken system: the primary world still fails its checks. No receipt is issued.',
};

// A judge run's cases, folded from its event stream: each attempt.started opens the next case
// (the judge runs its cases one after another, bad first, then gold).
export interface CaseProgress {
  index: number;
  phase: string;
  verify: { check: string; kind: string; ok: boolean; seq: number }[];
  gate: GateProgress;
  receipt?: string;
}

export function applyJudgeEvent(cases: CaseProgress[], type: string, data: Record<string, unknown>, seq: number): CaseProgress[] {
  if (type === 'attempt.started') {
    return [...cases, { index: cases.length, phase: 'observe', verify: [], gate: emptyGate() }];
  }
  const cur = cases[cases.length - 1];
  if (!cur) return cases;
  const c: CaseProgress = { ...cur };
  if (type === 'attempt.phase') c.phase = String(data.to ?? c.phase);
  else if (type === 'verify.fact') c.verify = [...c.verify, { check: String(data.check), kind: String(data.kind), ok: data.ok === true, seq }];
  else if (type === 'receipt.issued') c.receipt = String(data.receipt_sha256 ?? '');
  else if (type.startsWith('gate.')) c.gate = applyGateEvent(c.gate, type, data, seq);
  else return cases;
  return [...cases.slice(0, -1), c];
}

// A failed property's finding in one line: "fleet-healthy: every node ... — observed: ...".
export function findingText(f: Finding): string {
  const what = f.check ? `${f.check}: ${f.description}` : f.description;
  return `${what} — observed: ${f.observed}`;
}
