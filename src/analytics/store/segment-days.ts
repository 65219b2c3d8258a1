// Work over a project's raw events as their day segments hold them (segment-store.ts, the codec in
// src/analytics/segments): reading them back (rebuilds, audits, tests), rewriting a day with new classes
// (reclassification), merging a day's segments (compaction), and deriving the daily visits and views again.
// A day is read whole (its segments decoded and concatenated): memory follows the largest day, not the project.
import type { Kysely } from 'kysely';
import type { BulkWriter } from '../../db/bulk.ts';
import type { DB } from '../../db/schema.ts';
import { classify, RULES_VERSION } from '../classify/classify.ts';
import { isQualifyingView } from '../classify/qualify.ts';
import { encodeSegment, MAX_SEGMENT_EVENTS, mergeSegments, readDay, readSegmentHeader, type SegmentCategory, type SegmentEvent } from '../segments/codec.ts';
import type { FacetSourceRow } from './facet-store.ts';
import { segmentStore } from './segment-store.ts';
import { analyticsStore as store } from './store.ts';
import { CLS_AI, CLS_HUMAN } from './tables.ts';

type Q = Kysely<DB>;

/** A day's events, decoded from its segments (in seq order, each sorted by time). */
export async function readDayEvents(db: Q, projectOrd: number, day: number): Promise<SegmentEvent[]> {
  return readDay((await segmentStore.selectDaySegments(db, projectOrd, day)).map((s) => s.data));
}

/** A project's events day by day (ascending). */
export async function* projectDays(db: Q, projectOrd: number): AsyncGenerator<{ day: number; events: SegmentEvent[] }> {
  for (const day of await segmentStore.selectDays(db, projectOrd)) yield { day, events: await readDayEvents(db, projectOrd, day) };
}

/** A project's events as facet-rebuild.ts reads them, one day a page. */
export async function* facetSource(db: Q, projectOrd: number): AsyncGenerator<FacetSourceRow[]> {
  for await (const { day, events } of projectDays(db, projectOrd)) {
    const paths = await segmentStore.selectPathsById(db, [...new Set(events.map((e) => e.pathId))]);
    yield events.map((e) => ({
      day,
      visitor_ord: e.visitor,
      class: e.cls,
      rule: e.rule,
      qualifying: e.qualifying ? 1 : 0,
      method: e.method,
      status: e.status,
      referrer: e.referrer,
      path: paths.get(e.pathId) as string,
    }));
  }
}

/** Derives a project's daily views and visits from its segments (inside the caller's transaction, after deleteVisits). */
export async function rebuildVisits(trx: Q, bulk: BulkWriter, projectOrd: number): Promise<void> {
  for await (const { day, events } of projectDays(trx, projectOrd)) {
    const views = new Map<number, [number, number]>();
    const visits = new Set<string>();
    const visitValues: number[] = [];
    for (const e of events) {
      if (!e.qualifying || e.cls === 'crawler') continue;
      const human = e.cls === 'human';
      const v = views.get(e.pathId);
      if (v) v[human ? 0 : 1]++;
      else views.set(e.pathId, human ? [1, 0] : [0, 1]);
      const c = human ? CLS_HUMAN : CLS_AI;
      const k = `${e.pathId}:${e.visitor}:${c}`;
      if (visits.has(k)) continue;
      visits.add(k);
      visitValues.push(projectOrd, day, e.pathId, e.visitor, c);
    }
    const viewValues: number[] = [];
    for (const [pid, [h, a]] of views) viewValues.push(projectOrd, day, pid, h, a);
    for (let i = 0; i < viewValues.length; i += 5 * 5000) await store.bulkAddViews(bulk, trx, viewValues.slice(i, i + 5 * 5000));
    for (let i = 0; i < visitValues.length; i += 5 * 5000) await store.bulkInsertVisits(bulk, trx, visitValues.slice(i, i + 5 * 5000));
  }
}

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
    }
    return { scanned: events.length, changed };
  });
}

/**
 * Merges a (project, day)'s segments into as few as hold them, in one transaction, when it has more than
 * `minSegments`. The events are the same multiset, so no day version moves. Returns segments merged (0: none).
 */
export async function compactDay(db: Kysely<DB>, projectOrd: number, day: number, minSegments: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    // Takes the project's write lock first (see the ingest writer): writers and reclassification wait.
    await store.bumpVersion(trx, projectOrd);
    const stored = await segmentStore.selectDaySegments(trx, projectOrd, day);
    if (stored.length <= minSegments) return 0;
    await replaceSegments(
      trx,
      projectOrd,
      day,
      stored.map((s) => s.seq),
      withCounts(mergeSegments(stored.map((s) => s.data))),
    );
    return stored.length;
  });
}
