// The attempt's phases in order; only the phase the attempt is in is active.
import type { Phase } from '../api/types';

export const kRail: { phase: Exclude<Phase, 'done'>; label: string }[] = [
  { phase: 'observe', label: 'Observe' },
  { phase: 'predict', label: 'Predict' },
  { phase: 'inspect', label: 'Inspect' },
  { phase: 'contract', label: 'Contract' },
  { phase: 'apply', label: 'Apply' },
  { phase: 'ack', label: 'ACK' },
  { phase: 'verify', label: 'Verify' },
  { phase: 'transfer_gate', label: 'TransferGate' },
  { phase: 'receipt', label: 'Receipt' },
  { phase: 'reflect', label: 'Reflect' },
];

export function PhaseRail({ phase, onSelect }: { phase: Phase; onSelect: () => void }) {
  const current = phase === 'done' ? kRail.length : kRail.findIndex((r) => r.phase === phase);
  return (
    <nav aria-label="Attempt phases" className="phase-rail">
      <ol>
        {kRail.map((r, i) => {
          const state = i < current ? 'past' : i === current ? 'current' : 'future';
          return (
            <li key={r.phase} className={`rail-${state}`}>
              <button
                type="button"
                disabled={state !== 'current'}
                aria-current={state === 'current' ? 'step' : undefined}
                onClick={onSelect}
                data-phase={r.phase}
              >
                <span className="rail-num">{i + 1}</span> {r.label}
                <span className="visually-hidden">{state === 'past' ? ' (done)' : state === 'future' ? ' (not yet)' : ' (now)'}</span>
              </button>
            </li>
          );
        })}
      </ol>
      {phase === 'done' && <p className="rail-done">This attempt is done.</p>}
    </nav>
  );
}
