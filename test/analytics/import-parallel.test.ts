// The parallel import (import-parallel.ts: import threads parse and prepare pieces of the file, this thread
// orders them) against the serial one (importFile with workers: 0): the same counts and samples, the same stored
// events and answers, the same dedup keys (a file imported one way adds nothing imported the other way), pieces
// cut anywhere (CRLF split across reads, a line longer than the limit), and a thread killed mid-import losing
// nothing it reported imported.
import fs from 'node:fs';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ImportOptions, type ImportStats, importFile, importThreads, PARALLEL_MIN_BYTES } from '../../src/analytics/import/import.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect, tempDir } from '../helpers/db.ts';
import { walk } from './api.ts';
import { generate } from './dataset.ts';
import { sqlAnalyticsService } from './services.ts';
import { type StoredRow, storedRows } from './stored-events.ts';

const hostileLine = (n: number, tail = '"-" "Mozilla/5.0 Firefox/125.0"') =>
  `198.51.100.${n % 250} - - [02/Mar/2026:10:00:0${n % 10} +0000] "GET /h/${n % 40} HTTP/1.1" 200 5 ${tail}`;

/** A log with what the parser and the pieces must get right: repeats, CRLF and lone CRs, blank, broken, refused and non-UTF-8 lines. */
function trickyLog(): Buffer {
  const data = generate({ seed: 21, events: 400, days: 4 });
  const parts: Buffer[] = [];
  data.forEach((d, i) => {
    // Identical lines: the same request repeated, in runs and far apart.
    const copies = i % 50 === 3 ? 3 : 1;
    for (let c = 0; c < copies; c++) parts.push(Buffer.from(`${d.logLine}${i % 7 === 0 ? '\r\n' : i % 11 === 0 ? '\r' : '\n'}`));
    if (i % 97 === 5) parts.push(Buffer.from('not a log line\n\n   \n'));
    // Refused by validation (a timestamp in the future), twice: refused lines count as occurrences too.
    if (i % 131 === 9) parts.push(Buffer.from(`${hostileLine(i).replace('2026', '2099')}\n${hostileLine(i).replace('2026', '2099')}\n`));
    if (i % 89 === 7) parts.push(Buffer.concat([Buffer.from(hostileLine(i, '"-" "Bad ')), Buffer.from([0xff, 0xc3]), Buffer.from('"\n')]));
    if (i % 150 === 1) parts.push(Buffer.from(`${hostileLine(i)}\n${data[0]?.logLine}\n`));
  });
  return Buffer.concat(parts);
}

const comparable = (rows: StoredRow[]) =>
  rows
    .map(({ seq: _seq, project_ord: _ord, path_id: _p, visitor_ord: _v, ua_id: _u, ...r }) => r)
    .sort((a, b) => a.ts - b.ts || ((a.dedup ?? 0n) < (b.dedup ?? 0n) ? -1 : (a.dedup ?? 0n) > (b.dedup ?? 0n) ? 1 : 0));

