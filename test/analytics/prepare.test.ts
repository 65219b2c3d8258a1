// The memoised event preparation (prepare.ts) and its caches: the result must always equal what the pure
// functions compute — with tiny caches (constant eviction), across visitor-id rotation and secret changes,
// and in two independent instances.
import crypto from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/analytics/classify/classify.ts';
import { type VisitorIdRotation, visitorKey } from '../../src/analytics/classify/identity.ts';
import { isQualifyingView } from '../../src/analytics/classify/qualify.ts';
import { utcDay } from '../../src/analytics/dates.ts';
import { combinedBytesState, parseCombinedBytes } from '../../src/analytics/import/logparse.ts';
import { EVENT_LIMITS, type RawEvent, validateIngestEvent } from '../../src/analytics/ingest/event.ts';
import { createEventPreparer, MAX_FUTURE_MS } from '../../src/analytics/ingest/prepare.ts';
import { BatchBuilder, R_PATH, R_RAW_PATH, REF_WIDTH, textOf, type WriteBatch } from '../../src/analytics/ingest/write-batch.ts';
import type { WriteEvent } from '../../src/analytics/ingest/writer/ingest-writer.ts';
import { GenerationCache } from '../../src/analytics/lru.ts';
import { generate, prng } from './dataset.ts';

const NOW = Date.UTC(2026, 5, 1);

/** What prepare must produce, from the pure functions alone. */
function reference(raw: unknown, secret: string, rotation: VisitorIdRotation): WriteEvent | string {
  const v = validateIngestEvent(raw, NOW);
  if (!v.ok) return v.error;
  const e = v.event;
  const rawPath = (e.path ?? e.url) as string;
  const c = classify({ userAgent: e.userAgent ?? null, path: rawPath, accept: e.accept ?? null });
  return [
    v.timestampMs,
    utcDay(v.timestampMs),
    rawPath,
    v.path,
    visitorKey({ secret, rotation, visitorId: e.visitorId ?? null, ip: e.ip ?? null, userAgent: e.userAgent ?? null, timestampMs: v.timestampMs }),
    e.userAgent ?? null,
    e.accept ?? null,
    e.method ?? null,
    e.status ?? null,
    e.referrer ?? null,
    c.class,
    c.category,
    c.rule,
    isQualifyingView({ method: e.method ?? null, status: e.status ?? null, path: v.path, class: c.class }) ? 1 : 0,
    null,
  ];
}

/** Generated events, half of them identified by IP + user agent instead of a visitor id, plus edge cases. */
function events(seed: number, n: number): unknown[] {
  const rnd = prng(seed);
  const out: unknown[] = generate({ seed, events: n, days: 40 }).map((d, i) => {
    const w: Record<string, unknown> = { ...d.wire };
    if (i % 2 === 0) {
      delete w.visitorId;
      w.ip = `203.0.113.${Math.floor(rnd() * 40)}`;
    }
    return w;
  });
  out.push(
    { path: '/x', ip: '::FFFF:203.0.113.9', userAgent: 'Mozilla/5.0 Firefox/125.0' },
    { path: '/x', ip: '203.0.113.9', userAgent: 'Mozilla/5.0 Firefox/125.0' },
    { path: '/x', visitorId: '  ', ip: '203.0.113.9' },
    { path: '/docs/a.md', userAgent: 'Mozilla/5.0 Firefox/125.0' },
    { path: '/docs/a', userAgent: 'curl/8', accept: 'text/markdown' },
    { path: '/docs/a', userAgent: '' },
    { path: '/docs/a', userAgent: ' - ' },
    { path: '/img/a.png', method: 'get' },
    { path: '/a', userAgent: 'x'.repeat(600), ip: '1.2.3.4' },
    { url: `https://e.com/${'p'.repeat(700)}` },
    { path: '/a', timestamp: '2026-02-30T00:00:00Z' },
    { path: '/a', unknown: 1 },
    { path: '?' },
  );
  return out;
}

