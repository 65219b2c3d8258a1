// Work over a project's raw events as their day segments hold them (segment-store.ts, the codec in
// src/analytics/segments): reading them back (audits, tests), rewriting a day with new classes
// (reclassification) and merging a day's segments (compaction). Both replace segments, so both mark the day
// rewritten (summary-store.ts rewriteDay): its summaries are then rebuilt, never extended (summary-service.ts).
// A day is read whole (its segments decoded and concatenated): memory follows the largest day, not the project.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { classify, RULES_VERSION } from '../classify/classify.ts';
import { isQualifyingView } from '../classify/qualify.ts';
import { encodeSegment, MAX_SEGMENT_EVENTS, mergeSegments, readDay, readSegmentHeader, type SegmentCategory, type SegmentEvent } from '../segments/codec.ts';
import { pickMerge } from './compaction-policy.ts';
import { segmentStore } from './segment-store.ts';
import { analyticsStore as store } from './store.ts';
import { summaryStore } from './summary-store.ts';

type Q = Kysely<DB>;

/** A day's events, decoded from its segments (in seq order, each sorted by time). */
export async function readDayEvents(db: Q, projectOrd: number, day: number): Promise<SegmentEvent[]> {
  return readDay((await segmentStore.selectDaySegments(db, projectOrd, day)).map((s) => s.data));
}

/** A project's events day by day (ascending). */
export async function* projectDays(db: Q, projectOrd: number): AsyncGenerator<{ day: number; events: SegmentEvent[] }> {
  for (const day of await segmentStore.selectDays(db, projectOrd)) yield { day, events: await readDayEvents(db, projectOrd, day) };
}

/** Whether an event counts for the series or the breakdowns (summary-store.ts has_data). */
const hasData = (e: SegmentEvent): boolean => e.qualifying || (e.cls !== 'human' && e.rule !== null);

/** Events sorted stably by time, in segments of at most MAX_SEGMENT_EVENTS. */
function encodeDay(events: SegmentEvent[]): Uint8Array[] {
  const order = events.map((_, i) => i).sort((a, b) => (events[a] as SegmentEvent).ts - (events[b] as SegmentEvent).ts || a - b);
  const sorted = order.map((i) => events[i] as SegmentEvent);
  const out: Uint8Array[] = [];
  for (let i = 0; i < sorted.length; i += MAX_SEGMENT_EVENTS) out.push(encodeSegment(sorted.slice(i, i + MAX_SEGMENT_EVENTS)));
  return out;
}

function withCounts(segments: Uint8Array[]): { data: Uint8Array; events: number }[] {
  return segments.map((data) => ({ data, events: readSegmentHeader(data).events }));
}

/**
 * Replaces a (project, day)'s segments of `seqs` by `replacement` (no more of them: they take the largest of
 * those seqs, so a day's seqs stay unique and below the next appended one). Throws when the segments read are no
 * longer all there (another process replaced them), which rolls the caller's transaction back.
 */
async function replaceSegments(trx: Q, projectOrd: number, day: number, seqs: number[], replacement: { data: Uint8Array; events: number }[]): Promise<void> {
  if (replacement.length > seqs.length) throw new Error('segment replacement: more segments than it replaces');
  const deleted = await segmentStore.deleteSegments(trx, projectOrd, day, seqs);
  if (deleted !== seqs.length) throw new Error(`segments of day ${day} changed while being rewritten`);
  const sorted = [...seqs].sort((a, b) => a - b).slice(seqs.length - replacement.length);
  for (let i = 0; i < replacement.length; i++) {
    const r = replacement[i] as { data: Uint8Array; events: number };
    await segmentStore.insertSegment(trx, projectOrd, day, sorted[i] as number, r.events, r.data);
  }
}

/**
 * Re-derives the classes of one day's events with the current rules and rewrites its segments when any changed,
 * in one transaction (the version bump first takes the project's write lock). Returns events looked at and changed.
 */
