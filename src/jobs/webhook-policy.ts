// Pure webhook rules: payload shape, retry schedule, and what happens after an attempt. No I/O.
import { iso } from '../lib/time.ts';

export type WebhookEventType = 'job.completed' | 'job.failed' | 'job.archived';

export interface WebhookEvent {
  type: WebhookEventType;
  data: object;
}

/** The request body: `{type, timestamp, data}` (Standard Webhooks' recommended payload structure). */
export function webhookPayload(event: WebhookEvent, at: number): string {
  return JSON.stringify({ type: event.type, timestamp: iso(at), data: event.data });
}

/** Delay before the next attempt after `attempts` attempts have failed (1-based); the last entry repeats. */
export function retryDelay(attempts: number, scheduleMs: readonly number[]): number {
  if (scheduleMs.length === 0) throw new Error('retry schedule is empty');
  const i = Math.min(Math.max(attempts, 1), scheduleMs.length) - 1;
  return scheduleMs[i] as number;
}

export type AttemptOutcome =
  | { kind: 'delivered'; statusCode: number }
  /** Worth trying again later (network error, timeout, non-2xx). */
  | { kind: 'retryable'; statusCode: number | null; error: string }
  /** Never worth retrying (the target is refused). */
  | { kind: 'permanent'; statusCode: number | null; error: string }
  /** The project's webhook was removed before the attempt. */
  | { kind: 'cancelled'; error: string };

export type NextState =
  | { status: 'delivered'; deliveredAt: number }
  | { status: 'pending'; nextAttemptAt: number }
  | { status: 'failed' }
  | { status: 'cancelled' };

export interface RetryPolicy {
  retryScheduleMs: readonly number[];
  maxAgeMs: number;
}

/** Where a delivery goes after an attempt that finished at `now`. */
export function nextState(outcome: AttemptOutcome, attempts: number, createdAt: number, now: number, policy: RetryPolicy): NextState {
  switch (outcome.kind) {
    case 'delivered':
      return { status: 'delivered', deliveredAt: now };
    case 'cancelled':
      return { status: 'cancelled' };
    case 'permanent':
      return { status: 'failed' };
    case 'retryable': {
      const at = now + retryDelay(attempts, policy.retryScheduleMs);
      return at > createdAt + policy.maxAgeMs ? { status: 'failed' } : { status: 'pending', nextAttemptAt: at };
    }
  }
}

export function isSuccessStatus(code: number): boolean {
  return code >= 200 && code < 300;
}
