// The compaction policy (compaction-policy.ts): size tiers as in a log-structured merge tree. Merging a tier's
// small segments leaves large ones alone, each event is rewritten about once per tier it climbs, the day's segment
// count stays bounded, and a quiet day is merged whole.
import { describe, expect, it } from 'vitest';
import { MAX_SEGMENT_EVENTS } from '../../src/analytics/segments/codec.ts';
import { COMPACT_FANOUT, pickMerge, type SegmentSize, tierOf } from '../../src/analytics/store/compaction-policy.ts';

const seg = (seq: number, events: number): SegmentSize => ({ seq, events });

/** Appends `flushes` segments of `per` events to a day, running the policy (never quiet) after each: events rewritten and the largest count seen. */
function simulate(flushes: number, per: number): { rewritten: number; maxSegments: number; segments: SegmentSize[] } {
  let segments: SegmentSize[] = [];
  let seq = 0;
  let rewritten = 0;
  let maxSegments = 0;
  for (let i = 0; i < flushes; i++) {
    segments.push(seg(++seq, per));
    for (;;) {
      const pick = pickMerge(segments, 8, false);
      if (pick === null) break;
      const picked = segments.filter((s) => pick.includes(s.seq));
      const events = picked.reduce((n, s) => n + s.events, 0);
      rewritten += events;
      segments = [...segments.filter((s) => !pick.includes(s.seq)), seg(Math.max(...pick), events)].sort((a, b) => a.seq - b.seq);
    }
    maxSegments = Math.max(maxSegments, segments.length);
  }
  return { rewritten, maxSegments, segments };
}

describe('compaction policy', () => {
  it('tiers are powers of the fanout', () => {
    expect([1, 7, 8, 63, 64, 511, 512, 4095, 4096, 262_144].map(tierOf)).toEqual([0, 0, 1, 1, 2, 2, 3, 3, 4, 6]);
    expect(COMPACT_FANOUT).toBe(8);
  });

  it('merges only the small segments of a tier that holds the fanout, leaving the large merged ones alone', () => {
    const day = [seg(1, 200_000), seg(2, 40_000), ...Array.from({ length: 8 }, (_, i) => seg(10 + i, 1000))];
    expect(pickMerge(day, 8, false)).toEqual([10, 11, 12, 13, 14, 15, 16, 17]);
    // Seven small ones: no tier is full; the day waits unless it is quiet, then it is merged whole.
    const seven = day.slice(0, 9);
    expect(pickMerge(seven, 8, false)).toBeNull();
    expect(pickMerge([...seven, seg(30, 5)], 8, false)).toBeNull();
    expect(pickMerge([...seven, seg(30, 5)], 8, true)).toEqual([1, 2, 10, 11, 12, 13, 14, 15, 16, 30]);
    // Not more than minSegments: nothing, quiet or not.
    expect(pickMerge(seven.slice(0, 8), 8, true)).toBeNull();
  });

  it('a full segment is never picked', () => {
    const full = MAX_SEGMENT_EVENTS / 2;
    const day = Array.from({ length: 9 }, (_, i) => seg(i + 1, full + i));
    expect(pickMerge(day, 8, true)).toBeNull();
    expect(pickMerge([...day, seg(20, 3), seg(21, 4)], 8, true)).toEqual([20, 21]);
  });

  it('a day of 1,000-event flushes: each event rewritten about once per tier, the segment count bounded', () => {
    // 274 flushes: a 274k-event day of the 100M year.
    const r = simulate(274, 1000);
    expect(r.segments.reduce((n, s) => n + s.events, 0)).toBe(274_000);
    expect(r.rewritten / 274_000).toBeLessThanOrEqual(3);
    expect(r.maxSegments).toBeLessThanOrEqual(3 * (COMPACT_FANOUT - 1) + 1);
    // One-event flushes over a long day: still logarithmic.
    const one = simulate(20_000, 1);
    expect(one.rewritten / 20_000).toBeLessThanOrEqual(5);
    expect(one.maxSegments).toBeLessThanOrEqual(5 * (COMPACT_FANOUT - 1) + 1);
  });
});
