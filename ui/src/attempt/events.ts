// The attempt's event log as the learner's stream sends it, folded into what the page shows:
// the last apply's actions, the readback, the live world's checks and the gate.
import { applyGateEvent, emptyGate, type GateProgress } from '../gate/progress';

export interface LoggedEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
  live: boolean;  // arrived after the page opened (else replayed from the log)
}

export interface ActionDone {
  index: number;
  call?: string;
  script_sha256?: string;
  exit_code: number;
  error: string;
  truncated?: boolean;
}

export interface Folded {
  actions: ActionDone[];  // of the latest apply
  applied?: { actions: number; failed: number; aborted: boolean };
  // The latest readback (apply ends with one; ack records a fresh one when the world changed).
  readback?: { seq?: number; as_requested: boolean; actions: { index: number; call?: string; script_sha256?: string; typed: boolean; observed: string; differences: string[] }[] };
  facts: { seq: number; check: string; kind: string; ok: boolean; observed: string }[];  // of the latest verify
  gate: GateProgress;
  receipt?: string;
}

export function fold(events: LoggedEvent[]): Folded {
  const f: Folded = { actions: [], facts: [], gate: emptyGate() };
  let applying = false;
  for (const e of events) {
    const d = e.data;
    switch (e.type) {
      case 'attempt.phase':
        if (d.to === 'apply') {
          applying = true;
          f.actions = [];
          delete f.readback;
        }
        if (d.to === 'verify') f.facts = [];
        break;
      case 'action.completed':
        if (applying) {
          f.actions.push({
            index: Number(d.index),
            ...(typeof d.call === 'string' ? { call: d.call } : d.call ? { call: JSON.stringify(d.call) } : {}),
            ...(typeof d.script_sha256 === 'string' ? { script_sha256: d.script_sha256 } : {}),
            exit_code: Number(d.exit_code ?? 0),
            error: String(d.error ?? ''),
            truncated: d.truncated === true,
          });
        }
        break;
      case 'apply.completed':
        applying = false;
        f.applied = { actions: Number(d.actions), failed: Number(d.failed), aborted: d.aborted === true };
        break;
      case 'ack.readback':
        f.readback = { ...(d as unknown as NonNullable<Folded['readback']>), seq: e.seq };
        break;
      case 'verify.fact':
        f.facts.push({ seq: e.seq, check: String(d.check), kind: String(d.kind), ok: d.ok === true, observed: String(d.observed ?? '') });
        break;
      case 'world.reset':
        f.actions = [];
        delete f.applied;
        delete f.readback;
        f.facts = [];
        break;
      case 'receipt.issued':
        f.receipt = String(d.receipt_sha256 ?? '');
        break;
      default:
        if (e.type.startsWith('gate.')) f.gate = applyGateEvent(f.gate, e.type, d, e.seq);
    }
  }
  return f;
}

// One line of the event log, in words.
export function describe(e: LoggedEvent): string {
  const d = e.data;
  switch (e.type) {
    case 'attempt.started': return `attempt started (${String(d.mode)}, budget ${String(d.probe_budget ?? '?')})`;
    case 'attempt.phase': return `phase ${String(d.from)} → ${String(d.to)}`;
    case 'attempt.predicted': return `predicted ${String(d.hypothesis)} (confidence ${String(d.confidence ?? '–')})`;
    case 'probe.requested': return `probe ${String(d.probe)} requested: ${JSON.stringify(d.call)} (cost ${String(d.cost)}, spent ${String(d.spent)})`;
    case 'probe.completed':
      if (d.refused === true) return `probe ${String(d.probe)} → ${String(d.evidence)}: ${String(d.error ?? 'refused')}; nothing was read, nothing spent`;
      return `probe ${String(d.probe)} → ${String(d.evidence)}, exit ${String(d.exit_code)}${d.error ? `: ${String(d.error)}` : ''}`;
    case 'intervention.submitted': return `IR revision ${String(d.revision)} submitted (${String(d.ir_sha256).slice(0, 12)}…)`;
    case 'script.authorized': return `script ${String(d.sha256).slice(0, 12)}… authorised`;
    case 'action.completed': return `action ${String(d.index)}: exit ${String(d.exit_code)}${d.error ? ` (${String(d.error)})` : ''}`;
    case 'apply.completed': return `apply: ${String(d.actions)} actions, ${String(d.failed)} failed${d.aborted ? ', aborted' : ''}`;
    case 'ack.readback': return `readback (seq ${e.seq}): ${d.as_requested ? 'as requested' : 'differs from what was requested'}`;
    case 'attempt.acknowledged': return `readback (seq ${String(d.readback)}) acknowledged`;
    case 'verify.fact': return `check ${String(d.check)} (${String(d.kind)}): ${d.ok ? 'held' : 'failed'}`;
    case 'attempt.verified': return `verified: ${d.recovered ? 'recovered' : 'not recovered'}`;
    case 'gate.started': return 'transfer gate started';
    case 'gate.action': return `gate ${String(d.property)} ${String(d.stage)} action ${String(d.index)}: exit ${String(d.exit_code)}`;
    case 'gate.fact': return `gate ${String(d.property)} ${String(d.stage)}: ${String(d.check)} ${d.ok ? 'held' : 'failed'}`;
    case 'gate.property': return `gate ${String(d.property)}: ${String(d.status)}${d.reason ? ` (${String(d.reason)})` : ''}`;
    case 'gate.verdict': return `verdict ${String(d.verdict)}`;
    case 'receipt.issued': return `receipt issued ${String(d.receipt_sha256).slice(0, 12)}…`;
    case 'attempt.reflected': return 'reflection recorded';
    case 'attempt.abandoned': return `abandoned: ${String(d.reason)}`;
    case 'world.reset': return `world reset: ${String(d.previous ?? '')}`;
    default: return e.type;
  }
}