describe('event preparation with memo caches', () => {
  const data = events(11, 3000);

  it('equals the pure functions for every event, with default and with tiny caches (constant eviction)', () => {
    for (const sizes of [{}, { paths: 4, classes: 4, visitors: 4 }]) {
      const p = createEventPreparer(sizes);
      const project = { id: 'prj', visitorSecret: 's1', rotation: 'daily' as const };
      for (let pass = 0; pass < 2; pass++) {
        const gen = p.beginBatch(project);
        for (const raw of data) expect(p.prepare(raw, project, gen, NOW, null)).toEqual(reference(raw, 's1', 'daily'));
      }
    }
  });

  it('a rotation or secret change applies to the very next batch: no visitor key computed under the old settings is reused', () => {
    const p = createEventPreparer();
    const settings: [string, VisitorIdRotation][] = [
      ['s1', 'none'],
      ['s1', 'daily'],
      ['s1', 'monthly'],
      ['s2', 'monthly'],
      ['s1', 'none'],
    ];
    for (const [secret, rotation] of settings) {
      const project = { id: 'prj', visitorSecret: secret, rotation };
      const gen = p.beginBatch(project);
      for (const raw of data.slice(0, 600)) expect(p.prepare(raw, project, gen, NOW, null)).toEqual(reference(raw, secret, rotation));
    }
  });

  it('projects do not share visitor keys; two instances agree', () => {
    const a = createEventPreparer();
    const b = createEventPreparer({ visitors: 16 });
    const p1 = { id: 'p1', visitorSecret: 'one', rotation: 'none' as const };
    const p2 = { id: 'p2', visitorSecret: 'two', rotation: 'none' as const };
    const ip = { path: '/a', ip: '198.51.100.7', userAgent: 'Mozilla/5.0 Firefox/125.0', timestamp: '2026-05-01T00:00:00Z' };
    const k1 = a.prepare(ip, p1, a.beginBatch(p1), NOW, null) as WriteEvent;
    const k2 = a.prepare(ip, p2, a.beginBatch(p2), NOW, null) as WriteEvent;
    expect(k1[4]).not.toBe(k2[4]);
    for (const raw of data) expect(b.prepare(raw, p1, b.beginBatch(p1), NOW, null)).toEqual(a.prepare(raw, p1, a.beginBatch(p1), NOW, null));
  });

  it('carries the dedup key and refuses NUL characters before anything is cached', () => {
    const p = createEventPreparer();
    const project = { id: 'prj', visitorSecret: 's', rotation: 'none' as const };
    const gen = p.beginBatch(project);
    expect((p.prepare({ path: '/a' }, project, gen, NOW, 'k1') as WriteEvent)[14]).toBe('k1');
    expect(p.prepare({ path: '/a', userAgent: 'a\u0000b' }, project, gen, NOW, null)).toMatch(/userAgent must not contain NUL/);
    expect(p.prepare({ path: '/a', userAgent: 'a' }, project, gen, NOW, null)).toEqual(reference({ path: '/a', userAgent: 'a' }, 's', 'none'));
  });
});

