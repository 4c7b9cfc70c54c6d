// A small strict JSON reader that keeps where each value lies in the text, so a verifier can
// hash a section's exact bytes (receipts hash stored bytes, never re-serialised JSON) and name
// the path of what is wrong. It refuses duplicate members at any depth, as the lab's reader does.

export interface JsonNode {
  kind: 'object' | 'array' | 'string' | 'number' | 'literal';
  start: number;  // offset in the text (UTF-16 units) of the first character
  end: number;  // one past the last
  members?: { key: string; node: JsonNode }[];
  elements?: JsonNode[];
}

export interface SpanOptions {
  compact?: boolean;  // refuse insignificant whitespace
  maxDepth?: number;
}

export type SpanResult =
  | { ok: true; root: JsonNode; compact: boolean }
  | { ok: false; path: string; error: string; at: number };

class Fail {
  constructor(
    readonly path: string,
    readonly error: string,
    readonly at = -1,
  ) {}
}

export function memberPath(parent: string, key: string): string {
  const shown = [...key].map((c) => (c >= ' ' && c <= '~' && c !== '"' ? c : '?')).join('');
  const cut = shown.length > 64 ? `${shown.slice(0, 64)}...` : shown;
  return parent === '' ? cut : `${parent}.${cut}`;
}

export function parseSpans(text: string, opts: SpanOptions = {}): SpanResult {
  const maxDepth = opts.maxDepth ?? 64;
  let i = 0;
  let sawSpace = false;
  const ws = (): void => {
    while (i < text.length) {
      const c = text[i];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
        sawSpace = true;
        i++;
      } else break;
    }
  };
  const value = (path: string, depth: number): JsonNode => {
    ws();
    const start = i;
    const c = text[i];
    const where = path === '' ? '$' : path;
    if (c === '{' || c === '[') {
      if (depth + 1 > maxDepth) throw new Fail(where, `nesting deeper than ${maxDepth} levels`);
    }
    if (c === '{') {
      i++;
      const members: { key: string; node: JsonNode }[] = [];
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return { kind: 'object', start, end: i, members };
      }
      for (;;) {
        ws();
        if (text[i] !== '"') throw new Fail(where, 'expected a member name');
        const key = JSON.parse(text.slice(i, stringEnd(where))) as string;
        const p = memberPath(path, key);
        if (seen.has(key)) throw new Fail(p, 'duplicate member', i);
        seen.add(key);
        ws();
        if (text[i] !== ':') throw new Fail(p, "expected ':'");
        i++;
        members.push({ key, node: value(p, depth + 1) });
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return { kind: 'object', start, end: i, members };
        }
        throw new Fail(where, "expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const elements: JsonNode[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return { kind: 'array', start, end: i, elements };
      }
      for (;;) {
        elements.push(value(`${path}[${elements.length}]`, depth + 1));
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return { kind: 'array', start, end: i, elements };
        }
        throw new Fail(where, "expected ',' or ']'");
      }
    }
    if (c === '"') {
      i = stringEnd(where);
      return { kind: 'string', start, end: i };
    }
    const m = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 400));
    if (m && m[0].length > 0) {
      i += m[0].length;
      return { kind: 'number', start, end: i };
    }
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return { kind: 'literal', start, end: i };
      }
    }
    throw new Fail(where, i >= text.length ? 'unexpected end of the document' : `unexpected ${JSON.stringify(text[i])}`);
  };
  // Returns the offset one past the closing quote of the string starting at i; checks escapes
  // and refuses raw control characters.
  const stringEnd = (where: string): number => {
    let j = i + 1;
    while (j < text.length) {
      const ch = text.charCodeAt(j);
      if (ch === 0x22) {
        const end = j + 1;
        i = end;
        return end;
      }
      if (ch < 0x20) throw new Fail(where, 'a raw control character in a string', j);
      if (ch === 0x5c) {
        const e = text[j + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(j + 2, j + 6))) throw new Fail(where, 'a bad \\u escape');
          j += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) throw new Fail(where, 'a bad escape');
        j += 2;
        continue;
      }
      j++;
    }
    throw new Fail(where, 'an unterminated string', j);
  };
  try {
    const root = value('', 0);
    ws();
    if (i !== text.length) throw new Fail('$', 'text after the document');
    if (opts.compact && sawSpace) return { ok: false, path: '$', error: 'not compact (insignificant whitespace)', at: 0 };
    return { ok: true, root, compact: !sawSpace };
  } catch (e) {
    if (e instanceof Fail) return { ok: false, path: e.path, error: e.error, at: e.at >= 0 ? e.at : Math.min(i, text.length) };
    throw e;
  }
}

export function member(node: JsonNode | undefined, key: string): JsonNode | undefined {
  return node?.members?.find((m) => m.key === key)?.node;
}

// The first duplicate member anywhere in a JSON text, as "PATH: duplicate member", or null.
export function firstDuplicate(text: string): string | null {
  const r = parseSpans(text);
  if (r.ok || r.error !== 'duplicate member') return null;
  return `${r.path}: duplicate member`;
}
