import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FacetAccumulator } from '../../src/analytics/classify/facets.ts';
import {
  buildSummary,
  type DaySummary,
  decodeSummary,
  decodeSummaryVisitors,
  encodeSummary,
  mergeSummaries,
  type SeqSegment,
  SummaryFormatError,
  segmentPathIds,
} from '../../src/analytics/export/day-summary.ts';
import { buildDaySet, DaySetIdRangeError, FLAG_AI, FLAG_HUMAN } from '../../src/analytics/export/daysets.ts';
import { bucketsOf, countBuckets } from '../../src/analytics/export/series.ts';
import { decodeSegment, encodeSegment, type SegmentEvent } from '../../src/analytics/segments/codec.ts';
import { CLS_AI, CLS_HUMAN } from '../../src/analytics/store/tables.ts';

const DAY = 20_000;
/** Path 3 is a static asset (an agent's request for it is no page view). */
const isAsset = (pathId: number) => pathId === 3;

const eventArb = (visitorOffset: number): fc.Arbitrary<SegmentEvent> =>
  fc
    .record({
      ts: fc.integer({ min: DAY * 86_400_000, max: (DAY + 1) * 86_400_000 - 1 }),
      pathId: fc.integer({ min: 1, max: 5 }),
      visitor: fc.integer({ min: 0, max: 25 }),
      cls: fc.constantFrom('human', 'ai', 'crawler') as fc.Arbitrary<SegmentEvent['cls']>,
      rule: fc.option(fc.constantFrom('GPTBot', 'ChatGPT-User', 'Googlebot'), { nil: null }),
      qualifying: fc.boolean(),
      method: fc.option(fc.constantFrom('GET', 'HEAD', 'POST'), { nil: null }),
      status: fc.option(fc.constantFrom(200, 304, 404, 301), { nil: null }),
      referrer: fc.option(fc.constantFrom('https://www.a.com/x', 'https://A.com/', 'not a url', 'https://c.net/y'), { nil: null }),
    })
    .map((r) => ({
      ts: r.ts,
      pathId: r.pathId,
      rawPath: null,
      visitor: r.visitor + visitorOffset,
      uaId: null,
      accept: null,
      method: r.method,
      status: r.status,
      referrer: r.referrer,
      cls: r.cls,
      category: null,
      // A rule names one class (as the rules do): ChatGPT-User an assistant, the others crawlers.
      rule: r.rule === null || r.cls === 'human' ? null : r.cls === 'ai' ? 'ChatGPT-User' : r.rule === 'ChatGPT-User' ? 'GPTBot' : r.rule,
      rulesVersion: 'test',
      qualifying: r.cls !== 'crawler' && r.qualifying,
      source: 'api',
      dedup: null,
    }));

function segmentsOf(groups: readonly SegmentEvent[][], firstSeq = 1): SeqSegment[] {
  return groups.filter((g) => g.length > 0).map((g, i) => ({ seq: firstSeq + i, segment: decodeSegment(encodeSegment(g)) }));
}

