// Prometheus text format 0.0.4, the lines this page shows: name{labels} value.
export interface Series {
  name: string;
  labels?: Record<string, string>;
  value: number;
}

export function parseMetrics(text: string): Series[] {
  const out: Series[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const s: Series = { name: m[1]!, value: Number(m[4]) };
    if (m[3] !== undefined) {
      const labels: Record<string, string> = {};
      for (const l of m[3].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, '$1');
      s.labels = labels;
    }
    out.push(s);
  }
  return out;
}
