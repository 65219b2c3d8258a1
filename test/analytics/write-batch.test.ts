// The packed batch handed to the ingest writer: every field survives packing, and strings are stored once.
import { describe, expect, it } from 'vitest';
import {
  fromWire,
  JOIN_PIECE_CHARS,
  joinStrings,
  NO_STATUS,
  packEvents,
  R_PATH,
  R_RAW_PATH,
  R_UA,
  REF_WIDTH,
  splitStrings,
  textOf,
  toWire,
  WIRE_MAX_EVENTS,
  type WriteEvent,
} from '../../src/analytics/ingest/write-batch.ts';

const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';

function event(i: number): WriteEvent {
  return [
    1_700_000_000_000 + i,
    19_675 + (i % 2),
    i % 3 === 0 ? '/Docs/Intro/' : '/docs/intro',
    '/docs/intro',
    `v:${i % 4}`,
    i % 5 === 0 ? null : UA,
    i % 2 === 0 ? 'text/markdown' : null,
    'GET',
    i % 7 === 0 ? null : 200,
    null,
    i % 3 === 0 ? 'ai' : 'human',
    i % 3 === 0 ? 'assistant' : null,
    i % 3 === 0 ? 'ua:ChatGPT-User' : null,
    i % 6 === 0 ? 0 : 1,
    i % 8 === 0 ? `line:${i}` : null,
  ];
}

/** Unpacks event i back into a tuple (what the writer reads). */
function unpack(b: ReturnType<typeof packEvents>, i: number): WriteEvent {
  const t = (f: number) => textOf(b, i, f);
  const status = b.status[i] as number;
  return [
    b.ts[i] as number,
    b.day[i] as number,
    t(0) as string,
    t(1) as string,
    t(2) as string,
    t(3),
    t(4),
    t(5),
    status === NO_STATUS ? null : status,
    t(6),
    t(7) as WriteEvent[10],
    t(8),
    t(9),
    b.qualifying[i] as 0 | 1,
    t(10),
  ];
}

describe('packEvents', () => {
  it('keeps every field of every event, nulls included', () => {
    const events = Array.from({ length: 100 }, (_, i) => event(i));
    const b = packEvents(events);
    expect(b.n).toBe(100);
    expect(b.refs.length).toBe(100 * REF_WIDTH);
    for (let i = 0; i < events.length; i++) expect(unpack(b, i)).toEqual(events[i]);
  });

  it('stores each distinct string once, so equal fields share an index', () => {
    const b = packEvents(Array.from({ length: 100 }, (_, i) => event(i)));
    expect(new Set(b.strings).size).toBe(b.strings.length);
    expect(b.strings.filter((s) => s === UA)).toHaveLength(1);
    // A raw path equal to the normalised one points at the same string: the writer stores '' for it.
    expect(b.refs[1 * REF_WIDTH + R_RAW_PATH]).toBe(b.refs[1 * REF_WIDTH + R_PATH]);
    expect(b.refs[0 * REF_WIDTH + R_RAW_PATH]).not.toBe(b.refs[0 * REF_WIDTH + R_PATH]);
    expect(b.refs[1 * REF_WIDTH + R_UA]).toBe(b.refs[2 * REF_WIDTH + R_UA]);
    // 100 events, yet a handful of strings: 2 paths, 4 visitors, 1 UA, 2 classes, Accept, GET, category, rule, 13 dedup keys.
    expect(b.strings.length).toBeLessThan(30);
  });

  it('survives a structured clone (the hand-off to the writer thread) unchanged', () => {
    const events = Array.from({ length: 20 }, (_, i) => event(i));
    const copy = structuredClone(packEvents(events));
    for (let i = 0; i < events.length; i++) expect(unpack(copy, i)).toEqual(events[i]);
  });

  it('an empty batch has no events and no strings', () => {
    const b = packEvents([]);
    expect(b.n).toBe(0);
    expect(b.strings).toEqual([]);
  });
});

describe('toWire / fromWire (the hand-off of small batches)', () => {
  it('a small batch crosses a structured clone in its wire form and comes back equal, `known` ids included', () => {
    for (const n of [1, 3, WIRE_MAX_EVENTS]) {
      const events = Array.from({ length: n }, (_, i) => event(i));
      // An empty user agent is a string of its own (not null).
      (events[0] as WriteEvent)[5] = '';
      const b = packEvents(events);
      b.known = {
        paths: Float64Array.from(b.strings, (_, i) => (i % 2 ? 7 : -1)),
        visitors: Float64Array.from(b.strings, (_, i) => (i % 3 ? 0 : 12)),
        userAgents: new Float64Array(b.strings.length).fill(-1),
      };
      const wire = toWire(b);
      expect('wire' in wire).toBe(true);
      const back = fromWire(structuredClone(wire));
      expect(back).toEqual(b);
      for (let i = 0; i < n; i++) expect(unpack(back, i)).toEqual(events[i]);
    }
  });

  it('without `known`, the batch comes back without it', () => {
    const b = packEvents([event(1)]);
    expect(fromWire(structuredClone(toWire(b)))).toEqual(b);
    expect(fromWire(toWire(b)).known).toBeUndefined();
  });

  it('a larger batch, or one with a string holding U+0000, goes as it is', () => {
    const big = packEvents(Array.from({ length: WIRE_MAX_EVENTS + 1 }, (_, i) => event(i)));
    expect(toWire(big)).toBe(big);
    const nul = event(1);
    nul[4] = 'v:a\u0000b';
    const withNul = packEvents([nul]);
    expect(toWire(withNul)).toBe(withNul);
    expect(fromWire(withNul)).toBe(withNul);
  });
});

describe('joinStrings / splitStrings (an import batch between threads)', () => {
  it('joins the strings in pieces of at most JOIN_PIECE_CHARS characters (a longer one alone) and splits them back exactly', () => {
    const long = 'x'.repeat(JOIN_PIECE_CHARS + 5);
    const strings = ['', ...Array.from({ length: 3000 }, (_, i) => `/docs/page-${i}${'é'.repeat(i % 7)}`), '', long, 'after', ''];
    const b = packEvents([event(1)]);
    b.strings = strings.slice();
    joinStrings(b);
    expect(b.strings).toEqual([]);
    const pieces = b.joined as string[];
    expect(pieces.length).toBeGreaterThan(2);
    for (const p of pieces) expect(p === long || p.length <= JOIN_PIECE_CHARS).toBe(true);
    expect(pieces).toContain(long);
    const back = splitStrings(structuredClone(b));
    expect(back.strings).toEqual(strings);
    expect(back.joined).toBeUndefined();
  });

  it('one piece for a small batch; a batch with U+0000 in a string is left as it is', () => {
    const b = packEvents([event(1), event(2)]);
    const strings = b.strings.slice();
    joinStrings(b);
    expect(b.joined).toEqual([strings.join('\u0000')]);
    expect(splitStrings(b).strings).toEqual(strings);
    const nul = packEvents([event(1)]);
    nul.strings.push('a\u0000b');
    joinStrings(nul);
    expect(nul.joined).toBeUndefined();
    expect(nul.strings).toContain('a\u0000b');
  });
});