export async function reclassifyDay(db: Kysely<DB>, projectOrd: number, day: number): Promise<{ scanned: number; changed: number }> {
  return db.transaction().execute(async (trx) => {
    await store.bumpVersion(trx, projectOrd);
    const stored = await segmentStore.selectDaySegments(trx, projectOrd, day);
    const events = readDay(stored.map((s) => s.data));
    const paths = await segmentStore.selectPathsById(trx, [...new Set(events.map((e) => e.pathId))]);
    const uaIds = [...new Set(events.map((e) => e.uaId).filter((u): u is number => u !== null))];
    const uas = await segmentStore.selectUserAgentsById(trx, uaIds);
    let changed = 0;
    const next = events.map((e) => {
      const path = paths.get(e.pathId) as string;
      const c = classify({ userAgent: e.uaId === null ? null : (uas.get(e.uaId) ?? null), path: e.rawPath ?? path, accept: e.accept });
      const qualifying = isQualifyingView({ method: e.method, status: e.status, path, class: c.class });
      if (c.class === e.cls && c.category === e.category && c.rule === e.rule && e.rulesVersion === RULES_VERSION && qualifying === e.qualifying) return e;
      changed++;
      return { ...e, cls: c.class, category: c.category as SegmentCategory, rule: c.rule, rulesVersion: RULES_VERSION, qualifying };
    });
    if (changed > 0) {
      await replaceSegments(
        trx,
        projectOrd,
        day,
        stored.map((s) => s.seq),
        withCounts(encodeDay(next)),
      );
      await summaryStore.rewriteDay(trx, projectOrd, day, next.some(hasData));
    }
    return { scanned: events.length, changed };
  });
}

/** A day's segments read for compaction (readCompaction), to be merged and swapped in (swapCompaction). */
export interface CompactionPlan {
  projectOrd: number;
  day: number;
  /** The day's last rewrite when it was read (`analytics_day_versions.rewritten`; 0: never). */
  rewritten: number;
  seqs: number[];
  segments: Uint8Array[];
}

/**
 * Compaction's first step, holding no write lock: the segments of a (project, day) that the policy picks
 * (compaction-policy.ts pickMerge: a tier's small segments, or the whole quiet day), when the day has more than
 * `minSegments`, with the day's `rewritten` read BEFORE them (a replacement committed between the two reads then
 * shows as a changed `rewritten` at the swap, on PostgreSQL's statement snapshots too). Only the picked segments'
 * bytes are read. Null: nothing to do.
 */
export async function readCompaction(db: Kysely<DB>, projectOrd: number, day: number, minSegments: number, quiet = true): Promise<CompactionPlan | null> {
  return db.transaction().execute(async (trx) => {
    const v = (await summaryStore.selectDayVersions(trx, projectOrd, { fromDay: day, toDay: day + 1 }))[0];
    const sizes = await segmentStore.selectDaySegmentSizes(trx, projectOrd, day);
    if (sizes.length <= minSegments) return null;
    const seqs = pickMerge(sizes, minSegments, quiet);
    if (seqs === null) return null;
    const stored = await segmentStore.selectSegmentsBySeq(trx, projectOrd, day, seqs);
    // Replaced since the sizes were read (another process compacted the day): its next step looks again.
    if (stored.length !== seqs.length) return null;
    return { projectOrd, day, rewritten: v?.rewritten ?? 0, seqs: stored.map((s) => s.seq), segments: stored.map((s) => s.data) };
  });
}

/** What the swap needs of a plan (not the segments themselves). */
export type SwapPlan = Omit<CompactionPlan, 'segments'>;

/**
 * Why a swap was not made: `replaced`, the day was rewritten since it was read; `summary`, it would make a summary
 * stale. A swap made says the day's version it moved from and to (null: the day had none): a summary exact at
 * `from` is exact at `to` (see swapCompaction), so a cache may carry it too.
 */
