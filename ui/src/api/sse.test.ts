import { describe, expect, it } from 'vitest';
import { openEventStream, type SseEvent, SseParser } from './sse';

describe('SseParser', () => {
  it('reads id, event and data, ignores comments, across chunk boundaries', () => {
    const p = new SseParser();
    const text = 'id: 7\nevent: gate.fact\ndata: {"ok":true}\n\n: keep-alive\n\nid: 8\r\nevent: gate.verdict\r\ndata: {"verdict":"VERIFIED"}\r\n\r\n';
    const out: SseEvent[] = [];
    for (let i = 0; i < text.length; i += 3) out.push(...p.push(text.slice(i, i + 3)));
    expect(out).toEqual([
      { id: '7', event: 'gate.fact', data: '{"ok":true}' },
      { id: '8', event: 'gate.verdict', data: '{"verdict":"VERIFIED"}' },
    ]);
  });
  it('joins multi-line data and leaves an unfinished event for later', () => {
    const p = new SseParser();
    expect(p.push('data: a\ndata: b\n')).toEqual([]);
    expect(p.push('\n')).toEqual([{ event: 'message', data: 'a\nb' }]);
  });
});

// A stand-in server: each connection gets the events after the Last-Event-ID it was sent,
// up to `perConnection` of them, then the connection ends (as the lab's stream ends after
// 45 s of silence or a frame it cannot relay). It records each request's Last-Event-ID.
function server(events: { id: number; type: string }[], perConnection: number, resend = 0) {
  const seen: (string | null)[] = [];
  const fetchImpl = (async (_url: string, init?: RequestInit) => {
    const h = (init?.headers ?? {}) as Record<string, string>;
    const last = h['Last-Event-ID'] ?? null;
    seen.push(last);
    // `resend` events at or before the last id are sent again, as a careless server might
    const after = last === null ? 0 : Number(last);
    const from = Math.max(0, events.findIndex((e) => e.id > after) - resend);
    const batch = events.slice(from < 0 ? events.length : from, (from < 0 ? events.length : from) + perConnection + resend);
    const body = batch.map((e) => `id: ${e.id}\nevent: ${e.type}\ndata: {}\n\n`).join('') + ': keep-alive\n\n';
    return new Response(new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(body));
        c.close();
      },
    }), { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
  }) as typeof fetch;
  return { fetchImpl, seen };
}

describe('openEventStream', () => {
  const events = [3, 5, 9, 12, 13].map((id) => ({ id, type: `e${id}` }));

  it('resumes after the last id on each reconnect and stops when told', async () => {
    const s = server(events, 2);
    const got: string[] = [];
    const h = openEventStream({
      url: '/x', fetchImpl: s.fetchImpl, retryMs: 1,
      onEvent: (e) => got.push(e.id!),
      shouldReconnect: () => got.length < events.length,
    });
    await h.done;
    expect(got).toEqual(['3', '5', '9', '12', '13']);
    expect(s.seen).toEqual([null, '5', '12']);
    expect(h.lastEventId()).toBe('13');
  });

  it('starts after a given Last-Event-ID and never delivers an event twice', async () => {
    const s = server(events, 2, 1);
    const got: string[] = [];
    const h = openEventStream({
      url: '/x', lastEventId: '5', fetchImpl: s.fetchImpl, retryMs: 1,
      onEvent: (e) => got.push(e.id!),
      shouldReconnect: () => got.length < 3,
    });
    await h.done;
    expect(s.seen[0]).toBe('5');
    expect(got).toEqual(['9', '12', '13']);
  });

  it('stops on a refusal that asking again cannot change (403), reporting its message', async () => {
    const statuses: string[] = [];
    const fetchImpl = (async () => new Response(JSON.stringify({ error: { status: 403, code: 'forbidden', message: 'the token presented does not open this attempt' } }), { status: 403 })) as typeof fetch;
    const h = openEventStream({ url: '/x', fetchImpl, retryMs: 1, onEvent: () => {}, onStatus: (s, d) => statuses.push(d ? `${s}: ${d}` : s) });
    await h.done;
    expect(statuses).toEqual(['connecting', 'error: the token presented does not open this attempt', 'closed']);
  });
});
