import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestDedupKeyAt, HELD_BACK, importFile, lineDedupKeyAt, lineHash, OccurrenceCounter } from '../../src/analytics/import/import.ts';
import { LINE_KEY_MAX_BYTES, lineKeyBytes } from '../../src/analytics/ingest/line-key.ts';
import {
  BatchBuilder,
  dedupKeyDayOf,
  dedupKeyDigest,
  dedupKeyDigestText,
  dedupKeyOf,
  digestTextWord,
  hashOfWords,
  type LineKeys,
  packEvents,
  R_CATEGORY,
  R_METHOD,
  R_PATH,
  R_RAW_PATH,
  R_REFERRER,
  R_RULE,
  R_UA,
  R_VKEY,
  REF_WIDTH,
  textOf,
  type WriteEvent,
} from '../../src/analytics/ingest/write-batch.ts';
import { dedupDigest, dedupKeyDay } from '../../src/analytics/segments/dedup.ts';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect, tempDir } from '../helpers/db.ts';
import { sendEvents, walk } from './api.ts';
import { expectedViews, expectedVisitors, type GenEvent, generate } from './dataset.ts';
import { sqlAnalyticsService } from './services.ts';
import { rewriteStoredEvents } from './stored-events.ts';

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, '../../bin/inkwell.js');

async function cli(env: Record<string, string>, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [BIN, ...args], { env: { ...process.env, ...env, LOG_LEVEL: 'silent' }, timeout: 60_000 });
}