describe("the import's shortcut (prepareParsed)", () => {
  // Any ASCII character but the line breaks, quote and backslash (those lines go to the text parser), NUL included.
  const ascii = (max: number) =>
    fc.string({
      unit: fc
        .integer({ min: 0, max: 127 })
        .filter((c) => c !== 10 && c !== 13 && c !== 34 && c !== 92)
        .map((c) => String.fromCharCode(c)),
      maxLength: max,
    });
  /** A field: mostly short, sometimes past its limit (EVENT_LIMITS) or padded up to it. */
  const field = (max: number, limit: number) =>
    fc.oneof(
      { weight: 4, arbitrary: ascii(max) },
      { weight: 1, arbitrary: fc.tuple(ascii(8), fc.integer({ min: limit - 2, max: limit + 2 })).map(([a, n]) => (a + 'x'.repeat(n)).slice(0, n)) },
    );
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec', 'Foo'];
  const time = fc
    .record({
      d: fc.integer({ min: 0, max: 32 }),
      mon: fc.constantFrom(...MONTHS),
      // Around NOW (the future limit), 1969/1970 (the past one), and the ends of 4 digits.
      y: fc.constantFrom(0, 1969, 1970, 2026, 2027, 9999),
      hh: fc.integer({ min: 0, max: 24 }),
      mm: fc.integer({ min: 0, max: 60 }),
      ss: fc.integer({ min: 0, max: 61 }),
      sign: fc.constantFrom('+', '-'),
      oh: fc.integer({ min: 0, max: 24 }),
      om: fc.integer({ min: 0, max: 60 }),
    })
    .map((t) => `${pad(t.d, 2)}/${t.mon}/${pad(t.y, 4)}:${pad(t.hh, 2)}:${pad(t.mm, 2)}:${pad(t.ss, 2)} ${t.sign}${pad(t.oh, 2)}${pad(t.om, 2)}`);
  const plausible = fc
    .record({
      d: fc.integer({ min: 1, max: 28 }),
      m: fc.integer({ min: 0, max: 11 }),
      y: fc.constantFrom(1970, 2025, 2026),
      h: fc.integer({ min: 0, max: 23 }),
    })
    .map((t) => `${pad(t.d, 2)}/${MONTHS[t.m]}/${t.y}:${pad(t.h, 2)}:30:00 +0000`);
  // Either side of the future limit (NOW + MAX_FUTURE_MS) and of 1970, to the second.
  const nearLimit = fc.tuple(fc.constantFrom(NOW + MAX_FUTURE_MS, 0), fc.integer({ min: -3 * 86_400, max: 3 * 86_400 })).map(([at, s]) => {
    const d = new Date(at + s * 1000);
    return `${pad(d.getUTCDate(), 2)}/${MONTHS[d.getUTCMonth()]}/${pad(d.getUTCFullYear(), 4)}:${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)} +0000`;
  });
  const line = fc
    .record({
      ip: fc.oneof(fc.constant('-'), fc.ipV4(), field(12, EVENT_LIMITS.ip)),
      time: fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 1, arbitrary: nearLimit }, { weight: 1, arbitrary: time }),
      method: fc.oneof(fc.constantFrom('GET', 'HEAD', 'post'), fc.stringMatching(/^[A-Za-z]{1,20}$/)),
      path: fc.oneof(fc.stringMatching(/^\/[A-Za-z0-9._~/%?=&#-]{0,40}$/), field(30, EVENT_LIMITS.path), fc.constantFrom('/a/../..', '//', '/%00', '/x%ZZ')),
      status: fc.integer({ min: 0, max: 999 }),
      ref: fc.oneof(fc.constant('-'), field(30, EVENT_LIMITS.referrer)),
      ua: fc.oneof(fc.constant('-'), fc.constantFrom('Mozilla/5.0 Firefox/125.0', 'GPTBot/1.0', 'curl/8'), field(30, EVENT_LIMITS.userAgent)),
      common: fc.boolean(),
    })
    .map((f) => `${f.ip} - - [${f.time}] "${f.method} ${f.path} HTTP/1.1" ${pad(f.status, 3)} 5${f.common ? '' : ` "${f.ref}" "${f.ua}"`}`);

  it('gives exactly what prepare gives, errors included, for arbitrary and hostile combined lines', () => {
    const project = { id: 'p', visitorSecret: 's', rotation: 'daily' as VisitorIdRotation };
    const generic = createEventPreparer();
    const shortcut = createEventPreparer({ paths: 4, classes: 4, visitors: 4 });
    let parsed = 0;
    let stored = 0;
    fc.assert(
      fc.property(line, (text) => {
        const b = Buffer.from(text, 'latin1');
        const state = combinedBytesState();
        const ev = parseCombinedBytes(b, 0, b.length, state);
        if (ev === undefined || ev === null) return;
        parsed++;
        const want = generic.prepare({ ...ev }, project, generic.beginBatch(project), NOW, 'k');
        const got = shortcut.prepareParsed({ ...ev }, state.ms, project, shortcut.beginBatch(project), NOW, 'k');
        expect(got).toEqual(want);
        // The import's events have no timestamp (combinedBytesState(false)): the same result, errors included.
        const bare = combinedBytesState(false);
        const noIso = parseCombinedBytes(b, 0, b.length, bare) as RawEvent;
        expect(shortcut.prepareParsed(noIso, bare.ms, project, shortcut.beginBatch(project), NOW, 'k')).toEqual(want);
        if (typeof want !== 'string') stored++;
      }),
      { numRuns: 3000 },
    );
    // The generators reach both outcomes often.
    expect(stored).toBeGreaterThan(300);
    expect(parsed - stored).toBeGreaterThan(300);
  });

  /** Event i of a batch as the writer reads it: every field by its text, the numbers and the line key. */
  const eventOf = (b: WriteBatch, i: number) => ({
    fields: Array.from({ length: REF_WIDTH }, (_, f) => textOf(b, i, f)),
    ts: b.ts[i],
    day: b.day[i],
    status: b.status[i],
    qualifying: b.qualifying[i],
    digest: [...(b.lineKeys?.digests.subarray(i * 32, i * 32 + 32) ?? [])],
    occ: b.lineKeys?.occ[i],
    ms: b.lineKeys?.ms[i],
  });

  it('prepareParsedInto puts in a batch what add(prepareParsed(…)) puts, over runs of lines across batches', () => {
    const project = { id: 'p', visitorSecret: 's', rotation: 'daily' as VisitorIdRotation };
    let added = 0;
    fc.assert(
      fc.property(
        // A few lines, repeated in any order (entries reused within a batch and across batches), cut into batches.
        fc.array(line, { minLength: 1, maxLength: 6 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 5 })), { minLength: 1, maxLength: 40 }),
        fc.constantFrom(1, 3, 7, 64),
        fc.constantFrom(2, 4, 1000),
        (pool, picks, batchSize, cache) => {
          const generic = createEventPreparer();
          const direct = createEventPreparer({ paths: cache, classes: cache, visitors: cache });
          const want = new BatchBuilder(4);
          const got = new BatchBuilder(4);
          const wantBatches: WriteBatch[] = [];
          const gotBatches: WriteBatch[] = [];
          const state = combinedBytesState();
          // The import's parser state: events without their timestamp, which prepareParsedInto makes when it needs it.
          const bare = combinedBytesState(false);
          for (const [k, occ] of picks) {
            const b = Buffer.from(pool[k % pool.length] as string, 'latin1');
            const ev = parseCombinedBytes(b, 0, b.length, state);
            if (ev === undefined || ev === null) continue;
            const noIso = parseCombinedBytes(b, 0, b.length, bare) as RawEvent;
            expect(bare.ms).toBe(state.ms);
            const digest = crypto.hash('sha256', b, 'binary');
            const prepared = generic.prepareParsed({ ...ev }, state.ms, project, generic.beginBatch(project), NOW, null);
            if (typeof prepared !== 'string') want.add(prepared, digest, occ, state.ms);
            const error = direct.prepareParsedInto(got, noIso, bare.ms, project, direct.beginBatch(project), NOW, digest, occ, bare.ms);
            expect(error).toEqual(typeof prepared === 'string' ? prepared : null);
            if (want.n >= batchSize) {
              wantBatches.push(want.take() as WriteBatch);
              gotBatches.push(got.take() as WriteBatch);
            }
          }
          const w = want.take();
          const g = got.take();
          if (w !== null) wantBatches.push(w);
          if (g !== null) gotBatches.push(g);
          expect(gotBatches.map((b) => b.n)).toEqual(wantBatches.map((b) => b.n));
          for (let j = 0; j < wantBatches.length; j++) {
            const wb = wantBatches[j] as WriteBatch;
            const gb = gotBatches[j] as WriteBatch;
            for (let i = 0; i < wb.n; i++) expect(eventOf(gb, i)).toEqual(eventOf(wb, i));
            // The raw path is the normalised one's index exactly when add() made it so (what the writer stores as null).
            for (let i = 0; i < wb.n; i++)
              expect(gb.refs[i * REF_WIDTH + R_PATH] === gb.refs[i * REF_WIDTH + R_RAW_PATH]).toBe(
                wb.refs[i * REF_WIDTH + R_PATH] === wb.refs[i * REF_WIDTH + R_RAW_PATH],
              );
            added += wb.n;
          }
        },
      ),
      { numRuns: 1500 },
    );
    // Enough events compared: about 1,900-2,150 over 1,500 runs (seeds vary), so half that.
    expect(added).toBeGreaterThan(1000);
  });
});

