// Helpers that write into the learner's InterventionIR: a starting document from what the
// attempt already has (the predicted hypothesis, the unlocked evidence), and an action or a
// promised check added from the catalog. They edit parsed JSON and print it again, so they
// need a document that parses; the learner's own words are kept.

export function startingIr(hypothesis: string | undefined, evidence: string[]): string {
  const doc = {
    v: 1,
    hypothesis: hypothesis ?? '',
    claim: '',
    evidence,
    falsifier: '',
    actions: [] as unknown[],
    postconditions: [] as string[],
    invariants: [] as string[],
    rollback: [] as unknown[],
  };
  return pretty(doc);
}

// Two-space JSON with each action on one line, as the docs write an IR.
export function pretty(doc: unknown): string {
  const text = JSON.stringify(doc, null, 2);
  // collapse each action object inside "actions" / "rollback" to one line
  return text.replace(/\n {4}\{\n([\s\S]*?)\n {4}\}/g, (_m, inner: string) => {
    try {
      return `\n    ${JSON.stringify(JSON.parse(`{${inner}}`))}`;
    } catch {
      return _m;
    }
  });
}

export type Edit = { ok: true; text: string } | { ok: false; error: string };

function parseDoc(text: string): Record<string, unknown> | string {
  try {
    const d = JSON.parse(text) as unknown;
    if (typeof d !== 'object' || d === null || Array.isArray(d)) return 'the IR is not a JSON object';
    return d as Record<string, unknown>;
  } catch {
    return 'the IR is not valid JSON yet: fix the marked problem first';
  }
}

export function addAction(text: string, action: unknown, where: 'actions' | 'rollback'): Edit {
  const d = parseDoc(text);
  if (typeof d === 'string') return { ok: false, error: d };
  const list = Array.isArray(d[where]) ? (d[where] as unknown[]) : [];
  d[where] = [...list, action];
  return { ok: true, text: pretty(d) };
}

export function addCheck(text: string, id: string, kind: 'postcondition' | 'invariant'): Edit {
  const d = parseDoc(text);
  if (typeof d === 'string') return { ok: false, error: d };
  const key = kind === 'postcondition' ? 'postconditions' : 'invariants';
  const list = Array.isArray(d[key]) ? (d[key] as string[]) : [];
  if (!list.includes(id)) d[key] = [...list, id];
  return { ok: true, text: pretty(d) };
}
