// Hostile bytes: thousands of corrupt, truncated and bit-flipped segments (fixed seed) must each give a
// SegmentFormatError — never another exception, a hang or a huge allocation. With the checksum recomputed after
// the mutation (what an attacker who writes segments could do), the body decoder itself is exercised: it
// must refuse the bytes or return a segment whose every event is well-formed.
import zlib from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeSegment,
  encodeSegment,
  MAX_BODY_BYTES,
  readSegmentHeader,
  type Segment,
  SegmentFormatError,
  segmentEvents,
} from '../../../src/analytics/segments/codec.ts';
import { zstdCompress } from '../../../src/analytics/segments/compress.ts';
import { event, segmentEvents as eventLists } from './arbitraries.ts';

const SEED = Number(process.env.INKWELL_FUZZ_SEED ?? 20261126);
const RUNS = Number(process.env.INKWELL_FUZZ_RUNS ?? 4000);

/** Writes a valid checksum over mutated bytes (header bytes 0–19 and the payload). */
function reseal(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  if (out.length < 24) return out;
  const crc = zlib.crc32(out.subarray(24), zlib.crc32(out.subarray(0, 20)));
  new DataView(out.buffer).setUint32(20, crc, true);
  return out;
}

/** With a payload of exactly this many bytes (so a resealed header points at all of them). */
function withPayloadLength(bytes: Uint8Array): Uint8Array {
  if (bytes.length < 24) return bytes;
  const out = bytes.slice();
  new DataView(out.buffer).setUint32(16, out.length - 24, true);
  return out;
}

type Mutation =
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'set'; at: number; value: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; bytes: number[] }
  | { kind: 'delete'; at: number; count: number }
  | { kind: 'many'; at: number[]; value: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('many' as const), at: fc.array(fc.nat(), { minLength: 2, maxLength: 6 }), value: fc.integer({ min: 0, max: 255 }) }),
);

function mutate(src: Uint8Array, m: Mutation): Uint8Array {
  const n = src.length;
  const b = Array.from(src);
  switch (m.kind) {
    case 'flip':
      b[m.at % n] = (b[m.at % n] as number) ^ (1 << m.bit);
      break;
    case 'set':
      b[m.at % n] = (b[m.at % n] as number) === m.value ? (m.value + 1) & 0xff : m.value;
      break;
    case 'truncate':
      b.length = m.at % n;
      break;
    case 'insert':
      b.splice(m.at % (n + 1), 0, ...m.bytes);
      break;
    case 'delete':
      b.splice(m.at % n, m.count);
      break;
    case 'many':
      for (const at of m.at) b[at % n] = m.value;
      break;
  }
  return Uint8Array.from(b);
}

/** Every event of a decoded segment is one the codec could have written. */
function assertWellFormed(s: Segment): void {
  const events = segmentEvents(s);
  expect(events).toHaveLength(s.n);
  // Re-encoding checks every field's range and type; the round trip must be exact.
  expect(segmentEvents(decodeSegment(encodeSegment(events, { compression: 'none' })))).toEqual(events);
}

/** Decoding either succeeds with well-formed events or throws a SegmentFormatError; anything else fails. */
function decodeOrRefuse(bytes: Uint8Array): 'decoded' | 'refused' {
  let s: Segment;
  try {
    s = decodeSegment(bytes);
  } catch (err) {
    if (!(err instanceof SegmentFormatError)) throw new Error(`not a SegmentFormatError: ${String(err)}`);
    expect(err.message).toMatch(/^invalid analytics segment: /);
    return 'refused';
  }
  assertWellFormed(s);
  return 'decoded';
}

const bases = fc.sample(eventLists(40), { seed: SEED, numRuns: 12 }).filter((l) => l.length > 0);
const segments = [
  ...bases.map((l) => encodeSegment(l)),
  ...bases.map((l) => encodeSegment(l, { compression: 'none' })),
  encodeSegment([]),
  encodeSegment([event({ dedup: 5n }), event({ ts: 2_000 })], { compression: 'none' }),
];