describeEachDialect('parallel log import', (dialect) => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    dir = tempDir('inkwell-import-par-');
  });
  afterAll(async () => {
    await t?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Imports `file` into a new project; its stats and its stored rows. */
  async function importNew(
    file: string,
    opts: Partial<ImportOptions>,
  ): Promise<{ projectId: string; adminKey: string; stats: ImportStats; rows: StoredRow[] }> {
    const svc = sqlAnalyticsService(t.ctx);
    const p = await t.seed({ name: `p${Math.random()}` });
    const before = new Set((await storedRows(t.ctx.db)).map((r) => r.project_ord));
    const stats = await importFile(svc.ingest, { projectId: p.project.id, format: 'combined', file, ...opts });
    const rows = (await storedRows(t.ctx.db)).filter((r) => !before.has(r.project_ord));
    return { projectId: p.project.id, adminKey: p.adminKey, stats, rows };
  }

  it('stores the events, counts, samples, answers and keys of the serial import, whatever the pieces', async () => {
    const file = path.join(dir, 'tricky.log');
    fs.writeFileSync(file, Buffer.concat([trickyLog(), Buffer.from(hostileLine(1).slice(0, -4))]));
    const serial = await importNew(file, { workers: 0, batchSize: 200 });
    expect(serial.stats.inserted).toBeGreaterThan(400);
    expect(serial.stats.rejected).toBeGreaterThan(0);
    expect(serial.stats.samples).toHaveLength(10);
    const svc = sqlAnalyticsService(t.ctx);
    // Read sizes that cut lines, CRLFs and runs of identical lines at many places.
    for (const [workers, readBytes] of [
      [2, 1009],
      [3, 16_411],
    ] as const) {
      const par = await importNew(file, { workers, batchSize: 200, parallel: { readBytes } });
      expect(par.stats).toEqual(serial.stats);
      expect(comparable(par.rows)).toEqual(comparable(serial.rows));
      for (const report of ['views', 'visitors'] as const)
        expect(await walk(t, par.adminKey, par.projectId, report, {}, 250)).toEqual(await walk(t, serial.adminKey, serial.projectId, report, {}, 250));
      // The same keys: importing again, either way, adds nothing.
      expect((await importFile(svc.ingest, { projectId: par.projectId, format: 'combined', file, workers: 0 })).inserted).toBe(0);
      expect((await importFile(svc.ingest, { projectId: serial.projectId, format: 'combined', file, workers, parallel: { readBytes } })).inserted).toBe(0);
    }
  }, 600_000);

  it('JSON lines: the same stats, events and keys as the serial import', async () => {
    const file = path.join(dir, 'events.jsonl');
    const wire = generate({ seed: 23, events: 150, days: 2 }).map((d) => JSON.stringify(d.wire));
    fs.writeFileSync(file, `${[...wire, wire[3], '{"path": 5}', 'not json'].join('\n')}\n`);
    const serial = await importNew(file, { format: 'jsonl', workers: 0 });
    expect(serial.stats).toMatchObject({ lines: 153, inserted: 151 });
    const par = await importNew(file, { format: 'jsonl', workers: 2, parallel: { readBytes: 2048 } });
    expect(par.stats).toEqual(serial.stats);
    expect(comparable(par.rows)).toEqual(comparable(serial.rows));
    const svc = sqlAnalyticsService(t.ctx);
    expect((await importFile(svc.ingest, { projectId: serial.projectId, format: 'jsonl', file, workers: 1 })).inserted).toBe(0);
  }, 600_000);

  it('hostile pieces: a line longer than the limit across reads, a CR ending a read, an empty file', async () => {
    const parts = [
      Buffer.from(`${hostileLine(1)}\r\n${hostileLine(2)}\r${hostileLine(3)}\n`),
      Buffer.from(`${'x'.repeat((1 << 20) + 70_000)}\r`),
      Buffer.from(`\n${hostileLine(4)}\n`),
      Buffer.from(`${'y'.repeat(3 << 20)}\n${hostileLine(5)}\r`),
    ];
    const file = path.join(dir, 'hostile.log');
    fs.writeFileSync(file, Buffer.concat(parts));
    const serial = await importNew(file, { workers: 0 });
    expect(serial.stats).toMatchObject({ lines: 7, unparseable: 2, inserted: 5 });
    for (const readBytes of [65_536, 70_001, 1 << 20]) {
      const par = await importNew(file, { workers: 2, parallel: { readBytes } });
      expect(par.stats).toEqual(serial.stats);
      expect(comparable(par.rows)).toEqual(comparable(serial.rows));
    }
    const empty = path.join(dir, 'empty.log');
    fs.writeFileSync(empty, '');
    expect((await importNew(empty, { workers: 2 })).stats).toEqual({ lines: 0, unparseable: 0, accepted: 0, inserted: 0, rejected: 0, samples: [] });
  }, 600_000);

  it('an import thread killed mid-import fails the import; what it reported imported is stored, and importing again adds exactly the rest', async () => {
    const file = path.join(dir, 'kill.log');
    const lines = generate({ seed: 22, events: 3000, days: 3 }).map((d) => d.logLine);
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const svc = sqlAnalyticsService(t.ctx);
    const p = await t.seed({ name: 'killed' });
    let threads: Worker[] = [];
    let reported = 0;
    const run = importFile(svc.ingest, {
      projectId: p.project.id,
      format: 'combined',
      file,
      workers: 2,
      batchSize: 100,
      parallel: { readBytes: 8192, onThreads: (w) => (threads = w) },
      onProgress: (_done, _total, s) => {
        reported = s.inserted;
        if (reported > 0) void threads[1]?.terminate();
      },
    });
    await expect(run).rejects.toThrow(/import thread/);
    expect(reported).toBeGreaterThan(0);
    expect(reported).toBeLessThan(lines.length);
    const again = await importFile(svc.ingest, { projectId: p.project.id, format: 'combined', file, workers: 2 });
    expect(again.accepted).toBe(lines.length);
    expect(again.accepted - again.inserted).toBeGreaterThanOrEqual(reported);
    expect((await importFile(svc.ingest, { projectId: p.project.id, format: 'combined', file, workers: 0 })).inserted).toBe(0);
  }, 600_000);
});

it('import threads only for files worth them', () => {
  expect(importThreads(PARALLEL_MIN_BYTES - 1)).toBe(0);
  expect(importThreads(1 << 30)).toBeLessThanOrEqual(1);
});