describeEachDialect('analytics import and reclassify', (dialect) => {
  let t: TestApp;
  let viaImport: Seeded;
  let viaApi: Seeded;
  let data: GenEvent[];
  let dir: string;
  let logFile: string;

  beforeAll(async () => {
    t = await startTestApp(dialect);
    viaImport = await t.seed({ name: 'imported' });
    viaApi = await t.seed({ name: 'sent' });
    data = generate({ seed: 11, events: 900, days: 6 });
    // A few identical lines repeated on purpose: the same client fetching the same page in the same second.
    const order = data.flatMap((d, i) => (i === 3 || i === 50 ? [d, d] : i === 51 ? [d, d, d] : [d]));
    const lines = order.map((d) => d.logLine);
    data = order;
    dir = tempDir('inkwell-import-');
    logFile = path.join(dir, 'access.log');
    fs.writeFileSync(logFile, `${lines.join('\n')}\nthis is not a log line\n\n`);
  });
  afterAll(async () => {
    await t?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a combined log imported with the CLI gives the same counts as the same events sent to the API; a second import adds nothing', async () => {
    const first = await cli(t.testDb.env, ['analytics', 'import', '--project', viaImport.project.id, '--format', 'combined', '--json', logFile]);
    const stats = JSON.parse(first.stdout).files[0].stats;
    expect(stats.lines).toBe(data.length + 1);
    expect(stats.unparseable).toBe(1);
    expect(stats.inserted).toBe(data.length);

    await sendEvents(
      t,
      viaApi.adminKey,
      viaApi.project.id,
      data.map((d) => d.logWire),
    );

    const truths = data.map((d) => d.logTruth);
    for (const [fromDay, toDay, query] of [
      [null, null, {}],
      [Math.floor(Date.UTC(2026, 2, 2) / 86_400_000), Math.floor(Date.UTC(2026, 2, 5) / 86_400_000), { dateFrom: '2026-03-02', dateTo: '2026-03-05' }],
    ] as [number | null, number | null, Record<string, string>][]) {
      const imported = await walk(t, viaImport.adminKey, viaImport.project.id, 'visitors', query, 250);
      const sent = await walk(t, viaApi.adminKey, viaApi.project.id, 'visitors', query, 250);
      expect(imported).toEqual(sent);
      expect(imported).toEqual(expectedVisitors(truths, fromDay, toDay));
      const importedViews = await walk(t, viaImport.adminKey, viaImport.project.id, 'views', query, 250);
      expect(importedViews).toEqual(await walk(t, viaApi.adminKey, viaApi.project.id, 'views', query, 250));
      expect(importedViews).toEqual(expectedViews(truths, fromDay, toDay));
    }

    const before = await walk(t, viaImport.adminKey, viaImport.project.id, 'views', {}, 250);
    const second = await cli(t.testDb.env, ['analytics', 'import', '--project', viaImport.project.id, '--json', logFile]);
    const again = JSON.parse(second.stdout).files[0].stats;
    expect(again.inserted).toBe(0);
    expect(again.accepted).toBe(data.length);
    expect(await walk(t, viaImport.adminKey, viaImport.project.id, 'views', {}, 250)).toEqual(before);
  });

  it('a log that grew since the last import adds only its new lines; JSON lines import too', async () => {
    const svc = sqlAnalyticsService(t.ctx);
    const p = await t.seed({ name: 'growing' });
    const more = generate({ seed: 12, events: 120, days: 3 });
    const file = path.join(dir, 'grow.log');
    fs.writeFileSync(
      file,
      `${more
        .slice(0, 80)
        .map((d) => d.logLine)
        .join('\n')}\n`,
    );
    const a = await importFile(svc.ingest, { projectId: p.project.id, format: 'combined', file, batchSize: 25 });
    expect(a.inserted).toBe(80);
    fs.appendFileSync(
      file,
      `${more
        .slice(80)
        .map((d) => d.logLine)
        .join('\n')}\n`,
    );
    const b = await importFile(svc.ingest, { projectId: p.project.id, format: 'combined', file, batchSize: 25 });
    expect(b.inserted).toBe(40);
    expect(b.accepted).toBe(120);

    const jsonl = path.join(dir, 'events.jsonl');
    fs.writeFileSync(jsonl, `${more.map((d) => JSON.stringify(d.wire)).join('\n')}\n{"path": 5}\n`);
    const j = await importFile(svc.ingest, { projectId: viaApi.project.id, format: 'jsonl', file: jsonl });
    expect(j.inserted).toBe(120);
    expect(j.unparseable + j.rejected).toBe(1);
    const j2 = await importFile(svc.ingest, { projectId: viaApi.project.id, format: 'jsonl', file: jsonl });
    expect(j2.inserted).toBe(0);
  });

  it('a live log imported while its writer is mid-line: the unfinished last line is held back, imported once when complete', async () => {
    const svc = sqlAnalyticsService(t.ctx);
    const p = await t.seed({ name: 'live' });
    const more = generate({ seed: 13, events: 30, days: 1 });
    const lines = more.map((d) => d.logLine);
    const file = path.join(dir, 'live.log');
    const last = lines[29] as string;
    // Cut after the size: what was written so far parses as a common-format line, a different line than the whole one.
    const cut = last.indexOf('"', last.indexOf('" ') + 2) - 1;
    fs.writeFileSync(file, `${lines.slice(0, 29).join('\n')}\n${last.slice(0, cut)}`);
    const a = await importFile(svc.ingest, { projectId: p.project.id, format: 'combined', file });
    expect(a).toMatchObject({ lines: 29, inserted: 29, unparseable: 0 });
    expect(a.samples).toEqual([{ line: 30, error: HELD_BACK }]);
    fs.appendFileSync(file, `${last.slice(cut)}\n`);
    const b = await importFile(svc.ingest, { projectId: p.project.id, format: 'combined', file });
    expect(b).toMatchObject({ lines: 30, inserted: 1, accepted: 30, samples: [] });
    expect((await importFile(svc.ingest, { projectId: p.project.id, format: 'combined', file })).inserted).toBe(0);
    const views = await walk(t, p.adminKey, p.project.id, 'views', {}, 250);
    expect(views).toEqual(
      expectedViews(
        more.map((d) => d.logTruth),
        null,
        null,
      ),
    );
  });

  it('hostile logs: CRLF, a lone CR, invalid UTF-8, a huge line, escaped quotes, blank lines, a truncated last line, an empty file', async () => {
    const svc = sqlAnalyticsService(t.ctx);
    const p = await t.seed({ name: 'hostile' });
    const line = (n: number, tail = '"-" "Mozilla/5.0 Firefox/125.0"') =>
      `198.51.100.${n} - - [02/Mar/2026:10:00:0${n % 10} +0000] "GET /h/${n} HTTP/1.1" 200 5 ${tail}`;
    const parts: Buffer[] = [
      Buffer.from(`${line(1)}\r\n${line(2)}\r${line(3)}\n\n   \n`),
      // Invalid UTF-8 in the user agent: decoded with U+FFFD, as before, and imported.
      Buffer.concat([Buffer.from(line(4, '"-" "Bad ')), Buffer.from([0xff, 0xc3]), Buffer.from('"\n')]),
      // Escaped quotes in the request line (Apache \", nginx \x22): the target has no space, so it parses.
      Buffer.from(`${line(5).replace('/h/5', '/h/\\"q\\x22')}\n`),
      // A line of 2 MiB: skipped as too long, without holding it.
      Buffer.from(`${'x'.repeat(2 << 20)}\n`),
      Buffer.from(`${line(6)}\n`),
      // The last line cut short (no closing quote, no line break).
      Buffer.from(line(7).slice(0, -5)),
    ];
    const file = path.join(dir, 'hostile.log');
    fs.writeFileSync(file, Buffer.concat(parts));
    const a = await importFile(svc.ingest, { projectId: p.project.id, format: 'combined', file });
    // The truncated last line has no line break: held back, not counted (it may be a line being written).
    expect(a).toMatchObject({ lines: 7, unparseable: 1, rejected: 0, inserted: 6 });
    expect(a.samples).toEqual([
      { line: 8, error: `line longer than ${2 ** 20} bytes` },
      { line: 10, error: HELD_BACK },
    ]);
    const views = await walk(t, p.adminKey, p.project.id, 'views', {}, 250);
    expect(views.rows.map((r) => r.path).sort()).toEqual(['/h/"q"', '/h/1', '/h/2', '/h/3', '/h/4', '/h/6']);
    // Again, and with LF line ends instead: the same lines, nothing added.
    expect((await importFile(svc.ingest, { projectId: p.project.id, format: 'combined', file })).inserted).toBe(0);
    const lf = path.join(dir, 'hostile-lf.log');
    fs.writeFileSync(lf, fs.readFileSync(file).toString('latin1').replace(/\r\n?/g, '\n'), 'latin1');
    expect(await importFile(svc.ingest, { projectId: p.project.id, format: 'combined', file: lf })).toMatchObject({ lines: 7, inserted: 0, accepted: 6 });
    const empty = path.join(dir, 'empty.log');
    fs.writeFileSync(empty, '');
    expect(await importFile(svc.ingest, { projectId: p.project.id, format: 'combined', file: empty })).toEqual({
      lines: 0,
      unparseable: 0,
      accepted: 0,
      inserted: 0,
      rejected: 0,
      samples: [],
    });
  });

  it('`analytics visitors` walks every page through the API', async () => {
    const env = { INKWELL_URL: t.baseUrl, INKWELL_API_KEY: viaImport.adminKey };
    const expected = await walk(t, viaImport.adminKey, viaImport.project.id, 'visitors', { dateFrom: '2026-03-02' }, 250);
    const json = await cli(env, ['analytics', 'visitors', '--project', viaImport.project.id, '--from', '2026-03-02', '--format', 'json', '--page-size', '4']);
    expect(JSON.parse(json.stdout)).toEqual({ totals: expected.totals, visitors: expected.rows });
  });

  it('reclassify restores classes, visitors and views after stored classes went wrong', async () => {
    const svc = sqlAnalyticsService(t.ctx);
    const before = await walk(t, viaImport.adminKey, viaImport.project.id, 'visitors', {}, 250);
    const beforeViews = await walk(t, viaImport.adminKey, viaImport.project.id, 'views', {}, 250);
    // Simulate a rules change: every stored event becomes a "human" qualifying view (the state a database
    // classified by the old rules would be in; the day summaries follow the segments).
    const ord = (await t.ctx.db.kysely.selectFrom('analytics_projects').select('ord').where('project_id', '=', viaImport.project.id).executeTakeFirstOrThrow())
      .ord;
    await rewriteStoredEvents(t.ctx.db, (e) => ({ ...e, cls: 'human', category: null, rule: 'old-rule', qualifying: true }), ord);
    const broken = await walk(t, viaImport.adminKey, viaImport.project.id, 'views', {}, 250);
    expect(broken).not.toEqual(beforeViews);

    const result = await svc.store.reclassify(viaImport.project.id);
    expect(result.scanned).toBe(data.length);
    expect(result.changed).toBe(data.length);
    expect(await walk(t, viaImport.adminKey, viaImport.project.id, 'visitors', {}, 250)).toEqual(before);
    expect(await walk(t, viaImport.adminKey, viaImport.project.id, 'views', {}, 250)).toEqual(beforeViews);
    // Nothing left to change.
    expect((await svc.store.reclassify(viaImport.project.id)).changed).toBe(0);
  });
});