describe('corrupt segments', () => {
  it(`refuses ${RUNS} mutated segments with a SegmentFormatError (the checksum catches them)`, () => {
    let refused = 0;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: segments.length - 1 }), mutation, (k, m) => {
        const src = segments[k] as Uint8Array;
        const bad = mutate(src, m);
        if (Buffer.from(bad).equals(Buffer.from(src))) return;
        expect(() => decodeSegment(bad)).toThrow(SegmentFormatError);
        refused++;
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(refused).toBeGreaterThan(RUNS * 0.9);
  });

  it(`refuses or decodes well-formed events from ${RUNS} mutated segments with a valid checksum`, () => {
    const outcomes = { decoded: 0, refused: 0 };
    fc.assert(
      fc.property(fc.integer({ min: 0, max: segments.length - 1 }), mutation, (k, m) => {
        const bad = reseal(withPayloadLength(mutate(segments[k] as Uint8Array, m)));
        outcomes[decodeOrRefuse(bad)]++;
      }),
      { seed: SEED + 1, numRuns: RUNS },
    );
    expect(outcomes.refused).toBeGreaterThan(0);
  });

  it('refuses random bytes, empty input and a bare header', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        expect(decodeOrRefuse(bytes)).toBe('refused');
        expect(decodeOrRefuse(reseal(withPayloadLength(Uint8Array.from([0x49, 0x4b, 0x53, 0x47, 1, 1, 0, 0, ...bytes]))))).toBe('refused');
      }),
      { seed: SEED, numRuns: 500 },
    );
    expect(() => decodeSegment(new Uint8Array(0))).toThrow(/header: 0 bytes/);
    expect(() => decodeSegment('IKSG' as never)).toThrow(SegmentFormatError);
  });

  it('names the problem: truncation, checksum, version, magic', () => {
    const good = encodeSegment([event(), event({ ts: 9_000 })]);
    expect(() => decodeSegment(good.subarray(0, good.length - 1))).toThrow(/truncated or padded/);
    const flipped = good.slice();
    flipped[30] = (flipped[30] as number) ^ 1;
    expect(() => decodeSegment(flipped)).toThrow(/checksum mismatch/);
    const v2 = good.slice();
    v2[4] = 2;
    expect(() => decodeSegment(reseal(v2))).toThrow(/format version 2/);
    const notOurs = good.slice();
    notOurs[0] = 0x50;
    expect(() => decodeSegment(notOurs)).toThrow(/wrong magic/);
  });
});

describe('hostile segments with a valid checksum', () => {
  /** A segment whose header (after the magic and version) and payload are chosen by the caller. */
  function craft(compression: number, events: number, bodyBytes: number, payload: Uint8Array): Uint8Array {
    const out = new Uint8Array(24 + payload.length);
    out.set([0x49, 0x4b, 0x53, 0x47, 1, compression], 0);
    const view = new DataView(out.buffer);
    view.setUint32(8, events, true);
    view.setUint32(12, bodyBytes, true);
    view.setUint32(16, payload.length, true);
    out.set(payload, 24);
    return reseal(out);
  }

  it('refuses a zstd bomb: a small payload that expands past the declared body', () => {
    const bomb = zstdCompress(new Uint8Array(32 << 20), 3);
    expect(bomb.length).toBeLessThan(10_000);
    expect(() => decodeSegment(craft(1, 10, 1_000, bomb))).toThrow(/zstd refused it/);
  });

  it('refuses a body larger than the codec allows before decompressing', () => {
    expect(() => decodeSegment(craft(1, 10, MAX_BODY_BYTES + 1, zstdCompress(new Uint8Array(10), 3)))).toThrow(/body of \d+ bytes, at most/);
  });

  it('refuses a huge event count with a tiny body before allocating for it', () => {
    const body = Uint8Array.from([14, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8, 0, 9, 0, 10, 0, 11, 0, 12, 0, 13, 0, 14, 0]);
    expect(() => decodeSegment(craft(0, 1 << 20, body.length, body))).toThrow(/column ts has 0 bytes for 1048576 events/);
    expect(() => decodeSegment(craft(0, (1 << 20) + 1, body.length, body))).toThrow(/a segment holds at most/);
  });

  it('refuses a payload that is not zstd, and a declared length it does not reach', () => {
    expect(() => decodeSegment(craft(1, 0, 10, Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8])))).toThrow(/zstd refused it/);
    const body = segmentBody(encodeSegment([event()], { compression: 'none' }));
    expect(() => decodeSegment(craft(1, 1, body.length + 5, zstdCompress(body, 3)))).toThrow(/expands to \d+ bytes, the header says/);
    expect(readSegmentHeader(craft(1, 1, body.length, zstdCompress(body, 3))).events).toBe(1);
    expect(segmentEvents(decodeSegment(craft(1, 1, body.length, zstdCompress(body, 3))))).toEqual([event()]);
  });

  it('refuses a dictionary index outside its dictionary and invalid UTF-8', () => {
    const events = [event({ referrer: 'a' }), event({ ts: event().ts + 1, referrer: 'b' })];
    const plain = encodeSegment(events, { compression: 'none' });
    // The referrer column ends with the two events' 1-byte indexes (0, 1): point the last one past the dictionary.
    const body = segmentBody(plain);
    const at = indexOfSequence(body, [2, 2, 0x61, 2, 0x62, 0, 1]);
    expect(at).toBeGreaterThan(0);
    const badIndex = body.slice();
    badIndex[at + 6] = 2;
    expect(() => decodeSegment(craft(0, 2, badIndex.length, badIndex))).toThrow(/column referrer: index 2 of event 1 outside a dictionary of 2/);
    const badText = body.slice();
    badText[at + 2] = 0xff;
    expect(() => decodeSegment(craft(0, 2, badText.length, badText))).toThrow(/column referrer: a string is not valid UTF-8/);
  });
});

function segmentBody(plain: Uint8Array): Uint8Array {
  return plain.slice(24);
}

function indexOfSequence(haystack: Uint8Array, needle: number[]): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
