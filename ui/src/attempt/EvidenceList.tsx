// The evidence this attempt unlocked: each probe's call and result, its output in a terminal
// when opened (fetched then: the list carries no content).
import { useEffect, useState } from 'react';
import { errorOfUnknown, get } from '../api/client';
import type { ApiErrorBody, Evidence } from '../api/types';
import { ErrorBox } from '../components/ErrorBox';
import { Terminal } from '../components/Terminal';

export function EvidenceList({ attempt, items, openId }: { attempt: string; items: Evidence[]; openId?: string }) {
  if (items.length === 0) return <p>No evidence yet: run a probe.</p>;
  return (
    <ul className="evidence-list">
      {[...items].reverse().map((e) => (
        <li key={e.id}>
          <EvidenceItem attempt={attempt} item={e} open={e.id === openId} />
        </li>
      ))}
    </ul>
  );
}

function EvidenceItem({ attempt, item, open: initiallyOpen }: { attempt: string; item: Evidence; open: boolean }) {
  const [open, setOpen] = useState(initiallyOpen);
  const [content, setContent] = useState<string | null>(null);
  const [error, setError] = useState<ApiErrorBody | null>(null);
  // The newest probe's item opens when it becomes the newest, not only when it first renders:
  // the list may show it (from the event stream) a moment before the probe's own reply names it.
  useEffect(() => {
    if (initiallyOpen) setOpen(true);
  }, [initiallyOpen]);
  const toggle = async (o: boolean) => {
    setOpen(o);
    if (o && content === null) {
      try {
        const full = await get<Evidence>(`/attempts/${attempt}/evidence/${item.id}`);
        setContent(full.content ?? '');
      } catch (e) {
        setError(errorOfUnknown(e));
      }
    }
  };
  return (
    <details open={open} onToggle={(e) => void toggle((e.target as HTMLDetailsElement).open)} data-evidence={item.id}>
      <summary>
        <code>{item.id}</code> {item.call.call} <code className="params">{JSON.stringify(item.call.params ?? {})}</code> · exit {item.exit_code}
        {item.truncated ? ' · truncated' : ''} · seq {item.seq}
      </summary>
      <ErrorBox error={error} />
      {open && content !== null && <Terminal text={content} label={`Output of ${item.id} (${item.call.call})`} />}
    </details>
  );
}
