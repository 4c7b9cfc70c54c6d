// Where a JSON path the lab names ($.actions[1].params.path) lies in the document the learner
// wrote, so the editor can mark the error there; and where a syntax error lies, as line and
// column. The lab's validator reports one error at a time, at the first failure.
import { type JsonNode, parseSpans } from '../verify/json_spans';

export type Segment = { key: string } | { index: number };

// "$.a.b[2]" -> [{key:a},{key:b},{index:2}]; null when it is not a path of that form.
export function parsePath(path: string): Segment[] | null {
  if (!path.startsWith('$')) return null;
  const out: Segment[] = [];
  const re = /\.([^.[\]]+)|\[(\d+)\]/y;
  re.lastIndex = 1;
  while (re.lastIndex < path.length) {
    const m = re.exec(path);
    if (!m) return null;
    out.push(m[1] !== undefined ? { key: m[1] } : { index: Number(m[2]) });
  }
  return out;
}

// The path a refusal names, from its `path` member or from the front of its message
// ("$.actions[0].params.node: no target term ..."; a probe's "probe: params.path: ...").
export function pathOfMessage(message: string): string | null {
  const m = /^(\$(?:\.[^.[\]\s:]+|\[\d+\])*): /.exec(message);
  if (m) return m[1]!;
  const p = /^[a-z]+: ((?:[A-Za-z_][\w-]*)(?:\.[A-Za-z_][\w-]*|\[\d+\])*): /.exec(message);
  return p ? `$.${p[1]}` : null;
}

export interface Located {
  from: number;
  to: number;
  exact: boolean;  // false: the path's node does not exist; this is its nearest ancestor
}

// The range of the node at `path` in `text`: a member's name through its value, an element's
// value. A path to something missing ("missing (required)") gives its nearest ancestor, so
// the mark is where it must be added.
export function locate(text: string, path: string): Located | null {
  const segs = parsePath(path);
  const spans = parseSpans(text);
  if (!segs || !spans.ok) return null;
  let node: JsonNode = spans.root;
  let from = node.start;
  for (const s of segs) {
    if ('key' in s) {
      const m = node.members?.find((x) => x.key === s.key);
      if (!m) return { from: node.start, to: node.start + 1, exact: false };
      // from the member's name: search back from its value for the quoted key
      const keyAt = text.lastIndexOf(JSON.stringify(m.key), m.node.start);
      from = keyAt >= node.start ? keyAt : m.node.start;
      node = m.node;
    } else {
      const e = node.elements?.[s.index];
      if (!e) return { from: node.start, to: node.start + 1, exact: false };
      from = e.start;
      node = e;
    }
  }
  return { from, to: node.end, exact: true };
}

export interface SyntaxProblem {
  at: number;
  line: number;  // from 1
  column: number;  // from 1
  message: string;
}

// A JSON syntax problem with its line and column, or null when the text is JSON (duplicate
// members included as problems: the lab refuses them).
export function syntaxProblem(text: string): SyntaxProblem | null {
  const r = parseSpans(text);
  if (r.ok) return null;
  const at = r.at;
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  const column = at - (before.lastIndexOf('\n') + 1) + 1;
  const where = r.path === '$' || r.path === '' ? '' : ` (at ${r.path.startsWith('$') ? r.path : `$.${r.path}`})`;
  return { at, line, column, message: `line ${line}, column ${column}: ${r.error}${where}` };
}
