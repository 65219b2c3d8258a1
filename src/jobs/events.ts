// Job events: the stored history behind GET …/events and the live SSE stream.

import { scrubSecrets } from '../lib/logger.ts';
import { iso } from '../lib/time.ts';
import type { EventRow, JobsStoreQueries } from './store.ts';

export const EVENT_TYPES = [
  'status',
  'user_message',
  'assistant_message',
  'tool_call',
  'tool_result',
  'check',
  'scope',
  'commit',
  'pull_request',
  'error',
] as const;
export type JobEventType = (typeof EVENT_TYPES)[number];

export interface JobEvent {
  seq: number;
  type: JobEventType;
  at: string;
  data: Record<string, unknown>;
}

/** Longest text kept in one event field: events summarise, they never carry whole files. */
const MAX_EVENT_TEXT = 4000;

function clip(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.length > MAX_EVENT_TEXT ? `${value.slice(0, MAX_EVENT_TEXT)}… (${value.length} chars)` : value;
  if (depth > 6) return '…';
  if (Array.isArray(value)) return value.slice(0, 200).map((v) => clip(v, depth + 1));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clip(v, depth + 1)]));
  return value;
}

/** JSON text for an event's data: clipped and scrubbed of anything that looks like a secret. */
export function eventDataText(data: Record<string, unknown>): string {
  return scrubSecrets(JSON.stringify(clip(data) ?? {}));
}

/**
 * Appends an event inside the caller's transaction. The job row stays locked from the sequence
 * number until commit, so events of one job become visible strictly in `seq` order — a reader that
 * has seen seq N never later finds a smaller one.
 */
export async function appendEvent(tx: JobsStoreQueries, jobId: string, type: JobEventType, data: Record<string, unknown>, at: number): Promise<number> {
  const seq = await tx.nextEventSeq(jobId);
  await tx.insertEvent({ job_id: jobId, seq, type, at, data: eventDataText(data) });
  return seq;
}

export function toJobEvent(r: EventRow): JobEvent {
  let data: Record<string, unknown> = {};
  try {
    data = JSON.parse(r.data) as Record<string, unknown>;
  } catch {
    // stored by us as JSON; leave empty if somehow not
  }
  return { seq: Number(r.seq), type: r.type as JobEventType, at: iso(Number(r.at)), data };
}

/** One Server-Sent Events frame: `id` is the seq (for Last-Event-ID), `event` the type. */
export function sseFrame(e: JobEvent): string {
  return `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
}

/**
 * The largest event seq a job can have: job_events.seq and jobs.event_seq are `integer` columns (32-bit on
 * PostgreSQL). A larger Last-Event-ID / `after` means "after every event" and is read as this value, so it
 * never reaches the database (where PostgreSQL would refuse it as out of range).
 */
export const MAX_EVENT_SEQ = 2 ** 31 - 1;

/**
 * Parses a Last-Event-ID / `after` value: whole-number digits (surrounding spaces allowed, any length),
 * clamped to MAX_EVENT_SEQ; null when it is not a whole number.
 */
export function parseSeq(value: string | undefined): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (!/^\d+$/.test(v)) return null;
  return clampSeq(Number(v));
}

/** A non-negative seq bound to what the columns hold (a huge or infinite one becomes MAX_EVENT_SEQ). */
export function clampSeq(seq: number): number {
  return Math.min(seq, MAX_EVENT_SEQ);
}
