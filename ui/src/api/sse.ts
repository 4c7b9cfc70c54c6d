// Server-sent events over fetch, so the stream can be resumed with Last-Event-ID on the first
// connection too (EventSource cannot set it) and so a stream that ends is noticed. Each event's
// id is its log seq: on reconnect the server sends only what came after it, and an event at or
// below the last seq seen is dropped, so nothing is shown twice.

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

// Incremental parser of the text/event-stream format (WHATWG HTML §9.2.6) for the fields this
// lab sends: id, event, data; comment lines (": keep-alive") are ignored.
// An event's data as a JSON object; null when it is not one (the event is then skipped).
export function eventData(e: SseEvent): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(e.data);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export class SseParser {
  private buffer = '';
  private id: string | undefined;
  private event = '';
  private data: string[] = [];

  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (!m) break;
      // a lone \r at the very end may be the first half of \r\n: wait for more
      if (m[0] === '\r' && m.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      if (line === '') {
        if (this.data.length > 0 || this.event !== '') {
          out.push({ ...(this.id !== undefined ? { id: this.id } : {}), event: this.event || 'message', data: this.data.join('\n') });
        }
        this.event = '';
        this.data = [];
        this.id = undefined;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'id') this.id = value;
      else if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
    }
    return out;
  }
}

export type StreamStatus = 'connecting' | 'open' | 'ended' | 'closed' | 'error';

export interface StreamOptions {
  url: string;
  lastEventId?: string;
  onEvent: (e: SseEvent) => void;
  onStatus?: (s: StreamStatus, detail?: string) => void;
  // Asked when a stream ends: reconnect (resuming after the last id) or stop. Default: reconnect.
  shouldReconnect?: () => boolean;
  retryMs?: number;
  fetchImpl?: typeof fetch;
}

export interface StreamHandle {
  close(): void;
  lastEventId(): string | undefined;
  done: Promise<void>;
}

const seqOf = (id: string | undefined): number | null => (id !== undefined && /^[0-9]{1,20}$/.test(id) ? Number(id) : null);

export function openEventStream(opts: StreamOptions): StreamHandle {
  const fetchImpl = opts.fetchImpl ?? fetch.bind(globalThis);
  const retryMs = opts.retryMs ?? 1000;
  let last = opts.lastEventId;
  let closed = false;
  let controller: AbortController | null = null;
  const status = (s: StreamStatus, d?: string): void => opts.onStatus?.(s, d);
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

  const once = async (): Promise<'ended' | 'stop'> => {
    controller = new AbortController();
    const headers: Record<string, string> = { Accept: 'text/event-stream' };
    if (last !== undefined) headers['Last-Event-ID'] = last;
    status('connecting');
    const res = await fetchImpl(opts.url, { headers, credentials: 'same-origin', signal: controller.signal });
    if (!res.ok || !res.body) {
      let message = `HTTP ${res.status}`;
      try {
        const j = (await res.json()) as { error?: { message?: string } };
        if (j.error?.message) message = j.error.message;
      } catch {
        // not JSON
      }
      status('error', message);
      // 429 and 503 pass; anything else (401, 403, 404) will not change by asking again
      return res.status === 429 || res.status === 503 ? 'ended' : 'stop';
    }
    status('open');
    const parser = new SseParser();
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const e of parser.push(value)) {
        const seq = seqOf(e.id);
        const lastSeq = seqOf(last);
        if (seq !== null && lastSeq !== null && seq <= lastSeq) continue;
        if (e.id !== undefined && seq !== null) last = e.id;
        if (!closed) opts.onEvent(e);
      }
    }
    return 'ended';
  };

  const done = (async () => {
    while (!closed) {
      let r: 'ended' | 'stop';
      try {
        r = await once();
      } catch (e) {
        if (closed) break;
        status('error', (e as Error).message);
        r = 'ended';
      }
      if (closed) break;
      if (r === 'stop') {
        closed = true;
        break;
      }
      status('ended');
      if (opts.shouldReconnect && !opts.shouldReconnect()) {
        closed = true;
        break;
      }
      await sleep(retryMs);
    }
    status('closed');
  })();

  return {
    close() {
      closed = true;
      controller?.abort();
    },
    lastEventId: () => last,
    done,
  };
}
