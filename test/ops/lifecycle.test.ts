// The real process: `inkwell serve` on a free port over data made by the CLI; SIGTERM drains an
// in-flight request, logs 'stopped' and exits 0; a restart finds the data and migrations stay applied
// once; JSON-line logs at debug level never contain a key.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../bench/lib/service.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { baseEnv, ROOT, runJson } from '../cli/run-cli.ts';
import { httpRequest } from '../helpers/app.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

interface Served {
  child: ChildProcess;
  baseUrl: string;
  stdout: () => string;
  exited: Promise<number | null>;
}

/** Every server a test started: killed after each test, so one that fails midway leaves no process behind. */
const running = new Set<ChildProcess>();

async function serve(env: Record<string, string>): Promise<Served> {
  const port = await freePort();
  const child = spawn(process.execPath, ['bin/inkwell.js', 'serve', '--role', 'api'], {
    cwd: ROOT,
    env: baseEnv({ ...env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'debug', INKWELL_LOG_PRETTY: '0' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.on('exit', () => running.delete(child));
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 90_000;
  while (!out.includes('"inkwell started"')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`serve did not start (exit ${child.exitCode}): ${out}\n${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, baseUrl: `http://127.0.0.1:${port}`, stdout: () => out, exited };
}

/**
 * A POST whose body is still being sent: `received` resolves once the server has read its headers (its
 * `100 Continue` answers `expect: 100-continue`) and the first part of the body is on its way; `response` once
 * `finish` has sent the rest.
 */
function slowRequest(baseUrl: string) {
  const url = new URL('/v1/slow-upload', baseUrl);
  let finish!: () => void;
  let received!: () => void;
  const receivedByServer = new Promise<void>((r) => {
    received = r;
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'transfer-encoding': 'chunked', expect: '100-continue' };
    const req = http.request(url, { method: 'POST', agent: false, headers }, (res) => {
      let body = '';
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.on('continue', () => {
      req.write('{"part":', () => received());
    });
    req.flushHeaders();
    finish = () => req.end('1}');
  });
  return { response, received: receivedByServer, finish: () => finish() };
}

describeEachDialect('inkwell serve process', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await openTestDb(dialect, { migrated: false });
  });
  afterEach(() => {
    for (const child of running) child.kill('SIGKILL');
  });
  afterAll(async () => t?.cleanup());

  it('serves CLI-made data, drains on SIGTERM, exits 0, and keeps everything across a restart', async () => {
    const project = await runJson(['project', 'create', '--name', 'Docs', '--repository', 'https://github.com/acme/docs'], t.env);
    const key = await runJson(['key', 'create', '--project', project.id], t.env);
    const ingest = await runJson(['key', 'create', '--project', project.id, '--kind', 'ingest'], t.env);

    const first = await serve(t.env);
    // Where the platform can (process.execve), serve replaced itself, same pid, by a process with its V8 settings
    // (src/cli/main.ts SERVE_NODE_FLAGS); SIGTERM below still reaches it.
    const execs = process.platform === 'linux' && typeof (process as { execve?: unknown }).execve === 'function';
    const cmdline = (pid: number | undefined) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (execs) expect(cmdline(first.child.pid)).toContain('--max-semi-space-size=32');
    // …and with two malloc arenas (src/cli/main.ts SERVE_ENV).
    if (execs) expect(fs.readFileSync(`/proc/${first.child.pid}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=2');
    const ok = await httpRequest(first.baseUrl, 'GET', `/v1/projects/${project.id}`, { key: key.key });
    expect(ok.status).toBe(200);
    expect(ok.body.id).toBe(project.id);
    // Keys in places a careless logger would print them.
    await httpRequest(first.baseUrl, 'GET', `/v1/projects/${project.id}?key=${key.key}`, {
      key: ingest.key,
      headers: { 'x-forwarded-token': `Bearer ${key.key}` },
    });
    await httpRequest(first.baseUrl, 'GET', `/nowhere/${key.key}`, { headers: { authorization: `Bearer ${key.key}`, cookie: `k=${key.key}` } });
    // An accepted event went through the ingest worker thread (the bundle's own entry in dist/).
    const event = { path: '/start', visitorId: 'v-1', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0', timestamp: '2026-01-05T10:00:00Z' };
    const posted = await httpRequest(first.baseUrl, 'POST', `/v1/analytics/${project.id}/events`, { key: key.key, body: { events: [event] } });
    expect(posted.body).toEqual({ accepted: 1, rejected: [] });

    // An in-flight request (body half sent) when SIGTERM arrives still gets its answer.
    const slow = slowRequest(first.baseUrl);
    await slow.received;
    first.child.kill('SIGTERM');
    const deadline = Date.now() + 30_000;
    while (!first.stdout().includes('"shutting down"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    // New connections are refused while it drains.
    await expect(fetch(`${first.baseUrl}/healthz`)).rejects.toThrow();
    slow.finish();
    const answered = await slow.response;
    expect(answered.status).toBe(404);
    expect(JSON.parse(answered.body)).toMatchObject({ code: 'not_found' });
    expect(await first.exited).toBe(0);

    const lines = first
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const messages = lines.map((l) => l.msg);
    expect(messages).toContain('inkwell started');
    expect(messages).toContain('shutting down');
    expect(messages.at(-1), JSON.stringify(lines.slice(-4))).toBe('stopped');
    expect(lines.filter((l) => l.msg === 'request').length).toBeGreaterThanOrEqual(3);
    const logText = first.stdout();
    expect(logText).toContain('[redacted]');
    for (const secret of [key.key, ingest.key, key.key.slice(4), ingest.key.slice(8)]) expect(logText).not.toContain(secret);

    // Restart on the same data: the project and key are still there, migrations are not re-run.
    // INKWELL_SERVE_NODE_FLAGS=0 keeps Node's defaults.
    const second = await serve({ ...t.env, INKWELL_SERVE_NODE_FLAGS: '0' });
    if (execs) expect(cmdline(second.child.pid)).not.toContain('--max-semi-space-size=32');
    const again = await httpRequest(second.baseUrl, 'GET', `/v1/projects/${project.id}`, { key: key.key });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: project.id, name: 'Docs' });
    expect((await httpRequest(second.baseUrl, 'GET', '/readyz')).status).toBe(200);
    const visitors = await httpRequest(second.baseUrl, 'GET', `/v1/analytics/${project.id}/visitors?dateFrom=2026-01-05&dateTo=2026-01-06`, { key: key.key });
    expect(visitors.body.totals).toMatchObject({ human: 1, total: 1 });
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
    expect(second.stdout()).toContain('"stopped"');

    const applied = await t.db.kysely
      .selectFrom('kysely_migration' as any)
      .select('name')
      .execute();
    expect(applied.map((r: any) => r.name).sort()).toEqual(Object.keys(MIGRATIONS).sort());
  });
});