describe('analytics CLI (one database is enough: these exercise argument handling and output)', () => {
  let t: TestApp;
  let p: Seeded;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
    p = await t.seed();
    await sendEvents(t, p.adminKey, p.project.id, [
      { path: '/a,b', timestamp: '2026-03-01T10:00:00Z', ip: '198.51.100.1', userAgent: 'Mozilla/5.0 Firefox/125.0' },
      { path: '/c', timestamp: '2026-03-01T10:00:00Z', ip: '198.51.100.1', userAgent: 'Mozilla/5.0 Firefox/125.0' },
      { path: '/c', timestamp: '2026-03-02T10:00:00Z', ip: '198.51.100.2', userAgent: 'Claude-User/1.0' },
    ]);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('`analytics visitors --format csv` quotes fields and lists every row; bad options fail with a clear message', async () => {
    const env = { INKWELL_URL: t.baseUrl, INKWELL_API_KEY: p.adminKey };
    const csv = await cli(env, ['analytics', 'visitors', '--project', p.project.id, '--format', 'csv', '--page-size', '1']);
    expect(csv.stdout).toBe('path,human,ai,total\n/c,1,1,2\n"/a,b",1,0,1\n');
    await expect(cli(env, ['analytics', 'import', '--project', p.project.id, '--format', 'xml', 'x.log'])).rejects.toMatchObject({
      stderr: expect.stringMatching(/--format must be combined or jsonl/),
    });
  });

  it('`analytics series|agents|referrers` print what the API returns, as csv, json and a table; bad options fail clearly', async () => {
    const env = { INKWELL_URL: t.baseUrl, INKWELL_API_KEY: p.adminKey };
    const run = (...args: string[]) => cli(env, ['analytics', ...args, '--project', p.project.id]);
    expect((await run('series', '--from', '2026-03-01', '--to', '2026-03-03', '--format', 'csv')).stdout).toBe(
      'date,human,ai,total,crawlerRequests\n2026-03-01,1,0,1,0\n2026-03-02,0,1,1,0\n',
    );
    const weekly = JSON.parse((await run('series', '--from', '2026-03-01', '--to', '2026-03-03', '--interval', 'week', '--format', 'json')).stdout);
    expect(weekly).toEqual({
      interval: 'week',
      series: [
        { date: '2026-03-01', human: 1, ai: 0, total: 1, crawlerRequests: 0 },
        { date: '2026-03-02', human: 0, ai: 1, total: 1, crawlerRequests: 0 },
      ],
      totals: { human: 1, ai: 1, total: 2, crawlerRequests: 0 },
    });
    expect((await run('agents', '--format', 'csv')).stdout).toBe('agent,class,category,visitors,views,requests\nClaude-User,ai,,1,1,1\n');
    expect((await run('agents')).stdout).toMatch(/Claude-User\s+ai\s+-\s+1\s+1\s+1/);
    expect(JSON.parse((await run('referrers', '--format', 'json')).stdout)).toEqual({ referrers: [] });
    await expect(run('series', '--interval', 'year')).rejects.toMatchObject({ stderr: expect.stringMatching(/--interval must be day, week or month/) });
    await expect(run('agents', '--from', '2026-02-30')).rejects.toMatchObject({ stderr: expect.stringMatching(/dateFrom/) });
  });

  it('`project set --visitor-id-rotation` changes how visitors without a visitorId are identified', async () => {
    // A project this server has not ingested for yet (ingest caches project settings for a few seconds).
    const p = await t.seed({ name: 'rotation' });
    const out = await cli(t.testDb.env, ['project', 'set', '--project', p.project.id, '--visitor-id-rotation', 'daily', '--json']);
    expect(JSON.parse(out.stdout)).toEqual({ projectId: p.project.id, settings: { visitorIdRotation: 'daily', allowedRepositories: [] } });
    const ev = (ts: string) => ({ path: '/r', timestamp: ts, ip: '198.51.100.7', userAgent: 'Mozilla/5.0 Firefox/125.0' });
    await sendEvents(t, p.adminKey, p.project.id, [ev('2026-03-01T10:00:00Z'), ev('2026-03-01T20:00:00Z'), ev('2026-03-02T10:00:00Z')]);
    const daily = await walk(t, p.adminKey, p.project.id, 'visitors', {}, 250);
    // Same IP and user agent on two UTC days: two visitors with daily rotation (one with the default, none).
    expect(daily).toEqual({ totals: { human: 2, ai: 0, total: 2 }, rows: [{ path: '/r', human: 2, ai: 0, total: 2 }] });
  });
});

