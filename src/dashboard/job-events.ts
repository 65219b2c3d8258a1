// A job's events, live: the server-sent event stream of GET …/events, authenticated by the session cookie.
// EventSource reconnects by itself with Last-Event-ID, so the server resumes after the last event seen; an
// event already shown (a resent frame) is dropped by its seq. A stream the server refuses (401, 404, …)
// closes for good: its error is read from the JSON form of the same URL, and the page offers to reconnect.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type ApiError, api } from './api.ts';
import { asApiError } from './hooks.ts';
import type { JobEvent } from './jobs.ts';

/** The `event:` names of the stream's frames (an EventSource only hands named frames to their listeners). */
const EVENT_TYPES = ['status', 'user_message', 'assistant_message', 'tool_call', 'tool_result', 'check', 'scope', 'commit', 'pull_request', 'error'];

export type Connection = 'connecting' | 'live' | 'reconnecting' | 'closed';

export interface LiveEvents {
  events: JobEvent[];
  connection: Connection;
  /** Why the stream closed, when the server said. */
  error: ApiError | undefined;
  reconnect: () => void;
}

export function useJobEvents(url: string): LiveEvents {
  const [events, setEvents] = useState<JobEvent[]>([]);
  const [connection, setConnection] = useState<Connection>('connecting');
  const [error, setError] = useState<ApiError>();
  const [attempt, setAttempt] = useState(0);
  const shown = useRef({ url, lastSeq: 0 });
  if (shown.current.url !== url) shown.current = { url, lastSeq: 0 };
  useEffect(() => {
    if (shown.current.lastSeq === 0) setEvents([]);
    setConnection('connecting');
    setError(undefined);
    // A fresh stream (a new page, or "Reconnect" after a refusal) starts after what is shown.
    const seen = shown.current;
    const source = new EventSource(`${url}?after=${seen.lastSeq}`);
    const onFrame = (frame: Event) => {
      // A job's `error` events share their name with the EventSource's own errors (plain Events, no data).
      if (!(frame instanceof MessageEvent)) return;
      const event = JSON.parse(frame.data as string) as JobEvent;
      if (event.seq <= seen.lastSeq) return;
      seen.lastSeq = event.seq;
      setEvents((list) => [...list, event]);
    };
    for (const type of EVENT_TYPES) source.addEventListener(type, onFrame);
    source.onopen = () => setConnection('live');
    source.onerror = (ev) => {
      if (ev instanceof MessageEvent) return;
      if (source.readyState !== EventSource.CLOSED) return setConnection('reconnecting');
      setConnection('closed');
      api('GET', `${url}?after=${seen.lastSeq}`).then(
        () => setError(undefined),
        (err: unknown) => setError(asApiError(err)),
      );
    };
    return () => source.close();
  }, [url, attempt]);
  const reconnect = useCallback(() => setAttempt((a) => a + 1), []);
  return { events, connection, error, reconnect };
}
