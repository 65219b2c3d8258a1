// Which of a day's segments compaction merges: size tiers, as a log-structured merge tree does. Pure: no I/O.
//
// A segment's tier is floor(log_F(events)) (F = COMPACT_FANOUT, 8: 1–7 events tier 0, 8–63 tier 1, … 262,144 and
// more tier 6). Compaction merges the segments of the lowest tier that holds F or more of them, and only those: F
// segments of tier t hold at least F^(t+1) events, so the merged one is of a higher tier. An event is therefore
// rewritten once per tier it climbs, at most log_F(day's events / flush size) times (about 3 for a 274k-event day
// of 1,000-event flushes), and a day holds at most F − 1 segments per tier. Large merged segments are left alone
// while small recent ones are merged among themselves. Before, every step merged the whole day once it had more
// than 8 segments: a day ingested while complete (an import, a backfill, bench:scale's year) was rewritten whole
// every few seconds, its largest part again and again.
//
// A day whose segments no tier merges but that still has more than `minSegments` (several tiers partly filled) is
// merged whole once it is quiet (its version did not move since compaction last looked at it): one more rewrite of
// each event, after which the finished day is one segment (or as many as MAX_SEGMENT_EVENTS needs), as before.
// A day that is not quiet waits: its segment count is bounded by the tiers meanwhile.
// Segments of at least half MAX_SEGMENT_EVENTS are full: no tier merges them (a merge would only split them again).
import { MAX_SEGMENT_EVENTS } from '../segments/codec.ts';

/** Segments of one tier merged together (and the ratio of sizes between tiers). */
export const COMPACT_FANOUT = 8;

/** A segment as the policy sees it: its seq and event count. */
export interface SegmentSize {
  seq: number;
  events: number;
}

/** The tier of a segment of `events` events: floor(log_F(events)), 0 for fewer than F. */
export function tierOf(events: number): number {
  let t = 0;
  for (let n = Math.max(1, events); n >= COMPACT_FANOUT; n = Math.floor(n / COMPACT_FANOUT)) t++;
  return t;
}

/**
 * The seqs of the segments to merge (at least two, in seq order), or null: the lowest tier's segments when it
 * holds COMPACT_FANOUT or more (full segments excepted); else, when the day has more than `minSegments` and is
 * `quiet`, all but the full ones.
 */
export function pickMerge(segments: readonly SegmentSize[], minSegments: number, quiet: boolean): number[] | null {
  const full = MAX_SEGMENT_EVENTS / 2;
  const tiers = new Map<number, number[]>();
  for (const s of segments) {
    if (s.events >= full) continue;
    const t = tierOf(s.events);
    const members = tiers.get(t);
    if (members) members.push(s.seq);
    else tiers.set(t, [s.seq]);
  }
  for (const t of [...tiers.keys()].sort((a, b) => a - b)) {
    const members = tiers.get(t) as number[];
    if (members.length >= COMPACT_FANOUT) return members.sort((a, b) => a - b);
  }
  if (!quiet || segments.length <= minSegments) return null;
  const rest = segments.filter((s) => s.events < full).map((s) => s.seq);
  return rest.length >= 2 ? rest.sort((a, b) => a - b) : null;
}
