// Timeouts of the HTTP server over real sockets: half-sent bodies and headers are answered 408 and closed,
// idle kept-alive connections are closed, and a healthy SSE stream outlives the request timeout (it ends
// only at its configured maximum lifetime). Nothing here asserts how fast: each test waits for the event.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../../src/config.ts';
import { connectionsCheckingInterval } from '../../src/http/app.ts';
import type { Seeded } from '../helpers/app.ts';
import { type JobsTestApp, startJobsApp } from '../helpers/jobs.ts';

const REQUEST_TIMEOUT_MS = 1000;

/** Opens a raw connection, writes `data`, and resolves with everything the server sent once it closes. */
function rawExchange(port: number, data: string): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.write(data));
    let text = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      text += d;
    });
    sock.on('error', reject);
    sock.on('close', () => resolve({ text, closed: true }));
  });
}

describe('HTTP server timeouts', () => {
  let t: JobsTestApp;
  let s: Seeded;
  let port: number;
  beforeAll(async () => {
    const base = testConfig().http;
    t = await startJobsApp('sqlite', {
      http: {
        ...base,
        headersTimeoutMs: REQUEST_TIMEOUT_MS,
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
        keepAliveTimeoutMs: 300,
        sseHeartbeatMs: 100,
        sseMaxLifetimeMs: 0,
      },
    });
    s = await t.seed();
    port = Number(new URL(t.baseUrl).port);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a half-sent body (Content-Length 1000, 10 bytes sent) is answered 408 request_timeout and the socket closed', async () => {
    const head =
      `POST /v1/analytics/${s.project.id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${s.adminKey}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n';
    const { text, closed } = await rawExchange(port, `${head}{"events":`);
    expect(closed).toBe(true);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toContain('"code":"request_timeout"');
    expect(text.toLowerCase()).toContain('connection: close');
  }, 30_000);

  it('half-sent headers are answered 408 request_timeout and the socket closed', async () => {
    const { text, closed } = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    expect(closed).toBe(true);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toContain('"code":"request_timeout"');
  }, 30_000);

  it('an idle kept-alive connection is closed after the keep-alive timeout', async () => {
    const { text, closed } = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
    expect(closed).toBe(true);
    // One complete 200 response, then the server closed the idle connection on its own.
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  }, 30_000);

  it('a healthy SSE stream is not cut by the request timeout (it keeps receiving heartbeats)', async () => {
    const job = await t.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.adminKey, body: { prompt: 'x' } });
    expect(job.status).toBe(201);
    const outlive = 3 * REQUEST_TIMEOUT_MS + connectionsCheckingInterval(REQUEST_TIMEOUT_MS, REQUEST_TIMEOUT_MS);
    const result = await new Promise<{ heartbeats: number; endedEarly: boolean }>((resolve, reject) => {
      const started = Date.now();
      let heartbeats = 0;
      let done = false;
      const req = http.get(
        `${t.baseUrl}/v2/agent/${s.project.id}/job/${job.body.id}/events`,
        { headers: { authorization: `Bearer ${s.adminKey}`, accept: 'text/event-stream' } },
        (res) => {
          expect(res.statusCode).toBe(200);
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            heartbeats += chunk.split(': heartbeat').length - 1;
            // Enough time has passed for the request timeout to have fired several times over.
            if (!done && Date.now() - started >= outlive && heartbeats >= 3) {
              done = true;
              resolve({ heartbeats, endedEarly: false });
              req.destroy();
            }
          });
          res.on('end', () => {
            if (!done) resolve({ heartbeats, endedEarly: true });
          });
        },
      );
      req.on('error', (err) => {
        if (!done) reject(err);
      });
    });
    expect(result.endedEarly).toBe(false);
    expect(result.heartbeats).toBeGreaterThanOrEqual(3);
  }, 30_000);
});

describe('SSE maximum lifetime', () => {
  let t: JobsTestApp;
  let s: Seeded;
  beforeAll(async () => {
    t = await startJobsApp('sqlite', { http: { ...testConfig().http, sseHeartbeatMs: 100, sseMaxLifetimeMs: 500 } });
    s = await t.seed();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('the server ends a stream after INKWELL_SSE_MAX_LIFETIME_MS; a reconnect with Last-Event-ID resumes', async () => {
    const job = await t.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.adminKey, body: { prompt: 'x' } });
    const url = `${t.baseUrl}/v2/agent/${s.project.id}/job/${job.body.id}/events`;
    const read = (lastEventId?: string) =>
      new Promise<string>((resolve, reject) => {
        const headers: Record<string, string> = { authorization: `Bearer ${s.adminKey}`, accept: 'text/event-stream' };
        if (lastEventId) headers['last-event-id'] = lastEventId;
        http
          .get(url, { headers }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => {
              text += d;
            });
            res.on('end', () => resolve(text));
          })
          .on('error', reject);
      });
    const first = await read();
    const ids = [...first.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids.length).toBeGreaterThan(0);
    const last = Math.max(...ids);
    const second = await read(String(last));
    // The second stream also ended on its own, and sent nothing already seen.
    const again = [...second.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(again.every((id) => id > last)).toBe(true);
  }, 30_000);
});

describe('configured body limit', () => {
  it('INKWELL_BODY_LIMIT_BYTES bounds request bodies; the 413 message states the limit', async () => {
    const t = await startJobsApp('sqlite', { bodyLimitBytes: 2048 });
    try {
      const s = await t.seed();
      const big = await t.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.adminKey, body: { prompt: 'x'.repeat(3000) } });
      expect(big.status).toBe(413);
      expect(big.body).toEqual({ error: 'Request body is larger than 2 KiB', code: 'payload_too_large' });
      const small = await t.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.adminKey, body: { prompt: 'x'.repeat(1000) } });
      expect(small.status).toBe(201);
    } finally {
      await t.close();
    }
  }, 30_000);
});

describe('connectionsCheckingInterval', () => {
  it('is a tenth of the shorter timeout, between 100 ms and 5 s', () => {
    expect(connectionsCheckingInterval(15_000, 30_000)).toBe(1500);
    expect(connectionsCheckingInterval(1000, 1000)).toBe(100);
    expect(connectionsCheckingInterval(600_000, 0)).toBe(5000);
  });
});
