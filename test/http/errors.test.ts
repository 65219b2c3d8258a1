// Bad input and failures over real HTTP: the SPEC §1 error shapes, x-request-id everywhere, no 5xx
// leaks. A test-only scope adds a route with a body schema (and one that throws) to the real app.
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { testRoutes } from './test-routes.ts';

const SECRETS = ['select', '/srv/inkwell', 'hunter2', 'postgres://', 'at ', 'stack'];

describeEachDialect('request errors', (dialect) => {
  let t: TestApp;
  let s: Seeded;
  let path: string;
  beforeAll(async () => {
    t = await startTestApp(dialect, {}, {}, { routes: testRoutes });
    s = await t.seed();
    path = `/test/${s.project.id}/things`;
  });
  afterAll(async () => t?.close());

  const post = (raw: string | Buffer, contentType?: string) =>
    t.request('POST', path, { key: s.adminKey, raw, headers: contentType === undefined ? {} : { 'content-type': contentType } });

  it('accepts a valid body (JSON media types with parameters and +json suffixes)', async () => {
    for (const ct of ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/merge-patch+json']) {
      const r = await post('{"name":"x","count":2}', ct);
      expect(r.status, ct).toBe(200);
      expect(r.body).toEqual({ received: { name: 'x', count: 2 }, limit: null });
    }
  });

  it('a NUL byte in a path parameter → 404, never a 500 (PostgreSQL text cannot hold it)', async () => {
    for (const url of [`/v2/agent/%00/job/job_x`, `/v2/agent/${s.project.id}/job/%00`, `/v2/agent/${s.project.id}/job/a%00b/events`, `/v1/projects/%00`]) {
      const res = await t.request('GET', url, { key: s.adminKey });
      expect(res.status, url).toBe(404);
      expect(res.body.code, url).toBe('not_found');
      expect(res.headers.get('x-request-id'), url).toBeTruthy();
    }
    // A NUL in the query string is not a path: it reaches validation and gets a 400 naming the parameter.
    const q = await t.request('GET', `/v2/agent/${s.project.id}/jobs?status=%00`, { key: s.adminKey });
    expect(q.status).toBe(400);
    expect(JSON.stringify(q.body.details)).toContain('status');
  });

  it('malformed JSON → 400 invalid_json', async () => {
    for (const raw of ['{"name":', '{name: "x"}', "{'name':'x'}", '{"name":"x",}', 'nul', '\u0000']) {
      const r = await post(raw, 'application/json');
      expect(r.status, raw).toBe(400);
      expect(r.body.code).toBe('invalid_json');
      expect(r.body.error).toMatch(/not valid JSON/);
    }
  });

  it('unknown field → 400 unknown_field naming it (top level and nested)', async () => {
    let r = await t.request('POST', path, { key: s.adminKey, body: { name: 'x', colour: 'red' } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'Unknown field "colour"', code: 'unknown_field', details: [{ message: 'Unknown field "colour"', path: 'colour' }] });
    r = await t.request('POST', path, { key: s.adminKey, body: { name: 'x', nested: { flag: true, extra: 1 } } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('unknown_field');
    expect(r.body.details[0].path).toBe('nested.extra');
  });

  it('wrong types and ranges → 400 invalid_request with details naming the field and rule', async () => {
    const cases: [unknown, string, RegExp][] = [
      [{ name: 5 }, 'name', /must be string/],
      [{ name: '' }, 'name', /fewer than 1/],
      [{ name: 'x'.repeat(21) }, 'name', /more than 20/],
      [{ name: 'x', count: '3' }, 'count', /must be integer/],
      [{ name: 'x', count: 1.5 }, 'count', /must be integer/],
      [{ name: 'x', count: 0 }, 'count', />= 1/],
      [{ name: 'x', count: 11 }, 'count', /<= 10/],
      [{ name: 'x', nested: { flag: 'yes' } }, 'nested.flag', /must be boolean/],
      [{}, 'name', /Missing required field "name"/],
      [{ name: null }, 'name', /must be string/],
    ];
    for (const [body, field, rule] of cases) {
      const r = await t.request('POST', path, { key: s.adminKey, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('invalid_request');
      expect(r.body.details[0].path).toBe(field);
      expect(r.body.details[0].message).toMatch(rule);
      expect(r.body.error).toContain(`"${field}"`);
    }
    const en = await t.request('POST', path, { key: s.adminKey, body: { name: 'x', mode: 'medium' } });
    expect(en.status).toBe(400);
    expect(en.body.details[0].path).toBe('mode');
  });

  it('a body that is not an object → 400 invalid_request', async () => {
    for (const raw of ['[1,2]', '"text"', '42', 'null', '']) {
      const r = await post(raw, 'application/json');
      expect(r.status, raw).toBe(400);
      expect(r.body.code).toBe('invalid_request');
      expect(r.body.error).toMatch(/^Request body must be object/);
    }
  });

  it('rejects prototype-poisoning keys', async () => {
    const r = await post('{"name":"x","__proto__":{"admin":true}}', 'application/json');
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_request');
    const c = await post('{"name":"x","constructor":{"prototype":{"admin":true}}}', 'application/json');
    expect(c.status).toBe(400);
  });

  it('coerces and validates query parameters, naming them', async () => {
    const ok = await t.request('POST', `${path}?limit=5`, { key: s.adminKey, body: { name: 'x' } });
    expect(ok.body.limit).toBe(5);
    for (const v of ['0', '101', 'abc', '1.5']) {
      const r = await t.request('POST', `${path}?limit=${v}`, { key: s.adminKey, body: { name: 'x' } });
      expect(r.status, v).toBe(400);
      expect(r.body.code).toBe('invalid_request');
      expect(r.body.details[0]).toMatchObject({ path: 'limit' });
      expect(r.body.error).toMatch(/^Query parameter "limit"/);
    }
  });

  it('a body over 1 MiB → 413 payload_too_large (declared or chunked)', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
    const r = await post(big, 'application/json');
    expect(r.status).toBe(413);
    expect(r.body).toEqual({ error: 'Request body is larger than 1 MiB', code: 'payload_too_large' });
    expect(r.headers.get('x-request-id')).toBeTruthy();
    // Exactly at the limit is still parsed (and then validated).
    const atLimit = `{"name":"${'x'.repeat(1024 * 1024 - 11)}"}`;
    expect(Buffer.byteLength(atLimit)).toBe(1024 * 1024);
    const r2 = await post(atLimit, 'application/json');
    expect(r2.status).toBe(400);
    expect(r2.body.details[0].path).toBe('name');
    // Without Content-Length (a stream), the limit still holds.
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 20; i++) c.enqueue(new TextEncoder().encode('x'.repeat(64 * 1024)));
        c.close();
      },
    });
    const res = await fetch(t.baseUrl + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect((await res.json()).code).toBe('payload_too_large');
  });

  it('a non-JSON content type → 415 unsupported_media_type', async () => {
    for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'text/json']) {
      const r = await post('{"name":"x"}', ct);
      expect(r.status, ct).toBe(415);
      expect(r.body.code).toBe('unsupported_media_type');
      expect(r.body.error).toContain('application/json');
    }
    // A body with no Content-Type at all.
    const none = await t.request('POST', path, { key: s.adminKey, raw: Buffer.from('{"name":"x"}') });
    expect(none.status).toBe(415);
    expect(none.body.code).toBe('unsupported_media_type');
  });

  it('authentication is decided before the body is read', async () => {
    const r = await t.request('POST', path, { raw: 'not json', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(401);
  });

  it('unknown routes → 404 not_found in the error shape, whatever the body', async () => {
    for (const [m, raw, ct] of [
      ['GET', undefined, undefined],
      ['POST', 'hello', 'text/plain'],
      ['POST', '{', 'application/json'],
      ['DELETE', undefined, undefined],
    ] as const) {
      const r = await t.request(m, '/v1/nowhere?x=1', raw === undefined ? {} : { raw, headers: { 'content-type': ct as string } });
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: `No route for ${m} /v1/nowhere`, code: 'not_found' });
      expect(r.headers.get('x-request-id')).toBeTruthy();
    }
  });

  it('a known path with an unsupported method → 405 method_not_allowed with Allow, in the error shape', async () => {
    const project = '/v1/projects/prj_x';
    for (const m of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const r = await t.request(m, `${project}?x=1`);
      expect(r.status, `${m} ${r.text}`).toBe(405);
      expect(r.headers.get('allow')).toBe('GET, HEAD');
      expect(r.body).toMatchObject({ code: 'method_not_allowed' });
      expect(r.headers.get('x-request-id')).toBeTruthy();
    }
    const jobs = await t.request('DELETE', '/v2/agent/prj_x/job');
    expect(jobs.status).toBe(405);
    expect(jobs.headers.get('allow')).toBe('POST');
    const job = await t.request('PUT', '/v2/agent/prj_x/job/job_y/');
    expect(job.status).toBe(405);
    expect(job.headers.get('allow')).toBe('GET, HEAD');
  });

  it('unknown query parameters → 400 unknown_field naming them, on every API endpoint', async () => {
    const project = await t.request('GET', `/v1/projects/${s.project.id}?verbose=1`, { key: s.adminKey });
    expect(project.status).toBe(400);
    expect(project.body).toMatchObject({ code: 'unknown_field', details: [{ path: 'verbose', message: expect.stringContaining('takes none') }] });
    const jobs = await t.request('GET', `/v2/agent/${s.project.id}/jobs?limit=5&sort=asc`, { key: s.adminKey });
    expect(jobs.status).toBe(400);
    expect(jobs.body).toMatchObject({ code: 'unknown_field', details: [{ path: 'sort', message: expect.stringContaining('allowed: status, limit, cursor') }] });
    const views = await t.request('GET', `/v1/analytics/${s.project.id}/views?sort=asc`, { key: s.adminKey });
    expect(views.status).toBe(400);
    expect(views.body.code).toBe('unknown_field');
    expect((await t.request('GET', `/v2/agent/${s.project.id}/jobs?limit=5`, { key: s.adminKey })).status).toBe(200);
  });

  it('bad percent-encoding → 400; an overlong path parameter → 414; both in the error shape', async () => {
    const r = await t.request('GET', '/v1/projects/%E0%A4%A');
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_request');
    expect(r.headers.get('x-request-id')).toBeTruthy();
    const long = await t.request('GET', `/v1/projects/${'p'.repeat(300)}`);
    expect(long.status).toBe(414);
    expect(long.body.code).toBe('uri_too_long');
    expect(long.headers.get('x-request-id')).toBeTruthy();
  });

  it('an unexpected error → 500 with only "Internal error", the code and the request id', async () => {
    for (const p of ['/test/crash', '/test/crash-coded']) {
      const r = await t.request('GET', p);
      expect(r.status).toBe(500);
      const id = r.headers.get('x-request-id');
      expect(id).toBeTruthy();
      expect(r.body).toEqual({ error: 'Internal error', code: 'internal_error', requestId: id });
      for (const leak of SECRETS) expect(r.text).not.toContain(leak);
      expect(r.text).not.toMatch(/ink_/);
    }
  });

  it('echoes a well-formed incoming x-request-id and replaces a malformed one', async () => {
    const ok = await t.request('GET', '/healthz', { headers: { 'x-request-id': 'trace-123.abc:9' } });
    expect(ok.headers.get('x-request-id')).toBe('trace-123.abc:9');
    const crash = await t.request('GET', '/test/crash', { headers: { 'x-request-id': 'trace-500' } });
    expect(crash.body.requestId).toBe('trace-500');
    const bad = await t.request('GET', '/healthz', { headers: { 'x-request-id': 'has spaces and <html>' } });
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('malformed HTTP gets a 400 in the error shape with a request id; oversized headers get 431', async () => {
    const raw = async (payload: string) =>
      new Promise<string>((resolve, reject) => {
        const url = new URL(t.baseUrl);
        const sock = net.connect(Number(url.port), url.hostname, () => sock.write(payload));
        let out = '';
        sock.on('data', (d) => {
          out += d.toString();
        });
        sock.on('close', () => resolve(out));
        sock.on('error', reject);
      });
    const bad = await raw('GET / HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n');
    expect(bad).toMatch(/^HTTP\/1\.1 400/);
    expect(bad).toMatch(/x-request-id: [0-9a-f-]{36}/i);
    expect(JSON.parse(bad.slice(bad.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'invalid_request' });
    const huge = await raw(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431/);
    expect(JSON.parse(huge.slice(huge.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'headers_too_large' });
  });
});
