// A hash router: the lab's pages are #/..., so the server serves one index.html and a page can
// be reloaded or linked. Ids in routes (attempt, run, receipt digest) are not credentials.
import { useEffect, useState } from 'react';

export type Route =
  | { name: 'judge'; run?: string }
  | { name: 'capabilities' }
  | { name: 'scenarios' }
  | { name: 'attempt'; attempt: string }
  | { name: 'receipt'; sha?: string; attempt?: string }
  | { name: 'proof' }
  | { name: 'notfound'; path: string };

export function parseHash(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/';
  const parts = path.split('/').filter(Boolean);
  const [a, b, c] = parts;
  const hex = (s: string | undefined, n: number): boolean => s !== undefined && new RegExp(`^[0-9a-f]{${n}}$`).test(s);
  if (parts.length === 0) return { name: 'judge' };
  if (a === 'judge' && parts.length === 1) return { name: 'judge' };
  if (a === 'judge' && hex(b, 16) && parts.length === 2) return { name: 'judge', run: b! };
  if (a === 'capabilities' && parts.length === 1) return { name: 'capabilities' };
  if (a === 'scenarios' && parts.length === 1) return { name: 'scenarios' };
  if (a === 'attempt' && hex(b, 16) && parts.length === 2) return { name: 'attempt', attempt: b! };
  if (a === 'receipt' && parts.length === 1) return { name: 'receipt' };
  if (a === 'receipt' && hex(b, 64) && parts.length === 2) return { name: 'receipt', sha: b! };
  if (a === 'receipt' && b === 'attempt' && hex(c, 16) && parts.length === 3) return { name: 'receipt', attempt: c! };
  if (a === 'proof' && parts.length === 1) return { name: 'proof' };
  return { name: 'notfound', path };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(window.location.hash));
  useEffect(() => {
    const on = (): void => setRoute(parseHash(window.location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

export function go(hash: string): void {
  window.location.hash = hash;
}
