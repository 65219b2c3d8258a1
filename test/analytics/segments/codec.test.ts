// The segment codec: round trips (property and edge cases), merge = concatenation, compaction splits, input
// refused with the field named. Corrupt and hostile bytes: fuzz.test.ts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  categoryOf,
  classOf,
  decodeSegment,
  encodeSegment,
  isQualifying,
  MAX_ID,
  MAX_SEGMENT_EVENTS,
  MAX_TS,
  mergeSegments,
  readDay,
  readSegmentHeader,
  SegmentInputError,
  SegmentTooLargeError,
  segmentEvents,
} from '../../../src/analytics/segments/codec.ts';
import { dedupHash } from '../../../src/analytics/segments/dedup.ts';
import { byTime, event, segmentEvents as eventLists } from './arbitraries.ts';

const SEED = 20261126;
const roundTrip = (events: Parameters<typeof encodeSegment>[0], compression?: number | 'none') =>
  segmentEvents(decodeSegment(encodeSegment(events, { compression })));

describe('segment round trip', () => {
  it('decodes every generated segment to its events, sorted stably by time (zstd and uncompressed)', () => {
    fc.assert(
      fc.property(eventLists(), fc.constantFrom<number | 'none'>(3, 1, 19, 'none'), (events, compression) => {
        expect(roundTrip(events, compression)).toEqual(byTime(events));
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('encodes the same events to the same bytes', () => {
    fc.assert(
      fc.property(eventLists(20), (events) => {
        expect(Buffer.from(encodeSegment(events)).equals(Buffer.from(encodeSegment(events)))).toBe(true);
      }),
      { seed: SEED, numRuns: 50 },
    );
  });

  it('holds an empty segment', () => {
    const bytes = encodeSegment([]);
    expect(readSegmentHeader(bytes)).toMatchObject({ version: 1, compression: 'zstd', events: 0 });
    expect(decodeSegment(bytes).n).toBe(0);
    expect(segmentEvents(decodeSegment(bytes))).toEqual([]);
  });

  it('holds one event, and one with every nullable field null', () => {
    expect(roundTrip([event()])).toEqual([event()]);
    const nulls = event({ rawPath: null, uaId: null, accept: null, method: null, status: null, referrer: null, category: null, rule: null, dedup: null });
    expect(roundTrip([nulls, nulls])).toEqual([nulls, nulls]);
  });

  it('keeps the largest ids, times and hashes, and the smallest', () => {
    const edges = [
      event({ ts: MAX_TS, pathId: MAX_ID, visitor: MAX_ID, uaId: MAX_ID, status: MAX_ID, dedup: (1n << 64n) - 1n }),
      event({ ts: 0, pathId: 0, visitor: 0, uaId: 0, status: 0, dedup: 0n }),
    ];
    expect(roundTrip(edges)).toEqual([edges[1], edges[0]]);
  });

  it('keeps huge and non-ASCII strings exactly', () => {
    const huge = 'ü'.repeat(300_000);
    const e = event({ rawPath: `/日本語/${huge}`, referrer: '\u{1F600}\u0000x', accept: huge, rule: 'Ω', method: '' });
    expect(roundTrip([e, event()])).toEqual([e, event()]);
  });

  it('keeps the given order of events with identical times, and sorts the rest', () => {
    const same = Array.from({ length: 300 }, (_, i) => event({ ts: 5_000, visitor: i, pathId: 299 - i }));
    expect(roundTrip(same)).toEqual(same);
    const mixed = [event({ ts: 9, visitor: 1 }), event({ ts: 3, visitor: 2 }), event({ ts: 9, visitor: 3 }), event({ ts: 3, visitor: 4 })];
    expect(roundTrip(mixed).map((e) => e.visitor)).toEqual([2, 4, 1, 3]);
  });

  it('uses every index width: dictionaries of 1, 256, 257, 65,536 and 65,537 values', () => {
    for (const k of [1, 256, 257, 65_536, 65_537]) {
      const events = Array.from({ length: k }, (_, i) => event({ ts: 1_000 + i, pathId: i * 7, referrer: `r${i}` }));
      const decoded = decodeSegment(encodeSegment(events));
      expect(decoded.pathId.values.length).toBe(k);
      expect(segmentEvents(decoded)).toEqual(events);
    }
  });

  it('decodes a segment that sits at any offset of a larger buffer', () => {
    const events = [event({ dedup: 9n }), event({ ts: event().ts + 1, referrer: 'x' })];
    for (const compression of [3, 'none'] as const) {
      const bytes = encodeSegment(events, { compression });
      const host = new Uint8Array(bytes.length + 13);
      host.set(bytes, 7);
      expect(segmentEvents(decodeSegment(host.subarray(7, 7 + bytes.length)))).toEqual(events);
    }
  });

  it('exposes the flags as class, category and qualifying', () => {
    const e = event({ cls: 'crawler', category: 'training', qualifying: false });
    const s = decodeSegment(encodeSegment([e, event({ cls: 'ai', qualifying: true })]));
    expect([classOf(s.flags[0] as number), categoryOf(s.flags[0] as number), isQualifying(s.flags[0] as number)]).toEqual(['crawler', 'training', false]);
    expect([classOf(s.flags[1] as number), isQualifying(s.flags[1] as number)]).toEqual(['ai', true]);
  });

  it('stores a dedup hash only for the events that have one', () => {
    const h = dedupHash('00mfz3k5c.abcdefghijklmnopqrstuvwxyz012345');
    expect(h).toBe(dedupHash('00mfz3k5c.abcdefghijklmnopqrstuvwxyz012345'));
    expect(h).not.toBe(dedupHash('00mfz3k5c.abcdefghijklmnopqrstuvwxyz012346'));
    const events = [event({ dedup: h }), event({ ts: event().ts + 1, dedup: null }), event({ ts: event().ts + 2, dedup: 7n })];
    const s = decodeSegment(encodeSegment(events));
    expect(Array.from(s.dedup?.present ?? [])).toEqual([1, 0, 1]);
    expect(segmentEvents(s)).toEqual(events);
    expect(decodeSegment(encodeSegment([event()])).dedup).toBeNull();
  });
});

describe('appending and compaction', () => {
  it('merge = concatenation: merging segments gives the bytes of one segment of all their events', () => {
    fc.assert(
      fc.property(fc.array(eventLists(25), { minLength: 1, maxLength: 5 }), (parts) => {
        const segments = parts.map((p) => encodeSegment(p));
        const all = parts.flat();
        expect(readDay(segments)).toEqual(parts.flatMap((p) => byTime(p)));
        const merged = mergeSegments(segments);
        if (all.length === 0) expect(merged).toEqual([]);
        else {
          expect(merged).toHaveLength(1);
          expect(Buffer.from(merged[0] as Uint8Array).equals(Buffer.from(encodeSegment(all)))).toBe(true);
          expect(readDay(merged)).toEqual(byTime(all));
        }
      }),
      { seed: SEED, numRuns: 150 },
    );
  });

  it('merging again changes nothing, in any grouping of the same segments', () => {
    fc.assert(
      fc.property(eventLists(30), eventLists(30), eventLists(30), (a, b, c) => {
        const [sa, sb, sc] = [a, b, c].map((x) => encodeSegment(x)) as [Uint8Array, Uint8Array, Uint8Array];
        const flat = readDay(mergeSegments([sa, sb, sc]));
        expect(readDay(mergeSegments([...mergeSegments([sa, sb]), sc]))).toEqual(flat);
        expect(readDay(mergeSegments(mergeSegments([sa, sb, sc])))).toEqual(flat);
      }),
      { seed: SEED, numRuns: 60 },
    );
  });

  it('splits a day larger than maxEvents into segments that read back as the whole day', () => {
    const events = Array.from({ length: 2_500 }, (_, i) => event({ ts: 10_000 - (i % 1_000), visitor: i }));
    const flushes = [events.slice(0, 900), events.slice(900, 1_700), events.slice(1_700)].map((p) => encodeSegment(p));
    const merged = mergeSegments(flushes, { maxEvents: 1_000 });
    expect(merged.map((s) => readSegmentHeader(s).events)).toEqual([1_000, 1_000, 500]);
    expect(readDay(merged)).toEqual(byTime(events));
  });

  it('merges many segments with ties across them as one stable sort of their concatenation', () => {
    // 37 segments (an odd count: the pairwise merge carries a run over in several rounds), times drawn from a
    // few values so that most events tie with events of other segments; some imported (a dedup hash).
    const parts = Array.from({ length: 37 }, (_, p) =>
      Array.from({ length: 1 + ((p * 7) % 23) }, (_, i) =>
        event({
          ts: event().ts + ((p * 13 + i * 5) % 4),
          visitor: p * 100 + i,
          referrer: i % 3 === 0 ? `r${p % 4}` : null,
          dedup: i % 4 === 0 ? BigInt(p * 1000 + i) : null,
        }),
      ),
    );
    const segments = parts.map((p) => encodeSegment(p));
    const all = byTime(parts.flat());
    expect(all).toHaveLength(444);
    const merged = mergeSegments(segments, { maxEvents: 100 });
    expect(merged.map((s) => readSegmentHeader(s).events)).toEqual([100, 100, 100, 100, 44]);
    merged.forEach((s, j) => {
      expect(Buffer.from(s).equals(Buffer.from(encodeSegment(all.slice(j * 100, (j + 1) * 100))))).toBe(true);
    });
    expect(readDay(merged)).toEqual(all);
  });

  it('splits a merge whose body would pass MAX_BODY_BYTES', () => {
    // 40 distinct 2 MiB referrers: 80 MiB of text, more than one body holds.
    const big = 'r'.repeat(2 << 20);
    const events = Array.from({ length: 40 }, (_, i) => event({ ts: event().ts + i, referrer: `${big}${i}` }));
    expect(() => encodeSegment(events)).toThrow(SegmentTooLargeError);
    const merged = mergeSegments([encodeSegment(events.slice(0, 20)), encodeSegment(events.slice(20))]);
    expect(merged.length).toBeGreaterThan(1);
    expect(readDay(merged)).toEqual(events);
  });

  it('refuses more events than a segment holds, as too large (the caller splits)', () => {
    const many = new Array(MAX_SEGMENT_EVENTS + 1).fill(event());
    expect(() => encodeSegment(many)).toThrow(SegmentTooLargeError);
    expect(() => mergeSegments([], { maxEvents: 0 })).toThrow(SegmentInputError);
  });
});

describe('events a segment cannot hold', () => {
  const cases: [string, Partial<Parameters<typeof event>[0]>, RegExp][] = [
    ['a lone surrogate', { rawPath: 'a\ud800b' }, /event 0: rawPath must be well-formed Unicode/],
    ['a negative id', { visitor: -1 }, /event 0: visitor must be an integer/],
    ['an id beyond 32 bits', { pathId: MAX_ID + 1 }, /event 0: pathId must be an integer/],
    ['a fractional time', { ts: 1.5 }, /event 0: ts must be an integer/],
    ['a time beyond a Date', { ts: MAX_TS + 1 }, /event 0: ts must be an integer/],
    ['an unknown class', { cls: 'robot' as never }, /event 0: cls must be/],
    ['an unknown category', { category: 'misc' as never }, /event 0: category must be/],
    ['a null rules version', { rulesVersion: null as never }, /event 0: rulesVersion must not be null/],
    ['a hash beyond 64 bits', { dedup: 1n << 64n }, /event 0: dedup must be an unsigned 64-bit/],
    ['a status that is not an integer', { status: 200.5 }, /event 0: status must be an integer/],
  ];
  it.each(cases)('refuses %s, naming the event and field', (_, over, message) => {
    expect(() => encodeSegment([event(over)])).toThrow(SegmentInputError);
    expect(() => encodeSegment([event(over)])).toThrow(message);
  });

  it('refuses a zstd level out of range', () => {
    expect(() => encodeSegment([event()], { compression: 20 })).toThrow(/zstd level from 1 to 19/);
  });
});