/** The summary by brute force, with the former ingest writer's facet code (FacetAccumulator) as the facets' oracle. */
function naive(events: readonly SegmentEvent[]) {
  const visits = new Map<string, [number, number, number]>();
  const views = new Map<number, [number, number]>();
  const acc = new FacetAccumulator();
  for (const e of events) {
    acc.add({
      day: DAY,
      visitor: e.visitor,
      cls: e.cls,
      rule: e.rule,
      qualifying: e.qualifying ? 1 : 0,
      method: e.method,
      status: e.status,
      referrer: e.referrer,
      staticAsset: () => isAsset(e.pathId),
    });
    if (!e.qualifying || e.cls === 'crawler') continue;
    const c = e.cls === 'human' ? CLS_HUMAN : CLS_AI;
    visits.set(`${e.pathId}:${e.visitor}:${c}`, [e.pathId, e.visitor, c]);
    const v = views.get(e.pathId) ?? [0, 0];
    v[e.cls === 'human' ? 0 : 1]++;
    views.set(e.pathId, v);
  }
  const sorted = [...visits.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  const set = buildDaySet(
    DAY,
    1,
    sorted.map((r) => r[0]),
    sorted.map((r) => r[1]),
    sorted.map((r) => r[2]),
    CLS_HUMAN,
    CLS_AI,
  );
  // Facet rows (day, facet, name, visitor, cls, views, requests) grouped per (facet, name).
  const rows = acc.flat(0);
  const groups = new Map<string, { facet: number; name: string; cls: number; visitors: number[]; views: number; requests: number }>();
  for (let i = 0; i < rows.length; i += 8) {
    const [, , facet, name, visitor, cls, v, r] = rows.slice(i, i + 8) as [number, number, number, string, number, number, number, number];
    const k = `${facet}\u0000${name}`;
    const g = groups.get(k) ?? { facet, name, cls, visitors: [], views: 0, requests: 0 };
    g.visitors.push(visitor);
    g.views += v;
    g.requests += r;
    groups.set(k, g);
  }
  const facets = [...groups.values()]
    .sort((a, b) => a.facet - b.facet || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((g) => ({ ...g, visitors: g.visitors.sort((a, b) => a - b) }));
  const crawlerRequests = events.filter((e) => e.cls === 'crawler' && e.rule !== null).length;
  const viewIds = [...views.keys()].sort((a, b) => a - b);
  return { set, viewIds, views: viewIds.map((p) => views.get(p)), facets, crawlerRequests };
}

function plain(s: DaySummary) {
  return {
    set: { ...s.visitors, version: 1 },
    viewIds: [...s.views.pathIds],
    views: [...s.views.pathIds].map((_, k) => [s.views.human[k], s.views.ai[k]]),
    facets: s.facets.map((g) => ({ ...g, visitors: [...g.visitors] })),
    crawlerRequests: s.crawlerRequests,
  };
}

const build = (segments: SeqSegment[], version = 1) => buildSummary(DAY, version, segments, isAsset);

describe('day summaries from segments', () => {
  it('hold the visitor set, the views per path and the facets the derived tables held, whatever the segments', () => {
    fc.assert(
      fc.property(fc.array(fc.array(eventArb(0), { maxLength: 40 }), { maxLength: 4 }), fc.constantFrom(0, 2 ** 33), (groups, offset) => {
        const shifted = groups.map((g) => g.map((e) => ({ ...e, visitor: e.visitor + offset })));
        const segs = segmentsOf(shifted);
        expect([...segmentPathIds(segs)].every((p) => p >= 1 && p <= 5)).toBe(true);
        const s = build(segs);
        expect(plain(s)).toEqual(naive(shifted.flat()));
        expect(s.maxSeq).toBe(segs.length === 0 ? -1 : segs.length);
      }),
      { numRuns: 200 },
    );
  });

  it('extended by later segments equal the summary built from all of them (views counted once)', () => {
    fc.assert(
      fc.property(fc.array(fc.array(eventArb(0), { maxLength: 30 }), { minLength: 1, maxLength: 5 }), fc.nat(5), (groups, cut) => {
        const segs = segmentsOf(groups);
        const k = Math.min(cut, segs.length);
        const first = build(segs.slice(0, k), 3);
        const rest = build(segs.slice(k), 4);
        const merged = mergeSummaries(first, rest, 7);
        const whole = build(segs, 7);
        expect(merged).toEqual(whole);
      }),
      { numRuns: 200 },
    );
  });

  it('round-trip through their encoding, and a broken blob is a format error', () => {
    fc.assert(
      fc.property(fc.array(eventArb(2 ** 35), { maxLength: 60 }), (events) => {
        const s = build(segmentsOf([events]), 9);
        const blob = encodeSummary(s);
        expect(decodeSummary(DAY, 9, blob)).toEqual(s);
        // The visitor set alone (long windows' visitors export) is the same set.
        expect(decodeSummaryVisitors(DAY, 9, blob)).toEqual(s.visitors);
        if (blob.length > 1) expect(() => decodeSummary(DAY, 9, blob.slice(0, blob.length - 1))).toThrow();
      }),
      { numRuns: 100 },
    );
    expect(() => decodeSummary(DAY, 1, new Uint8Array([2]))).toThrow(SummaryFormatError);
    expect(() => decodeSummaryVisitors(DAY, 1, new Uint8Array([2]))).toThrow(SummaryFormatError);
    expect(() => decodeSummaryVisitors(DAY, 1, new Uint8Array([1, 0, 0, 9, 2]))).toThrow(SummaryFormatError);
    expect(() => decodeSummary(DAY, 1, new Uint8Array([]))).toThrow(SummaryFormatError);
  });

  it('refuse a day whose qualifying visitors span more than 30 bits of ordinals', () => {
    const e = (visitor: number): SegmentEvent => ({
      ts: DAY * 86_400_000,
      pathId: 1,
      rawPath: null,
      visitor,
      uaId: null,
      accept: null,
      method: 'GET',
      status: 200,
      referrer: null,
      cls: 'human',
      category: null,
      rule: null,
      rulesVersion: 'test',
      qualifying: true,
      source: 'api',
      dedup: null,
    });
    expect(() => build(segmentsOf([[e(1), e(2 ** 31)]]))).toThrow(DaySetIdRangeError);
    expect(build(segmentsOf([[e(2 ** 31), e(2 ** 31 + 2 ** 30 - 1)]])).visitors.base).toBe(2 ** 31);
  });
});

describe('series buckets over day sets with different bases', () => {
  it('count each bucket and the whole range exactly', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.tuple(fc.nat(3), fc.nat(15), fc.constantFrom(CLS_HUMAN, CLS_AI)), { maxLength: 20 }), { minLength: 1, maxLength: 9 }),
        fc.constantFrom(0, 2 ** 31, 2 ** 45),
        (days, offset) => {
          const sets = days.map((rows, d) => {
            const shifted = rows.map(([p, v, c]) => [p, v + (d % 2 === 0 ? offset : 0), c] as const);
            const uniq = [...new Map(shifted.map((r) => [r.join(':'), r])).values()].sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
            return buildDaySet(
              DAY + d,
              1,
              uniq.map((r) => r[0]),
              uniq.map((r) => r[1]),
              uniq.map((r) => r[2]),
              CLS_HUMAN,
              CLS_AI,
            );
          });
          const buckets = bucketsOf(DAY, DAY + days.length, 'week');
          const got = countBuckets(sets, buckets);
          const naiveCount = (ss: typeof sets) => {
            const h = new Set<number>();
            const a = new Set<number>();
            const t = new Set<number>();
            for (const s of ss) {
              for (const x of s.pairs) {
                const v = (x >>> 2) + s.base;
                t.add(v);
                if (x & FLAG_HUMAN) h.add(v);
                if (x & FLAG_AI) a.add(v);
              }
            }
            return { human: h.size, ai: a.size, total: t.size };
          };
          expect(got.totals).toEqual(naiveCount(sets));
          expect(got.buckets).toEqual(buckets.map((b) => naiveCount(sets.filter((s) => s.day >= b.start && s.day < b.end))));
        },
      ),
      { numRuns: 200 },
    );
  });
});
