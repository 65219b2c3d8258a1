// The benchmark's data generator and digest: deterministic output, the requested mix, and ground truth that
// agrees with Inkwell's own normaliser, classifier and qualifying rule (so digests compare like with like).
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { intArg, parseArgs } from '../../bench/lib/args.ts';
import { dailyCounts, type GeneratedEvent, generateEvents, genOptions } from '../../bench/lib/dataset.ts';
import { compareRows, digestExport, type PageRow, sortedDigest } from '../../bench/lib/export.ts';
import { samplePages } from '../../bench/lib/harness.ts';
import { ordinalUuid } from '../../bench/lib/prng.ts';
import { USER_AGENTS } from '../../bench/lib/user-agents.ts';
import { classify } from '../../src/analytics/classify/classify.ts';
import { normalizePath } from '../../src/analytics/classify/normalize.ts';
import { isQualifyingView } from '../../src/analytics/classify/qualify.ts';

const small = genOptions({ events: 20_000, visitors: 4_000, paths: 2_000 });

function collect(o = small): GeneratedEvent[] {
  const out: GeneratedEvent[] = [];
  generateEvents(o, (e) => out.push(e));
  return out;
}

const hash = (events: GeneratedEvent[]) => crypto.createHash('sha256').update(JSON.stringify(events)).digest('hex');

describe('bench data generator', () => {
  const events = collect();

  it('is deterministic for a seed and differs across seeds', () => {
    expect(hash(collect())).toBe(hash(events));
    expect(hash(collect({ ...small, seed: 7 }))).not.toBe(hash(events));
  });

  it('emits exactly N events in time order over the days, with the class mix and noise asked for', () => {
    expect(events).toHaveLength(small.events);
    expect(dailyCounts(small).reduce((a, b) => a + b, 0)).toBe(small.events);
    for (let i = 1; i < events.length; i++) expect(events[i]!.ts).toBeGreaterThanOrEqual(events[i - 1]!.ts);
    const byUaClass = { human: 0, ai: 0, crawler: 0 };
    for (const e of events) byUaClass[USER_AGENTS[e.ua]!.class]++;
    expect(byUaClass.human / events.length).toBeCloseTo(0.7, 1);
    expect(byUaClass.ai / events.length).toBeCloseTo(0.2, 1);
    expect(byUaClass.crawler / events.length).toBeCloseTo(0.1, 1);
    expect(events.some((e) => e.raw.endsWith('.md'))).toBe(true);
    expect(events.some((e) => e.acceptMd)).toBe(true);
    expect(events.some((e) => e.method === 'POST')).toBe(true);
    expect(events.some((e) => e.status === 404)).toBe(true);
    expect(events.some((e) => e.raw.startsWith('https://'))).toBe(true);
    const q = events.filter((e) => e.q).length / events.length;
    expect(q).toBeGreaterThan(0.75);
    expect(q).toBeLessThan(0.9);
  });

  it('ground truth (path, class, qualifying) matches src/analytics for every event', () => {
    const mismatches: string[] = [];
    for (const e of events) {
      const ua = USER_AGENTS[e.ua]!.ua;
      const accept = e.acceptMd ? 'text/markdown, text/html;q=0.9, */*;q=0.8' : null;
      const path = normalizePath(e.raw);
      if (path !== e.path) mismatches.push(`path ${e.raw} → ${path}, expected ${e.path}`);
      const c = classify({ userAgent: ua, path: e.raw, accept });
      if (c.class !== e.cls) mismatches.push(`class ${e.raw} ${ua}: ${c.class}, expected ${e.cls}`);
      if (isQualifyingView({ method: e.method, status: e.status, path: e.path, class: c.class }) !== e.q)
        mismatches.push(`qualifying ${e.method} ${e.status} ${e.raw}`);
    }
    expect(mismatches.slice(0, 10)).toEqual([]);
  });

  it('uses every visitor of the population, with heavy-tailed activity', () => {
    const perVisitor = new Map<string, number>();
    for (const e of events) perVisitor.set(e.visitor, (perVisitor.get(e.visitor) ?? 0) + 1);
    expect(perVisitor.size).toBe(small.visitors);
    const counts = [...perVisitor.values()].sort((a, b) => a - b);
    expect(counts[Math.floor(counts.length / 2)]).toBeLessThanOrEqual(3);
    expect(counts[counts.length - 1]).toBeGreaterThan(100);
  });

  it("names each event's visitor by its ordinal (what the dataset's distinct-visitor count counts)", () => {
    const bad = events.filter((e) => !(e.ordinal >= 0 && e.ordinal < small.visitors && e.visitor === ordinalUuid(e.ordinal, small.seed)));
    expect(bad.slice(0, 3)).toEqual([]);
  });

  it('gives every visitor ordinal a distinct version-4 UUID', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = ordinalUuid(i, 42);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(20_000);
  });
});

describe('bench export digest and helpers', () => {
  const rows: PageRow[] = [
    { path: '/b', human: 2, ai: 1, total: 3 },
    { path: '/a', human: 1, ai: 2, total: 3 },
    { path: '/caf\u00e9', human: 5, ai: 0, total: 5 },
    { path: '/c', human: 1, ai: 0, total: 1 },
  ];
  const totals = { human: 7, ai: 3, total: 9 };

  it('orders by total desc then path by code point, and the digest depends on order and numbers', () => {
    const sorted = [...rows].sort(compareRows).map((r) => r.path);
    expect(sorted).toEqual(['/caf\u00e9', '/a', '/b', '/c']);
    const inOrder = { totals, rows: [...rows].sort(compareRows) };
    expect(sortedDigest({ totals, rows })).toBe(digestExport(inOrder));
    expect(digestExport({ totals, rows })).not.toBe(digestExport(inOrder));
    expect(digestExport({ totals: { ...totals, total: 10 }, rows: inOrder.rows })).not.toBe(digestExport(inOrder));
  });

  it('samples naive pages evenly including the first and last', () => {
    expect(samplePages(80, 5)).toEqual([0, 20, 40, 59, 79]);
    expect(samplePages(3, 5)).toEqual([0, 1, 2]);
    expect(samplePages(10, 'all')).toHaveLength(10);
  });

  it('parses sizes like 200k and 10M and rejects junk', () => {
    expect(intArg(parseArgs(['--events', '200k']), 'events')).toBe(200_000);
    expect(intArg(parseArgs(['--events=10M']), 'events')).toBe(10_000_000);
    expect(() => intArg(parseArgs(['--events', 'lots']), 'events')).toThrow(/--events/);
  });
});
