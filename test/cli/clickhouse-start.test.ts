// `inkwell serve` pointed at a ClickHouse server that cannot hold its analytics: the start fails with one line
// naming the server and the minimum version, never a stack trace or the password. The server here speaks the
// HTTP protocol of ClickHouse 18.16 (Debian 12's `clickhouse-server`, whose answers these are, captured with
// curl): it answers `SELECT version()` and refuses query parameters ("Unknown setting param_names"), which it
// predates. Checking the functions first (with parameters) used to hide the version behind that refusal.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MIN_CLICKHOUSE_VERSION } from '../../src/analytics/clickhouse/server-check.ts';
import { tempDir } from '../helpers/db.ts';
import { runCli } from './run-cli.ts';

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A ClickHouse 18.16 HTTP interface: every request's URL query and body are recorded. */
async function clickHouse18(): Promise<{ url: string; requests: { params: URLSearchParams; body: string }[] }> {
  const requests: { params: URLSearchParams; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      const params = new URL(req.url ?? '/', 'http://x').searchParams;
      requests.push({ params, body });
      res.setHeader('Content-Type', 'text/plain; charset=UTF-8');
      const param = [...params.keys()].find((k) => k.startsWith('param_'));
      if (param) {
        res.statusCode = 404;
        res.end(`Code: 115, e.displayText() = DB::Exception: Unknown setting ${param}, e.what() = DB::Exception\n`);
      } else if (/version\(\)/.test(`${params.get('query') ?? ''} ${body}`)) {
        res.end('{"v":"18.16.1"}\n');
      } else if (/CREATE DATABASE/i.test(`${params.get('query') ?? ''} ${body}`)) {
        res.end('');
      } else {
        res.statusCode = 400;
        res.end('Code: 62, e.displayText() = DB::Exception: Syntax error, e.what() = DB::Exception\n');
      }
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

describe('inkwell serve with a ClickHouse server too old for it', () => {
  it('exits 1 with one line naming the server, its version and the minimum; no stack, no password', async () => {
    const ch = await clickHouse18();
    const r = await runCli(['serve', '--role', 'api'], {
      INKWELL_DATA_DIR: tempDir(),
      PORT: '0',
      CLICKHOUSE_URL: ch.url,
      CLICKHOUSE_USER: 'ink',
      CLICKHOUSE_PASSWORD: 'sw0rdfish-secret',
    });
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual([`inkwell: ClickHouse at ${ch.url} is version 18.16.1; Inkwell's analytics need ClickHouse ${MIN_CLICKHOUSE_VERSION} or newer`]);
    expect(r.stdout + r.stderr).not.toContain('sw0rdfish');
    // The version was asked before anything the old server refuses.
    const first = ch.requests.findIndex((q) => /version\(\)/.test(`${q.params.get('query') ?? ''} ${q.body}`));
    expect(first).toBeGreaterThanOrEqual(0);
    expect(ch.requests.slice(0, first + 1).every((q) => ![...q.params.keys()].some((k) => k.startsWith('param_')))).toBe(true);
  });

  it('a server that answers with an error is not called unreachable', async () => {
    const server = http.createServer((_req, res) => {
      res.statusCode = 500;
      res.setHeader('Content-Type', 'text/plain; charset=UTF-8');
      res.end('Code: 999, e.displayText() = DB::Exception: Keeper is shutting down, e.what() = DB::Exception\n');
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = await runCli(['serve', '--role', 'api'], { INKWELL_DATA_DIR: tempDir(), PORT: '0', CLICKHOUSE_URL: url });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^inkwell: ClickHouse at ${url} failed the start-up check: .*Keeper is shutting down`)),
    ]);
  });
});
