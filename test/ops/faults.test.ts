// Database outages and a full disk are outages, not crashes or lies: PostgreSQL cut off behind a TCP proxy
// (new connections refused, open ones terminated) gives 503 `database_unavailable` with Retry-After and a
// not-ready /readyz, the process lives, and everything resumes by itself when the database returns; a data
// directory on a full filesystem (a small tmpfs: needs root, as in CI) gives 507 `storage_full`. In both,
// every acknowledged event is stored.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, testConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { infraFault } from '../../src/db/errors.ts';
import { type Database, migrate, openDatabase } from '../../src/db/index.ts';
import { buildApp } from '../../src/http/app.ts';
import type { AppContext } from '../../src/http/context.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { httpRequest, type TestResponse } from '../helpers/app.ts';
import { openTestDb, pgUrl, type TestDb, tempDir } from '../helpers/db.ts';
import { waitFor } from '../helpers/jobs.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { canMountTmpfs, mountTmpfs, unmountTmpfs } from '../helpers/tmpfs.ts';

describe('infraFault (pure)', () => {
  it('names database and storage faults by code, SQLSTATE, message or cause; nothing else', () => {
    const err = (message: string, code?: string, cause?: unknown) => Object.assign(new Error(message), code ? { code } : {}, cause ? { cause } : {});
    expect(infraFault(err('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))).toBe('database_unavailable');
    expect(infraFault(err('Connection terminated unexpectedly'))).toBe('database_unavailable');
    expect(infraFault(err('terminating connection due to administrator command', '57P01'))).toBe('database_unavailable');
    expect(infraFault(err('the database system is starting up', '57P03'))).toBe('database_unavailable');
    expect(infraFault(err('could not connect', '08006'))).toBe('database_unavailable');
    expect(infraFault(err('database or disk is full', 'SQLITE_FULL'))).toBe('storage_full');
    expect(infraFault(err('could not extend file "base/1/2": No space left on device', '53100'))).toBe('storage_full');
    expect(infraFault(err('write failed', undefined, err('ENOSPC: no space left on device', 'ENOSPC')))).toBe('storage_full');
    expect(infraFault(err('duplicate key value violates unique constraint', '23505'))).toBeNull();
    expect(infraFault(err('SQLITE_CONSTRAINT', 'SQLITE_CONSTRAINT_UNIQUE'))).toBeNull();
    expect(infraFault(new TypeError('x is undefined'))).toBeNull();
  });
});

interface Running {
  ctx: AppContext;
  baseUrl: string;
  request(method: string, p: string, opts?: Parameters<typeof httpRequest>[3]): Promise<TestResponse>;
  close(): Promise<void>;
}

async function startOver(db: Database, dataDir: string, env: Record<string, string> = {}): Promise<Running> {
  const config: Config = testConfig({ dataDir }, env);
  const ctx = createContext(config, db, createLogger(config));
  const app = await buildApp(ctx);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}`;
  return { ctx, baseUrl, request: (m, p, o) => httpRequest(baseUrl, m, p, o), close: () => app.close() };
}

const event = (i: number) => ({
  path: `/docs/page-${i % 7}`,
  timestamp: '2026-11-20T10:00:00.000Z',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36',
  visitorId: `visitor-${i}`,
});

/** What a fault run did, as the drill tables print it: every 202 and every refusal is recorded as it happens. */
class FaultLedger {
  acknowledged = 0;
  refused = 0;
  private readonly ackTimes: number[] = [];
  constructor(readonly fault: string) {}
  record(res: TestResponse): void {
    if (res.status === 202) {
      this.acknowledged += res.body.accepted;
      this.ackTimes.push(Date.now());
    } else this.refused++;
  }
  /** The longest time between two acknowledged requests (the outage as a client saw it). */
  longestStallMs(): number {
    let longest = 0;
    for (let i = 1; i < this.ackTimes.length; i++) longest = Math.max(longest, (this.ackTimes[i] as number) - (this.ackTimes[i - 1] as number));
    return longest;
  }
  table(stored: number): string {
    const row = [
      this.fault,
      '1',
      `${this.acknowledged} events`,
      `${this.refused} requests`,
      `${stored}`,
      `${Math.max(0, this.acknowledged - stored)}`,
      `${Math.max(0, stored - this.acknowledged)}`,
      `${(this.longestStallMs() / 1000).toFixed(1)} s`,
    ];
    const header = ['fault', 'faults', 'acknowledged', 'refused (503/507)', 'stored', 'lost', 'duplicated', 'longest stall'];
    const w = header.map((h, i) => Math.max(h.length, (row[i] as string).length));
    const line = (cells: string[]) => cells.map((c, i) => c.padEnd(w[i] as number)).join(' | ');
    return [line(header), w.map((n) => '-'.repeat(n)).join('-+-'), line(row)].join('\n');
  }
}

async function storedViews(r: Running, key: string, projectId: string): Promise<number> {
  const res = await r.request('GET', `/v1/analytics/${projectId}/views?dateFrom=2026-11-01&dateTo=2026-12-01`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body.totals.total as number;
}

describe.skipIf(!pgUrl() && !process.env.CI)('PostgreSQL outage', () => {
  let testDb: TestDb | null = null;
  let running: Running | null = null;
  let proxy: TcpProxy | null = null;
  let db: Database | null = null;
  afterEach(async () => {
    await running?.close();
    await db?.close().catch(() => undefined);
    await proxy?.close();
    await testDb?.cleanup();
    running = db = proxy = testDb = null;
  });

  it('503 database_unavailable with Retry-After while cut off, readiness says why, the process lives, recovery by itself, acknowledged = stored', async () => {
    testDb = await openTestDb('postgres');
    const url = new URL(testDb.env.DATABASE_URL!);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    const schema = /search_path=(\S+)/.exec(url.searchParams.get('options') ?? '')![1]!;
    url.searchParams.delete('options');
    db = openDatabase({ databaseUrl: url.toString(), pgSchema: schema, pgPoolSize: 4 });
    await migrate(db);
    running = await startOver(db, testDb.env.INKWELL_DATA_DIR!);
    const project = await running.ctx.projects.createProject({ name: 'Docs', repository: 'https://github.com/acme/docs' });
    const key = (await running.ctx.projects.createKey({ projectId: project.id, kind: 'admin' })).key;
    const ingest = (n: number, from: number) =>
      running!.request('POST', `/v1/analytics/${project.id}/events`, { key, body: { events: Array.from({ length: n }, (_, i) => event(from + i)) } });

    const ledger = new FaultLedger('PostgreSQL cut off (ingest)');
    let next = 0;
    for (let i = 0; i < 3; i++) {
      const res = await ingest(50, next);
      expect(res.status, res.text).toBe(202);
      ledger.record(res);
      next += 50;
    }
    expect((await running.request('GET', '/readyz')).status).toBe(200);

    // A statement in flight when the connections are killed: it fails; no unhandled 'error' event ends the process.
    const inFlight = db.kysely.selectNoFrom((eb) => eb.fn<number>('pg_sleep', [eb.val(2)]).as('x')).execute();
    const inFlightOutcome = inFlight.then(
      () => 'ok',
      (err: unknown) => infraFault(err),
    );
    await new Promise((r) => setTimeout(r, 100));
    await proxy.cut();
    expect(await inFlightOutcome).toBe('database_unavailable');

    const during: TestResponse[] = [];
    for (let i = 0; i < 6; i++) {
      during.push(await running.request('GET', `/v1/projects/${project.id}`, { key }));
      const res = await ingest(20, next);
      during.push(res);
      next += 20;
      ledger.record(res);
    }
    for (const res of during) {
      // A request may still be answered from a kept result; none is a 500.
      expect([200, 202, 503], res.text).toContain(res.status);
    }
    const refused = during.filter((r) => r.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    for (const res of refused) {
      expect(res.body).toMatchObject({ code: 'database_unavailable' });
      expect(res.headers.get('retry-after')).toBe('5');
    }
    const ready = await running.request('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('x-not-ready-cause')).toBe('database_unavailable');

    await proxy.restore();
    // Recovery without a restart: the same process answers again once the pool reconnects.
    await waitFor(async () => (await running!.request('GET', `/v1/projects/${project.id}`, { key })).status === 200);
    await waitFor(async () => (await running!.request('GET', '/readyz')).status === 200);
    const after = await ingest(30, next);
    expect(after.status).toBe(202);
    ledger.record(after);
    await waitFor(async () => (await storedViews(running!, key, project.id)) === ledger.acknowledged);
    console.log(ledger.table(await storedViews(running, key, project.id)));
  });
});

describe.skipIf(!canMountTmpfs && !process.env.CI)('full disk (SQLite data directory on a small tmpfs)', () => {
  let dir: string | null = null;
  let running: Running | null = null;
  let db: Database | null = null;
  afterEach(async () => {
    await running?.close();
    await db?.close().catch(() => undefined);
    if (dir) {
      unmountTmpfs(dir);
      fs.rmSync(dir, { recursive: true, force: true });
    }
    running = db = dir = null;
  });

  it('507 storage_full with Retry-After, readiness says so, resumes when space returns, acknowledged = stored', async () => {
    dir = tempDir('inkwell-full-');
    expect(mountTmpfs(dir, '3m')).toBe(true);
    db = openDatabase({ sqlitePath: path.join(dir, 'inkwell.db') });
    await migrate(db);
    running = await startOver(db, dir);
    const project = await running.ctx.projects.createProject({ name: 'Docs', repository: 'https://github.com/acme/docs' });
    const key = (await running.ctx.projects.createKey({ projectId: project.id, kind: 'admin' })).key;

    const ledger = new FaultLedger('full disk (SQLite on tmpfs)');
    let next = 0;
    let full: TestResponse | null = null;
    // Fill the filesystem: distinct long paths and visitors make the database grow until a write fails.
    for (let i = 0; i < 400 && !full; i++) {
      const events = Array.from({ length: 200 }, (_, j) => ({ ...event(next + j), path: `/docs/${'x'.repeat(200)}/${next + j}` }));
      next += 200;
      const res = await running.request('POST', `/v1/analytics/${project.id}/events`, { key, body: { events } });
      ledger.record(res);
      if (res.status !== 202) full = res;
    }
    expect(full, 'the filesystem never filled').not.toBeNull();
    expect(full!.status, full!.text).toBe(507);
    expect(full!.body).toMatchObject({ code: 'storage_full' });
    expect(full!.headers.get('retry-after')).toBe('5');
    const ready = await running.request('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('x-not-ready-cause')).toBe('storage_full');

    // Space comes back: ingest resumes by itself.
    execFileSync('mount', ['-o', 'remount,size=64m', dir]);
    await waitFor(async () => {
      const res = await running!.request('POST', `/v1/analytics/${project.id}/events`, { key, body: { events: [event(next)] } });
      next += 1;
      ledger.record(res);
      return res.status === 202;
    }, 20_000);
    const stored = await storedViews(running, key, project.id);
    console.log(ledger.table(stored));
    expect(stored).toBe(ledger.acknowledged);
  });
});
