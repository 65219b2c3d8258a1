// Property test: random methods, paths (every operation in the generated OpenAPI document, so routes
// added later are covered too), query strings, headers, content types and bodies thrown at the running
// app. Never a 5xx, never a hang; every 4xx JSON body has `error` and `code`; every response has x-request-id.
//
// Hostile values are mixed into every generator (security issue 13): lone UTF-16 surrogates (high and low),
// NUL, 100k-character strings, numbers at and beyond column bounds (2^31, 2^53, 1e308, -1), JSON nested
// 10,000 deep as a raw body, and SSE requests to a real job's events with huge or malformed Last-Event-ID /
// `after` (read briefly, then aborted). The seed is fixed: a failure reproduces exactly.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { JOBS_TEST_ENV } from '../helpers/jobs.ts';

/** Fixed: the same requests on every run (override with INKWELL_FUZZ_SEED to explore). */
const SEED = Number(process.env.INKWELL_FUZZ_SEED ?? 20261113);
/** Requests per database (at least 2,000: issue 13). */
const RUNS = Number(process.env.INKWELL_FUZZ_RUNS ?? 2000);
/** Client-side timeout of one request: reaching it is a failure (a hang). */
const REQUEST_TIMEOUT_MS = 10_000;

const LONG = 100_000;
/** Strings a database or a hash must never choke on. */
const HOSTILE_STRINGS = [
  '\ud800',
  '\udfff',
  'a\ud800b',
  '\udc00\ud800',
  '\u0000',
  'a\u0000b',
  '\u0000'.repeat(50),
  'x'.repeat(LONG),
  'é'.repeat(LONG),
  `${'\ud83d\ude00'.repeat(10)}\ud83d`,
  '2147483648',
  '9'.repeat(400),
];
/** Numbers at and beyond what integer columns (32-bit, 64-bit) and doubles hold. */
const HOSTILE_NUMBERS = [2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, 2 ** 63, 1e308, -1, -(2 ** 31) - 1, -1e308, 1e-308, 0.5, -0];
/** Query values, already percent-encoded (a lone surrogate has no UTF-8 encoding: these are its raw bytes). */
const HOSTILE_QUERY = [
  '%00',
  'a%00b',
  '%ED%A0%80',
  '%ED%BF%BF',
  '%F0%9F',
  '2147483648',
  '2147483647',
  '4294967296',
  '9007199254740993',
  '1e308',
  '1e400',
  '-1',
  '-0',
  '1.5',
  '9'.repeat(500),
  'x'.repeat(5000),
  '0x10',
  '%20',
];
/** Last-Event-ID values (header values are bytes: no NUL or lone surrogate can be sent). */
const HOSTILE_EVENT_IDS = ['999999999999999', '2147483648', '2147483647', '9'.repeat(1000), '0', '-1', '1.5', '1e3', 'abc', '', ' ', ' 7 ', '\t3', 'é', '1, 2'];
const DEPTH = 10_000;
/** Raw bodies nested 10,000 deep: on their own and where a route looks into them. */
const NESTED_BODIES = [
  `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`,
  `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`,
  `{"events":[${'{"path":'.repeat(DEPTH)}"/"${'}'.repeat(DEPTH)}]}`,
  `{"events":[${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}]}`,
  `{"prompt":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}`,
  `{"projectId":"p","key":"k","events":[${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}]}`,
];

type Schema = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  queryParams: { name: string; schema: Schema }[];
  body: Schema | null;
}

function operationsOf(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const params: any[] = op.parameters ?? [];
      ops.push({
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string),
        queryParams: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        body: op.requestBody?.content?.['application/json']?.schema ?? null,
      });
    }
  }
  return ops;
}