it('occurrence counter numbers identical lines and forgets beyond its window', () => {
  const c = new OccurrenceCounter(3);
  expect([c.next('a'), c.next('a'), c.next('b'), c.next('a')]).toEqual([0, 1, 0, 2]);
});

/** The counter as it was (a Map of base64url digests, two generations): the one the typed tables must equal. */
class MapOccurrenceCounter {
  private current = new Map<string, number>();
  private previous = new Map<string, number>();
  constructor(private readonly window: number) {}
  next(hash: string): number {
    const seen = this.current.get(hash) ?? this.previous.get(hash);
    const n = seen === undefined ? 0 : seen + 1;
    this.current.set(hash, n);
    if (this.current.size >= this.window) {
      this.previous = this.current;
      this.current = new Map();
    }
    return n;
  }
}

it('occurrence counter over digests counts exactly as the Map of hashes did, across generations', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 600 }), (window, picks) => {
      const mine = new OccurrenceCounter(window);
      const ref = new MapOccurrenceCounter(window);
      for (const p of picks) {
        const line = `line ${p}`;
        const digest = crypto.hash('sha256', line, 'buffer');
        expect(mine.nextDigest(digest)).toBe(ref.next(lineHash(line)));
      }
    }),
  );
});

it('occurrence counter over latin1 digests counts exactly as over the digests as bytes', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 600 }), (window, picks) => {
      const bytes = new OccurrenceCounter(window);
      const text = new OccurrenceCounter(window);
      for (const p of picks) {
        const line = `line ${p}`;
        expect(text.nextDigestText(crypto.hash('sha256', line, 'binary'))).toBe(bytes.nextDigest(crypto.hash('sha256', line, 'buffer')));
      }
    }),
  );
});