describe('GenerationCache', () => {
  it('keeps entries used within the last max/2 insertions and drops ones unused for max insertions', () => {
    const c = new GenerationCache<string, number>(10);
    for (let i = 0; i < 5; i++) c.set(`k${i}`, i);
    // The first generation is full: it became the previous one.
    expect(c.get('k0')).toBe(0); // promoted to the current generation
    // k0 and k5..k8 fill the current generation: it rotates, and k1..k4 (never used again) are dropped.
    for (let i = 5; i < 9; i++) c.set(`k${i}`, i);
    c.set('k9', 9);
    expect(c.get('k1')).toBeUndefined();
    expect(c.get('k4')).toBeUndefined();
    expect(c.get('k0')).toBe(0);
    expect(c.get('k9')).toBe(9);
    expect(c.size).toBeLessThanOrEqual(10);
  });

  it('never holds more than max entries and always returns the latest value', () => {
    const c = new GenerationCache<number, number>(64);
    const rnd = prng(3);
    const truth = new Map<number, number>();
    for (let i = 0; i < 20_000; i++) {
      const k = Math.floor(rnd() * 200);
      if (rnd() < 0.5) {
        c.set(k, i);
        truth.set(k, i);
      } else {
        const v = c.get(k);
        if (v !== undefined) expect(v).toBe(truth.get(k));
      }
      expect(c.size).toBeLessThanOrEqual(64);
    }
    c.delete(1);
    expect(c.get(1)).toBeUndefined();
    c.clear();
    expect(c.size).toBe(0);
  });
});
