import { useCallback, useEffect, useRef, useState } from 'react';
import { errorOfUnknown } from '../api/client';
import type { ApiErrorBody } from '../api/types';

// Loads once (and again when `deps` change or reload() is called); polls when `everyMs` is set.
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], everyMs?: number) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiErrorBody | null>(null);
  const [at, setAt] = useState<Date | null>(null);
  const loadRef = useRef(load);
  loadRef.current = load;
  const reload = useCallback(async () => {
    try {
      const d = await loadRef.current();
      setData(d);
      setError(null);
      setAt(new Date());
    } catch (e) {
      setError(errorOfUnknown(e));
    }
  }, []);
  useEffect(() => {
    setData(null);
    void reload();
    if (!everyMs) return;
    const t = setInterval(() => void reload(), everyMs);
    return () => clearInterval(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  return { data, error, reload, at };
}

// Moves focus to a page's heading when the page changes, so keyboard and screen reader users
// start at the top of what they navigated to.
export function useFocusHeading(key: unknown) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, [key]);
  return ref;
}
