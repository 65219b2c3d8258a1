// fast-check generators of segment events for the codec tests: ordinary traffic and the edges (nulls, 0 and the
// largest ids, the largest time, identical times, long and non-ASCII strings).
import fc from 'fast-check';
import { MAX_ID, MAX_TS, type SegmentEvent } from '../../../src/analytics/segments/codec.ts';

const DAY = 86_400_000;
const BASE = 20_666 * DAY;

/** Text the codec must keep exactly: any well-formed Unicode (astral characters, NUL), sometimes long. */
const text = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('/', '/docs/a', 'GET', 'text/markdown', 'https://example.com/x?y=1', '') },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(100_000), 'é'.repeat(20_000), '\u{1F600}'.repeat(5_000), 'a\u0000b', '日本語') },
);
const nullable = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null, freq: 3 });
const id = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.constantFrom(0, 1, 255, 256, 65_535, 65_536, 2 ** 31, MAX_ID), fc.integer({ min: 0, max: MAX_ID }));
const ts = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: BASE, max: BASE + DAY - 1 }) },
  { weight: 2, arbitrary: fc.constantFrom(BASE, BASE + 1, BASE + DAY - 1) },
  { weight: 1, arbitrary: fc.constantFrom(0, MAX_TS, MAX_TS - 1) },
);

export const segmentEvent: fc.Arbitrary<SegmentEvent> = fc.record({
  ts,
  pathId: id,
  rawPath: nullable(text),
  visitor: id,
  uaId: nullable(id),
  accept: nullable(text),
  method: nullable(fc.constantFrom('GET', 'HEAD', 'POST', 'get')),
  status: nullable(fc.oneof(fc.constantFrom(200, 304, 404, 500), id)),
  referrer: nullable(text),
  cls: fc.constantFrom('human', 'ai', 'crawler'),
  category: fc.constantFrom(null, 'search', 'training', 'other'),
  rule: nullable(fc.constantFrom('GPTBot', 'ClaudeBot', 'markdown-fetch', 'isbot')),
  rulesVersion: fc.constantFrom('0123456789abcdef', 'fedcba9876543210'),
  qualifying: fc.boolean(),
  source: fc.constantFrom('api', 'collect', 'import'),
  dedup: nullable(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n })),
});

export const segmentEvents = (maxLength = 60) => fc.array(segmentEvent, { maxLength });

/** A plain event to vary in example-based tests. */
export function event(over: Partial<SegmentEvent> = {}): SegmentEvent {
  return {
    ts: BASE + 1_000,
    pathId: 1,
    rawPath: null,
    visitor: 1,
    uaId: 1,
    accept: null,
    method: 'GET',
    status: 200,
    referrer: null,
    cls: 'human',
    category: null,
    rule: null,
    rulesVersion: '0123456789abcdef',
    qualifying: true,
    source: 'api',
    dedup: null,
    ...over,
  };
}

/** Events sorted stably by ts: what a segment of them decodes to. */
export const byTime = (events: readonly SegmentEvent[]): SegmentEvent[] =>
  events
    .map((e, i) => [e, i] as const)
    .sort((a, b) => a[0].ts - b[0].ts || a[1] - b[1])
    .map(([e]) => e);