/** Values shaped like a schema (often valid, often just wrong), so fuzzing reaches past validation. */
function arbFromSchema(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const anything = fc.jsonValue({ maxDepth: 2 });
  if (depth > 3 || !schema || typeof schema !== 'object') return anything;
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants) && variants.length > 0) return fc.oneof(...variants.map((v: Schema) => arbFromSchema(v, depth + 1)), anything);
  if ('const' in schema) return fc.oneof(fc.constant(schema.const), anything);
  if (Array.isArray(schema.enum)) return fc.oneof(fc.constantFrom(...schema.enum), anything);
  const typed = (() => {
    switch (Array.isArray(schema.type) ? schema.type[0] : schema.type) {
      case 'string':
        return fc.oneof(
          fc.string({ maxLength: 40 }),
          fc.string({ unit: 'grapheme', maxLength: 20 }),
          fc.string({ unit: 'binary', maxLength: 20 }),
          fc.constantFrom('', 'main', 'https://github.com/acme/docs', '2026-11-21', '2026-11-21T08:00:00.000Z', 'anthropic/x', '../../etc/passwd'),
          fc.constantFrom(...HOSTILE_STRINGS),
          // A hostile character inside an otherwise plausible value, so it gets past the other rules.
          fc
            .tuple(fc.constantFrom('/docs/', 'main', 'openai-compatible/m', 'Fix the typo'), fc.constantFrom('\ud800', '\udfff', '\u0000'))
            .map(([a, b]) => a + b),
        );
      case 'integer':
        return fc.oneof(fc.integer({ min: -5, max: 300 }), fc.constantFrom(0, 1, 2 ** 53, -(2 ** 31)), fc.constantFrom(...HOSTILE_NUMBERS));
      case 'number':
        return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.constantFrom(...HOSTILE_NUMBERS));
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return fc.array(arbFromSchema(schema.items ?? {}, depth + 1), { maxLength: 4 });
      case 'object': {
        const props: Record<string, Schema> = schema.properties ?? {};
        const names = Object.keys(props);
        if (names.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), anything, { maxKeys: 3 });
        const record = fc.record(Object.fromEntries(names.map((n) => [n, arbFromSchema(props[n] as Schema, depth + 1)])), { requiredKeys: [] });
        return fc.oneof(
          record,
          fc.tuple(record, fc.string({ maxLength: 8 }), anything).map(([r, k, v]) => ({ ...r, [k]: v })),
        );
      }
      default:
        return anything;
    }
  })();
  return fc.oneof({ weight: 4, arbitrary: typed }, { weight: 1, arbitrary: anything });
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/problem+json',
  'text/plain',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=----x',
  'application/octet-stream',
  'application/json; charset=latin1',
  ';;;',
  'json',
];

const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,60}$/).map((s) => s.trim());

/**
 * Reads an SSE response for a moment, then aborts it (so no stream can hang the test). Returns whether the
 * server ended it within that moment: an open 200 stream must stay open (a Last-Event-ID or `after` beyond
 * the last event once ended it at once, and an EventSource then reconnects forever).
 */
async function readBriefly(res: Response, abort: AbortController, ms: number): Promise<{ text: string; ended: boolean }> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  let ended = false;
  const deadline = Date.now() + ms;
  try {
    while (Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<'tick'>((resolve) => {
        timer = setTimeout(() => resolve('tick'), Math.max(1, deadline - Date.now()));
      });
      const r = await Promise.race([reader.read(), tick]);
      clearTimeout(timer);
      if (r === 'tick') break;
      if (r.done) {
        ended = true;
        break;
      }
      text += decoder.decode(r.value, { stream: true });
    }
  } finally {
    abort.abort();
    await reader.cancel().catch(() => {});
  }
  return { text, ended };
}

