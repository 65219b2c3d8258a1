// A durable 202 under page-view load: `inkwell serve` (SQLite, the ingest writer in its worker thread) takes one
// event per request from many connections at once and is killed with SIGKILL while requests are in flight.
// After a restart on the same data every event that was answered 202 is stored: a 202 is sent only after the
// event's transaction committed (synchronous=FULL), however the writes are grouped and handed to the writer.
// (A SIGKILL keeps what reached the OS, so this checks that nothing answered is lost with the process; that the
// answer waits for the commit is pinned by ingest-worker.test.ts, which fails when the worker answers on receipt.)
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/lib/service.ts';
import { baseEnv, ROOT, runJson } from '../cli/run-cli.ts';
import { httpRequest } from '../helpers/app.ts';
import { openTestDb, type TestDb } from '../helpers/db.ts';

const running = new Set<ChildProcess>();

async function serve(env: Record<string, string>): Promise<{ child: ChildProcess; baseUrl: string; exited: Promise<unknown> }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['bin/inkwell.js', 'serve', '--role', 'api'], {
    cwd: ROOT,
    env: baseEnv({ ...env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', INKWELL_LOG_PRETTY: '0', INKWELL_RATE_LIMIT_INGEST: '1000000000/1m' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  void exited.then(() => running.delete(child));
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  const deadline = Date.now() + 90_000;
  while (!out.includes('"inkwell started"')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`serve did not start (exit ${child.exitCode}): ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, baseUrl: `http://127.0.0.1:${port}`, exited };
}

const CONNECTIONS = 32;
/** Acknowledged events before the kill: enough for many group commits, with requests in flight at the kill. */
const ACKED_BEFORE_KILL = 400;
const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0';

describe('page-view ingest, killed under load', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await openTestDb('sqlite', { migrated: false });
  });
  afterEach(() => {
    for (const child of running) child.kill('SIGKILL');
  });
  afterAll(async () => t?.cleanup());

  it('kill -9 with requests in flight: every event answered 202 is stored after the restart', async () => {
    const project = await runJson(['project', 'create', '--name', 'Docs', '--repository', 'https://github.com/acme/docs'], t.env);
    const admin = await runJson(['key', 'create', '--project', project.id], t.env);
    const secret = await runJson(['key', 'create', '--project', project.id, '--kind', 'ingest-secret'], t.env);
    const first = await serve(t.env);

    const day = new Date().toISOString().slice(0, 10);
    const acked: number[] = [];
    let sent = 0;
    let next = 0;
    let killed = false;
    const send = async (): Promise<void> => {
      while (!killed) {
        const i = next++;
        const event = { path: `/crash/p${i}`, visitorId: `v${i % 97}`, userAgent: UA, timestamp: new Date().toISOString() };
        sent++;
        try {
          const res = await fetch(`${first.baseUrl}/v1/analytics/${project.id}/events`, {
            method: 'POST',
            headers: { authorization: `Bearer ${secret.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ events: [event] }),
          });
          const body = await res.text();
          if (res.status === 202) {
            expect(JSON.parse(body)).toEqual({ accepted: 1, rejected: [] });
            acked.push(i);
          } else throw new Error(`status ${res.status}: ${body}`);
        } catch (err) {
          if (killed) return;
          throw err;
        }
        if (acked.length >= ACKED_BEFORE_KILL && !killed) {
          // Killed from inside the load: the other connections' requests are in flight now.
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, send));
    await first.exited;
    expect(acked.length).toBeGreaterThanOrEqual(ACKED_BEFORE_KILL);

    const second = await serve(t.env);
    const stored = new Map<string, number>();
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    for (let offset = 0; ; offset += 250) {
      const page = await httpRequest(second.baseUrl, 'GET', `/v1/analytics/${project.id}/views?dateFrom=${day}&dateTo=${tomorrow}&limit=250&offset=${offset}`, {
        key: admin.key,
      });
      expect(page.status, page.text).toBe(200);
      for (const row of page.body.views as { path: string; total: number }[]) stored.set(row.path, row.total);
      if (!page.body.hasMore) break;
    }
    const missing = acked.filter((i) => stored.get(`/crash/p${i}`) !== 1);
    expect(missing).toEqual([]);
    // Nothing stored that was not sent, nothing twice.
    expect(stored.size).toBeLessThanOrEqual(sent);
    expect([...stored.values()].every((n) => n === 1)).toBe(true);
    console.log(`ingest crash: ${sent} sent, ${acked.length} answered 202 before the kill, ${stored.size} stored after the restart`);
    second.child.kill('SIGTERM');
    await second.exited;
  }, 240_000);
});
