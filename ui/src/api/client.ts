// The one way the UI talks to the lab: same-origin JSON over fetch. Attempt routes are
// authorised by the HttpOnly cookie the server set when the attempt started, so the token is
// never read, stored or put in a URL here.
import type { ApiErrorBody } from './types';

export const kApi = '/api/v1';

export class ApiError extends Error {
  constructor(readonly body: ApiErrorBody) {
    super(body.message);
  }
}

// A reply that is not the API's error shape (a proxy's page, a dropped connection) still
// becomes an ApiError, so every caller shows one kind of error.
async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  try {
    const j = JSON.parse(text) as { error?: ApiErrorBody };
    if (j.error && typeof j.error.message === 'string') return new ApiError(j.error);
  } catch {
    // not JSON: fall through
  }
  return new ApiError({ status: res.status, code: 'internal', message: `HTTP ${res.status}: ${text.slice(0, 200) || res.statusText}` });
}

export async function request<T>(method: 'GET' | 'POST', path: string, body?: unknown, rawBody?: string): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (body !== undefined || rawBody !== undefined) {
    init.headers = { ...init.headers, 'Content-Type': 'application/json' };
    init.body = rawBody ?? JSON.stringify(body);
  }
  let res: Response;
  try {
    res = await fetch(`${kApi}${path}`, init);
  } catch (e) {
    throw new ApiError({ status: 0, code: 'unavailable', message: `the lab did not answer: ${(e as Error).message}` });
  }
  if (!res.ok) throw await errorOf(res);
  const text = await res.text();
  return (text === '' ? {} : JSON.parse(text)) as T;
}

export const get = <T>(path: string): Promise<T> => request<T>('GET', path);
export const post = <T>(path: string, body: unknown = {}): Promise<T> => request<T>('POST', path, body);
export const postRaw = <T>(path: string, text: string): Promise<T> => request<T>('POST', path, undefined, text);

export async function getText(url: string): Promise<string> {
  const res = await fetch(url, { credentials: 'same-origin' });
  if (!res.ok) throw await errorOf(res);
  return res.text();
}

export function errorOfUnknown(e: unknown): ApiErrorBody {
  if (e instanceof ApiError) return e.body;
  return { status: 0, code: 'internal', message: e instanceof Error ? e.message : String(e) };
}
