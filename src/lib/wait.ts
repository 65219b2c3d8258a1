// Waiting that a stop cuts short, and the Retry-After a server asks for. Pure apart from the timer.
import { setTimeout as delay } from 'node:timers/promises';

/** Resolves after `ms`; rejects with the signal's own reason as soon as it aborts (Node's timer rejects with an AbortError instead). */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, signal ? { signal } : undefined);
  } catch (err) {
    throw signal?.aborted ? signal.reason : err;
  }
}

/** Seconds (or an HTTP date) of a `Retry-After` header, in ms; null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