it('occurrence counter at an offset of a digest array counts as over the digest alone', () => {
  const at = new OccurrenceCounter(5);
  const one = new OccurrenceCounter(5);
  const all = Buffer.concat(Array.from({ length: 40 }, (_, i) => crypto.hash('sha256', `line ${i % 7}`, 'buffer')));
  for (let i = 0; i < 40; i++) expect(at.nextDigestAt(all, 32 * i)).toBe(one.nextDigest(all.subarray(32 * i, 32 * i + 32)));
});

it('hostile lines: digests that share their first word (or its low bits) do not make the counter quadratic', () => {
  // 60,000 distinct keys whose first word is the same: with slots from the digest's bits as they were, each probe
  // walked past every earlier key (1.8 billion probes); slots from the seeded mix of two words keep it linear.
  const n = 60_000;
  const c = new OccurrenceCounter(n + 1);
  const d = new Uint8Array(32);
  const counts: number[] = [];
  const started = performance.now();
  for (const pass of [0, 1])
    for (let i = 0; i < n; i += pass === 0 ? 1 : 997) {
      d[4] = i >>> 16;
      d[5] = (i >>> 8) & 255;
      d[6] = i & 255;
      counts.push(c.nextDigest(d));
    }
  const ms = performance.now() - started;
  expect(counts.filter((k, i) => k !== (i < n ? 0 : 1))).toEqual([]);
  expect(ms).toBeLessThan(3000);
});

