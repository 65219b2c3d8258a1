// Loading data from the API in a component: the answer, the error to show, and whether it is loading.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, api } from './api.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload: () => void;
}

/** GETs `path` (again whenever it changes; null: nothing to load). A stale answer never replaces a newer one. */
export function useApi<T>(path: string | null): Loaded<T> {
  // The data is kept with the path it answers: a reload of the same path keeps showing it until the new answer
  // arrives, but another path (a new filter or range) never shows the previous path's rows under its heading.
  const [state, setState] = useState<{ path: string | null; data?: T; error?: ApiError; loading: boolean }>({ path, loading: path !== null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (path === null) return;
    let current = true;
    setState((s) => (s.path === path ? { ...s, loading: true, error: undefined } : { path, loading: true }));
    api<T>('GET', path).then(
      (data) => current && setState({ path, data, loading: false }),
      (err: unknown) => current && setState({ path, loading: false, error: asApiError(err) }),
    );
    return () => {
      current = false;
    };
  }, [path, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const mine = state.path === path;
  return { data: mine ? state.data : undefined, error: mine ? state.error : undefined, loading: mine ? state.loading : path !== null, reload };
}

export function asApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError(0, 'client_error', err instanceof Error ? err.message : String(err));
}

export interface Paged<Row> {
  rows: Row[];
  hasMore: boolean;
  loading: boolean;
  error: ApiError | undefined;
  loadMore: () => void;
}

/**
 * Walks a paged API list (`limit`/`offset`, `hasMore`) one page per `loadMore`, keeping the rows loaded so
 * far; starts over when `path` (the list's URL with its query, without limit/offset) changes.
 */
export function usePaged<Row>(path: string | null, listKey: string, pageSize = 100): Paged<Row> {
  const [state, setState] = useState<{ path: string | null; rows: Row[]; hasMore: boolean; loading: boolean; error?: ApiError }>({
    path: null,
    rows: [],
    hasMore: false,
    loading: false,
  });
  const load = useCallback(
    (offset: number) => {
      if (path === null) return;
      setState((s) => ({ path, rows: s.path === path ? s.rows : [], hasMore: s.path === path && s.hasMore, loading: true }));
      const sep = path.includes('?') ? '&' : '?';
      api<Record<string, unknown>>('GET', `${path}${sep}limit=${pageSize}&offset=${offset}`).then(
        (page) =>
          setState((s) =>
            s.path === path ? { path, rows: [...s.rows.slice(0, offset), ...(page[listKey] as Row[])], hasMore: page.hasMore === true, loading: false } : s,
          ),
        (err: unknown) => setState((s) => (s.path === path ? { ...s, loading: false, error: asApiError(err) } : s)),
      );
    },
    [path, listKey, pageSize],
  );
  useEffect(() => load(0), [load]);
  const loaded = state.path === path ? state : { rows: [] as Row[], hasMore: false, loading: path !== null, error: undefined };
  return { rows: loaded.rows, hasMore: loaded.hasMore, loading: loaded.loading, error: loaded.error, loadMore: () => load(loaded.rows.length) };
}

/**
 * Calls `callback` every `everyMs` while the page is visible, and once at once when it becomes visible again
 * (a hidden tab asks the server nothing).
 */
export function useWhileVisible(callback: () => void, everyMs: number): void {
  useEffect(() => {
    let timer: ReturnType<typeof setInterval> | undefined;
    const start = () => {
      if (timer === undefined) timer = setInterval(callback, everyMs);
    };
    const stop = () => {
      clearInterval(timer);
      timer = undefined;
    };
    const onVisibility = () => {
      if (document.visibilityState === 'visible') {
        callback();
        start();
      } else stop();
    };
    if (document.visibilityState === 'visible') start();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      stop();
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [callback, everyMs]);
}