export type SwapOutcome =
  | { swapped: true; segments: number; version: { from: number; to: number } | null }
  | { swapped: false; reason: 'replaced' | 'summary' };

/**
 * Compaction's last step, one short transaction: replaces the plan's segments by `merged` (mergeSegments of
 * them, done outside any transaction) unless the day was rewritten since the plan was read, or its persisted
 * summary is not of the current version (it could no longer be extended: carrying a current one is what keeps
 * finished days' summaries current; a later step tries again). Segments appended since the read have larger seqs
 * and stay as they are. The events are the same multiset, but the segments below a cached summary's maxSeq changed,
 * so the day is marked rewritten (a new version), and a persisted summary of the version before is carried to
 * the new one.
 */
export async function swapCompaction(db: Kysely<DB>, plan: SwapPlan, merged: Uint8Array[]): Promise<SwapOutcome> {
  const { projectOrd, day } = plan;
  return db.transaction().execute(async (trx): Promise<SwapOutcome> => {
    // Takes the project's write lock first (see the ingest writer): writers and reclassification wait, briefly.
    await store.bumpVersion(trx, projectOrd);
    const v = (await summaryStore.selectDayVersions(trx, projectOrd, { fromDay: day, toDay: day + 1 }))[0];
    if ((v?.rewritten ?? 0) !== plan.rewritten) return { swapped: false, reason: 'replaced' };
    const before = v?.version;
    if (before !== undefined) {
      const summary = await summaryStore.selectSummaryVersion(trx, projectOrd, day);
      if (summary !== undefined && summary !== before) return { swapped: false, reason: 'summary' };
    }
    await replaceSegments(trx, projectOrd, day, plan.seqs, withCounts(merged));
    await summaryStore.rewriteDay(trx, projectOrd, day, false);
    // A persisted summary of the current version stays exact at the new one: it covers every segment of the day
    // (seqs <= its maxSeq, those appended after the plan was read too: the project's write lock is held), the
    // merged segments hold the same events under seqs taken from the replaced ones, so its maxSeq still bounds
    // them. Carried over rather than rebuilt (bench:scale: compaction would otherwise make every finished day's
    // summary stale).
    if (before !== undefined) await summaryStore.carrySummary(trx, projectOrd, day, before, before + 1);
    return { swapped: true, segments: plan.seqs.length, version: before === undefined ? null : { from: before, to: before + 1 } };
  });
}

/** Merges segments (codec mergeSegments): in this thread, or in a worker thread (segments/merge-worker-client.ts). */
export type SegmentMerge = (segments: Uint8Array[]) => Promise<Uint8Array[]>;

export const mergeInThread: SegmentMerge = async (segments) => mergeSegments(segments);

/**
 * Merges the segments of a (project, day) that the policy picks when it has more than `minSegments` (`quiet`: its
 * version did not move since compaction last looked, so the whole day may be merged): read without
 * the write lock, merged by `merge` (off the serving thread in the service), swapped in by a short transaction
 * (`swap`: swapCompaction on this connection unless the caller runs it elsewhere, e.g. the ingest writer's
 * thread). Returns segments merged (0: none, or given up because the day changed meanwhile).
 */
export async function compactDay(
  db: Kysely<DB>,
  projectOrd: number,
  day: number,
  minSegments: number,
  merge: SegmentMerge = mergeInThread,
  swap: (plan: SwapPlan, merged: Uint8Array[]) => Promise<SwapOutcome> = (plan, merged) => swapCompaction(db, plan, merged),
  quiet = true,
): Promise<number> {
  const plan = await readCompaction(db, projectOrd, day, minSegments, quiet);
  if (plan === null) return 0;
  const { segments, ...swapPlan } = plan;
  const merged = await merge(segments);
  const r = await swap(swapPlan, merged);
  return r.swapped ? r.segments : 0;
}