it('a batch built with latin1 digests and remembered refs equals one built from bytes and tuples, field by field', () => {
  const texts = ['/a', '/b', '/a/', 'GET', 'HEAD', 'human', 'ai', 'Mozilla', 'curl'];
  const maybe = fc.option(fc.constantFrom(...texts), { nil: null });
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          raw: fc.constantFrom(...texts),
          path: fc.constantFrom(...texts),
          ua: maybe,
          method: maybe,
          ref: maybe,
          rule: maybe,
          line: fc.string({ maxLength: 12 }),
        }),
        { minLength: 1, maxLength: 40 },
      ),
      (rows) => {
        const events = rows.map((r, i): WriteEvent => [i, 0, r.raw, r.path, `v${i % 3}`, r.ua, null, r.method, 200, r.ref, 'human', r.ua, r.rule, 1, null]);
        const builder = new BatchBuilder(16);
        rows.forEach((r, i) => {
          builder.add(events[i] as WriteEvent, crypto.hash('sha256', r.line, 'binary'), 0, 1000);
        });
        const b = builder.take() as NonNullable<ReturnType<BatchBuilder['take']>>;
        rows.forEach((r, i) => {
          const e = events[i] as WriteEvent;
          expect([R_RAW_PATH, R_PATH, R_VKEY, R_UA, R_METHOD, R_REFERRER, R_CATEGORY, R_RULE].map((f) => textOf(b, i, f))).toEqual([
            e[2],
            e[3],
            e[4],
            e[5],
            e[7],
            e[9],
            e[11],
            e[12],
          ]);
          // One index per distinct string: the writer tells a raw path equal to its normalised one by the index.
          expect(textOf(b, i, R_RAW_PATH) === textOf(b, i, R_PATH)).toBe(b.refs[i * REF_WIDTH + R_RAW_PATH] === b.refs[i * REF_WIDTH + R_PATH]);
          expect(Buffer.from(b.lineKeys?.digests.subarray(i * 32, i * 32 + 32) ?? [])).toEqual(crypto.hash('sha256', r.line, 'buffer'));
        });
        expect(new Set(b.strings).size).toBe(b.strings.length);
      },
    ),
  );
});

it('dedup keys from digests equal the keys from hash text', () => {
  fc.assert(
    fc.property(
      fc.string({ unit: 'binary', maxLength: 80 }),
      fc.integer({ min: 0, max: 4 }),
      fc.oneof(fc.constant(Number.NaN), fc.integer({ min: -5, max: 4e12 })),
      (line, occ, ms) => {
        const digest = crypto.hash('sha256', line, 'buffer');
        expect(digestDedupKeyAt(digest, occ, ms)).toBe(lineDedupKeyAt(lineHash(line), occ, ms));
        // Twice: the kept time prefix gives the same answer.
        expect(digestDedupKeyAt(digest, occ, ms)).toBe(lineDedupKeyAt(lineHash(line), occ, ms));
      },
    ),
  );
});