describeEachDialect('fuzz', (dialect) => {
  let t: TestApp;
  let a: Seeded;
  let b: Seeded;
  let revoked: string;
  let jobA: string;
  let ops: Operation[];
  beforeAll(async () => {
    // With a usable default model, so that valid job bodies create jobs (and reach the database).
    t = await startTestApp(dialect, {}, JOBS_TEST_ENV);
    a = await t.seed({ name: 'A' });
    b = await t.seed({ name: 'B' });
    const k = await t.ctx.projects.createKey({ projectId: a.project.id, kind: 'admin' });
    await t.ctx.projects.revokeKey(k.id);
    revoked = k.key;
    const job = await t.request('POST', `/v2/agent/${a.project.id}/job`, { key: a.adminKey, body: { prompt: 'fuzz target' } });
    expect(job.status).toBe(201);
    jobA = job.body.id;
    ops = operationsOf((await t.request('GET', '/openapi.json')).body);
  });
  afterAll(async () => t?.close());

  it('the OpenAPI document lists the operations to fuzz', () => {
    const paths = ops.map((o) => `${o.method} ${o.path}`);
    expect(paths).toContain('GET /healthz');
    expect(paths).toContain('GET /v1/projects/{projectId}');
    expect(paths).toContain('GET /v2/agent/{projectId}/job/{id}/events');
  });

  it(`never answers 5xx or hangs, and every 4xx carries {error, code} and x-request-id (${RUNS} requests, fixed seed)`, { timeout: 1_200_000 }, async () => {
    const started = Date.now();
    const paramValue = fc.oneof(
      { weight: 5, arbitrary: fc.constant('$A') },
      { weight: 2, arbitrary: fc.constant('$JOB') },
      fc.constant('$B'),
      fc.constantFrom('job_123', 'prj_nope', '0', '-1', '..', '%2e%2e', '%', '%zz', '%00', 'a'.repeat(120), '%ED%A0%80', '2147483648', 'x'.repeat(2000)),
      fc.string({ maxLength: 30 }).map(encodeURIComponent),
    );
    const queryValue = fc.oneof(
      { weight: 3, arbitrary: fc.string({ maxLength: 20 }).map(encodeURIComponent) },
      { weight: 2, arbitrary: fc.integer().map(String) },
      { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_QUERY) },
    );
    const requestArb = fc.record({
      op: fc.constantFrom(...ops),
      method: fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD')),
      params: fc.array(paramValue, { minLength: 4, maxLength: 4 }),
      query: fc.array(fc.tuple(fc.option(fc.string({ maxLength: 10 })), queryValue), { maxLength: 3 }),
      auth: fc.constantFrom('admin', 'admin', 'ingest', 'ingestSecret', 'otherAdmin', 'revoked', 'none', 'garbage', 'basic', 'bearerOnly'),
      contentType: fc.oneof({ weight: 4, arbitrary: fc.constant('application/json') }, fc.constantFrom(...CONTENT_TYPES), fc.constant(null), headerValue),
      bodyKind: fc.constantFrom('schema', 'schema', 'schema', 'json', 'text', 'none', 'bytes', 'nested'),
      json: fc.jsonValue({ maxDepth: 3 }),
      text: fc.string({ maxLength: 200 }),
      bytes: fc.uint8Array({ maxLength: 200 }),
      nested: fc.nat({ max: NESTED_BODIES.length - 1 }),
      accept: fc.constantFrom(undefined, 'application/json', '*/*', 'text/html', 'text/event-stream', 'text/markdown'),
      lastEventId: fc.option(fc.oneof(fc.constantFrom(...HOSTILE_EVENT_IDS), fc.nat().map(String)), { freq: 3 }),
      idempotencyKey: fc.option(fc.oneof(headerValue, fc.constantFrom('k'.repeat(10_000), 'é', 'a b', '')), { freq: 4 }),
      extraHeaders: fc.dictionary(fc.stringMatching(/^x-[a-z0-9-]{1,12}$/), headerValue, { maxKeys: 3 }),
      requestId: fc.option(headerValue),
      seed: fc.integer(),
    });
    // One request in five: the live event stream of a real job, with a hostile position.
    const sseArb = fc.record({
      after: fc.option(fc.constantFrom(...HOSTILE_QUERY, '0', '1', '3'), { freq: 2 }),
      lastEventId: fc.option(fc.constantFrom(...HOSTILE_EVENT_IDS), { freq: 5 }),
      auth: fc.constantFrom('admin', 'admin', 'admin', 'otherAdmin', 'none'),
      method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD'),
    });
    // One in six: a well-formed request to an endpoint that stores or looks up what it is given, with one
    // hostile value where a valid one would go, so that the value gets past schema and auth to the database.
    const hostileText = fc.oneof(fc.constantFrom(...HOSTILE_STRINGS), fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }));
    const hostileValue = fc.oneof(hostileText, fc.constantFrom(...HOSTILE_NUMBERS));
    const deepArb = fc.oneof(
      hostileText.map((v) => ({ method: 'POST', path: '/v2/agent/$A/job', key: 'admin', body: { prompt: v } })),
      fc.tuple(fc.constantFrom('branch', 'model'), hostileText).map(([f, v]) => ({
        method: 'POST',
        path: '/v2/agent/$A/job',
        key: 'admin',
        body: { prompt: 'p', [f]: f === 'model' ? `openai-compatible/${v}` : v },
      })),
      hostileText.map((v) => ({ method: 'POST', path: '/v2/agent/$A/job/$JOB/message', key: 'admin', body: { prompt: v } })),
      fc
        .tuple(
          fc.constantFrom('path', 'url', 'visitorId', 'userAgent', 'referrer', 'accept', 'ip', 'method', 'timestamp', 'status'),
          hostileValue,
          // The trusted senders may set visitorId and timestamp; a public ingest key gets a 400 for them.
          fc.constantFrom('ingestSecret', 'ingestSecret', 'admin', 'ingest'),
        )
        .map(([f, v, key]) => ({
          method: 'POST',
          path: '/v1/analytics/$A/events',
          key,
          body: {
            events: [
              { path: '/a', [f]: v },
              { path: '/a', [f]: v },
              { path: '/ok', referrer: 'r' },
            ],
          },
        })),
      fc
        .tuple(fc.constantFrom('path', 'referrer', 'visitorId'), hostileText, fc.constantFrom('$INGEST_PUB', '$INGEST_SECRET'))
        .map(([f, v, key]) => ({ method: 'POST', path: '/v1/collect', key: null, body: { projectId: '$A', key, events: [{ path: '/a', [f]: v }] } })),
      fc.constantFrom(...HOSTILE_QUERY).map((v) => ({ method: 'GET', path: `/v2/agent/$A/job/$JOB/events?after=${v}`, key: 'admin', body: undefined })),
      fc
        .tuple(fc.constantFrom('limit', 'cursor', 'status'), fc.constantFrom(...HOSTILE_QUERY))
        .map(([q, v]) => ({ method: 'GET', path: `/v2/agent/$A/jobs?${q}=${v}`, key: 'admin', body: undefined })),
      fc
        .tuple(
          fc.constantFrom('visitors', 'views'),
          fc.constantFrom('limit', 'offset', 'dateFrom', 'dateTo'),
          fc.constantFrom(...HOSTILE_QUERY, '0000-01-01', '9999-12-31'),
        )
        .map(([k, q, v]) => ({ method: 'GET', path: `/v1/analytics/$A/${k}?${q}=${v}`, key: 'admin', body: undefined })),
    );
    const arb = fc.oneof(
      { weight: 4, arbitrary: requestArb.map((r) => ({ kind: 'any' as const, r })) },
      { weight: 1, arbitrary: sseArb.map((r) => ({ kind: 'sse' as const, r })) },
      { weight: 1, arbitrary: deepArb.map((r) => ({ kind: 'deep' as const, r })) },
    );

    const seen = new Map<number, number>();
    let requests = 0;
    let sse = 0;
    let resets = 0;
    await fc.assert(
      fc.asyncProperty(arb, fc.context(), async (x, ctxLog) => {
        const keyOf = (auth: string) =>
          ({
            admin: `Bearer ${a.adminKey}`,
            ingest: `Bearer ${a.ingestKey}`,
            ingestSecret: `Bearer ${a.ingestSecretKey}`,
            otherAdmin: `Bearer ${b.adminKey}`,
            revoked: `Bearer ${revoked}`,
            none: undefined,
            garbage: `Bearer ink_${'z'.repeat(40)}`,
            basic: 'Basic dXNlcjpwYXNz',
            bearerOnly: 'Bearer',
          })[auth];
        let method: string;
        let path: string;
        const headers: Record<string, string> = {};
        let body: string | Uint8Array | undefined;
        if (x.kind === 'deep') {
          const r = x.r;
          const fill = (v: string) =>
            v.replaceAll('$A', a.project.id).replaceAll('$JOB', jobA).replaceAll('$INGEST_PUB', a.ingestKey).replaceAll('$INGEST_SECRET', a.ingestSecretKey);
          method = r.method;
          path = fill(r.path);
          const auth = r.key === null ? undefined : keyOf(r.key);
          if (auth) headers.authorization = auth;
          if (r.body !== undefined) {
            // JSON.stringify writes a lone surrogate as its \u escape: the server parses it back into one.
            body = fill(JSON.stringify(r.body));
            headers['content-type'] = 'application/json';
          }
        } else if (x.kind === 'sse') {
          const r = x.r;
          method = r.method;
          path = `/v2/agent/${a.project.id}/job/${jobA}/events${r.after !== null ? `?after=${r.after}` : ''}`;
          headers.accept = 'text/event-stream';
          if (r.lastEventId !== null) headers['last-event-id'] = r.lastEventId;
          const auth = keyOf(r.auth);
          if (auth) headers.authorization = auth;
        } else {
          const r = x.r;
          const { op } = r;
          method = r.method ?? op.method;
          let pi = 0;
          path = op.path.replace(/\{(\w+)\}/g, () => {
            const v = r.params[pi++ % 4] as string;
            return v === '$A' ? a.project.id : v === '$B' ? b.project.id : v === '$JOB' ? jobA : v;
          });
          const qs = [...r.query.map(([k, v]) => `${encodeURIComponent(k ?? op.queryParams[0]?.name ?? 'q')}=${v}`)];
          if (qs.length) path += `?${qs.join('&')}`;
          Object.assign(headers, r.extraHeaders);
          const auth = keyOf(r.auth);
          if (auth) headers.authorization = auth;
          if (r.accept) headers.accept = r.accept;
          if (r.requestId !== null) headers['x-request-id'] = r.requestId;
          if (r.lastEventId !== null) headers['last-event-id'] = r.lastEventId;
          if (r.idempotencyKey !== null) headers['idempotency-key'] = r.idempotencyKey;
          if (method !== 'GET' && method !== 'HEAD' && r.bodyKind !== 'none') {
            if (r.bodyKind === 'schema' && op.body) body = JSON.stringify(fc.sample(arbFromSchema(op.body), { seed: r.seed, numRuns: 1 })[0]);
            else if (r.bodyKind === 'json' || r.bodyKind === 'schema') body = JSON.stringify(r.json);
            else if (r.bodyKind === 'nested') body = NESTED_BODIES[r.nested];
            else if (r.bodyKind === 'text') body = r.text;
            else body = r.bytes;
            if (r.contentType !== null) headers['content-type'] = r.contentType;
          }
        }
        const shown = (v: string) => (v.length > 300 ? `${v.slice(0, 300)}… (${v.length} chars)` : v);
        const line = `${method} ${shown(path)} ${shown(JSON.stringify(headers))} ${typeof body === 'string' ? shown(body) : body ? '<bytes>' : ''}`;
        ctxLog.log(line);
        if (process.env.INKWELL_FUZZ_TRACE) process.stderr.write(`fuzz [${dialect}] #${requests} ${line.slice(0, 400)}\n`);
        requests++;
        const abort = new AbortController();
        const timer = setTimeout(() => abort.abort(new Error(`no response within ${REQUEST_TIMEOUT_MS} ms (a hang)`)), REQUEST_TIMEOUT_MS);
        try {
          const send = () => fetch(t.baseUrl + path, { method, headers, body: body as BodyInit | undefined, signal: abort.signal });
          let res: Response;
          try {
            res = await send();
          } catch (err) {
            // A kept-alive connection the server closed just as it was reused fails before any response
            // (ECONNRESET); an HTTP client retries that once (RFC 9112 §9.3.1), and so does this test. A
            // second failure, a timeout or a server that is gone still fails.
            if (abort.signal.aborted || !/ECONNRESET|EPIPE|other side closed|UND_ERR_SOCKET/.test(String((err as Error).cause ?? err))) throw err;
            resets++;
            ctxLog.log(`(connection reset before a response: retried once) ${String((err as Error).cause ?? err)}`);
            res = await send();
          }
          const ct = res.headers.get('content-type') ?? '';
          let text = '';
          if (ct.includes('text/event-stream')) {
            sse++;
            // A 200 stream: read a moment (the `retry:` line comes at once), then abort. It must not have
            // ended by itself meanwhile (HEAD has no body to read).
            const read = method === 'HEAD' ? { text: '', ended: false } : await readBriefly(res, abort, 60);
            ctxLog.log(`→ ${res.status} (stream) ${shown(read.text)}${read.ended ? ' [ended]' : ''}`);
            if (method !== 'HEAD' && res.status === 200) {
              expect(read.ended, 'an open SSE stream ended by itself at once').toBe(false);
              expect(read.text).toContain('retry:');
            }
          } else text = await res.text();
          if (!ct.includes('text/event-stream')) ctxLog.log(`→ ${res.status} ${shown(text)}`);
          seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
          expect(res.status).toBeLessThan(500);
          expect(res.headers.get('x-request-id')).toBeTruthy();
          if (res.status >= 400 && method !== 'HEAD') {
            expect(ct).toMatch(/application\/json/);
            const parsed = JSON.parse(text);
            expect(typeof parsed.error).toBe('string');
            expect(parsed.code).toMatch(/^[a-z_]+$/);
          }
        } catch (err) {
          if (abort.signal.aborted && abort.signal.reason instanceof Error && /a hang/.test(abort.signal.reason.message)) throw abort.signal.reason;
          throw err;
        } finally {
          clearTimeout(timer);
          abort.abort();
        }
      }),
      // Fixed seed; no shrinking (each step is a real request): the failing request is in the log. No time
      // limit on the whole run (a loaded machine is slower, not wrong); a hang is caught per request above.
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    const seconds = (Date.now() - started) / 1000;
    if (process.env.INKWELL_FUZZ_VERBOSE) {
      process.stdout.write(
        `fuzz [${dialect}] ${requests} requests (${sse} SSE, ${resets} retried after a connection reset) in ${seconds.toFixed(1)} s, seed ${SEED}; statuses: ${JSON.stringify(Object.fromEntries(seen))}\n`,
      );
    }
    expect(requests).toBeGreaterThanOrEqual(RUNS);
    // Retried resets stay rare: a server that drops connections as a rule fails here.
    expect(resets).toBeLessThan(RUNS / 100);
    expect(sse).toBeGreaterThan(0);
    // The requests got past authentication and validation often enough to mean something.
    const statuses = [...seen.keys()];
    expect(statuses.some((s) => s >= 200 && s < 300)).toBe(true);
    expect(statuses.filter((s) => s >= 400).length).toBeGreaterThanOrEqual(4);
  });
});