it('line keys written as bytes are the characters of the keys from digests', () => {
  const out = new Uint8Array(LINE_KEY_MAX_BYTES);
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 64, maxLength: 64 }),
      fc.integer({ min: 0, max: 1 }),
      fc.oneof(fc.integer({ min: 0, max: 4e12 }), fc.constantFrom(0, 1, 35, 36, 36 ** 9 - 1, 36 ** 9, Number.MAX_SAFE_INTEGER), fc.double()),
      (digests, slot, ms) => {
        const n = lineKeyBytes(out, digests, slot * 32, ms);
        if (!(Number.isSafeInteger(ms) && ms >= 0)) {
          expect(n).toBe(-1);
          return;
        }
        expect(Buffer.from(out.subarray(0, n)).toString('latin1')).toBe(digestDedupKeyAt(digests.subarray(slot * 32, slot * 32 + 32), 0, ms));
      },
    ),
  );
});

it('a batch keyed by line digests gives each event the digest and day of the key string it stands for', () => {
  const event = (ts: number, key: string | null): WriteEvent => [
    ts,
    Math.floor(ts / 864e5),
    '/a',
    '/a',
    'k',
    null,
    null,
    'GET',
    200,
    null,
    'human',
    null,
    null,
    1,
    key,
  ];
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          line: fc.string({ maxLength: 40 }),
          occ: fc.integer({ min: -1, max: 3 }),
          ms: fc.oneof(fc.integer({ min: 0, max: 4e12 }), fc.constantFrom(Number.NaN, -1, 0.5, 2 ** 60)),
          text: fc.option(fc.string({ maxLength: 20 }), { nil: null }),
        }),
        { minLength: 1, maxLength: 20 },
      ),
      (rows) => {
        const b = packEvents(rows.map((r) => event(Number.isFinite(r.ms) ? Math.abs(r.ms) : 0, r.occ >= 0 ? null : r.text)));
        const lk: LineKeys = { digests: new Uint8Array(rows.length * 32), occ: new Int32Array(rows.length), ms: new Float64Array(rows.length) };
        rows.forEach((r, i) => {
          lk.digests.set(crypto.hash('sha256', r.line, 'buffer'), i * 32);
          lk.occ[i] = r.occ;
          lk.ms[i] = r.ms;
        });
        b.lineKeys = lk;
        rows.forEach((r, i) => {
          const key = r.occ >= 0 ? lineDedupKeyAt(lineHash(r.line), r.occ, r.ms) : r.text;
          expect(dedupKeyOf(b, i)).toBe(key);
          expect(dedupKeyDigest(b, i)).toEqual(key === null ? null : dedupDigest(key));
          const text = dedupKeyDigestText(b, i);
          expect(text === null ? null : Buffer.from(text, 'latin1')).toEqual(key === null ? null : dedupDigest(key));
          if (text !== null) {
            expect((BigInt(digestTextWord(text, 0)) << 32n) | BigInt(digestTextWord(text, 4))).toBe(dedupDigest(key as string).readBigUInt64BE(0));
            // The writer's one-BigInt form (hashOfWords) of the same words.
            expect(hashOfWords(digestTextWord(text, 0), digestTextWord(text, 4))).toBe(dedupDigest(key as string).readBigUInt64BE(0));
          }
          expect(dedupKeyDayOf(b, i)).toBe(key === null ? null : dedupKeyDay(key));
        });
      },
    ),
  );
});

it('hashOfWords is (BigInt(hi) << 32n) | BigInt(lo) for any two 32-bit words', () => {
  const word = fc.oneof(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.constantFrom(0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1));
  fc.assert(
    fc.property(word, word, (hi, lo) => {
      expect(hashOfWords(hi, lo)).toBe((BigInt(hi) << 32n) | BigInt(lo));
    }),
    { numRuns: 2000 },
  );
});
