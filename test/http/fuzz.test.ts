// Property test: random methods, paths (every operation in the generated OpenAPI document, so routes
// added later are covered too), query strings, headers, content types and bodies thrown at the running
// app. Never a 5xx; every 4xx JSON body has `error` and `code`; every response has x-request-id.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';

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
          fc.constantFrom('', 'main', 'https://github.com/acme/docs', '2026-11-21', '2026-11-21T08:00:00.000Z', 'anthropic/x', '../../etc/passwd'),
        );
      case 'integer':
        return fc.oneof(fc.integer({ min: -5, max: 300 }), fc.constantFrom(0, 1, 2 ** 53, -(2 ** 31)));
      case 'number':
        return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer());
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

describeEachDialect('fuzz', (dialect) => {
  let t: TestApp;
  let a: Seeded;
  let b: Seeded;
  let revoked: string;
  let ops: Operation[];
  beforeAll(async () => {
    t = await startTestApp(dialect);
    a = await t.seed({ name: 'A' });
    b = await t.seed({ name: 'B' });
    const k = await t.ctx.projects.createKey({ projectId: a.project.id, kind: 'admin' });
    await t.ctx.projects.revokeKey(k.id);
    revoked = k.key;
    ops = operationsOf((await t.request('GET', '/openapi.json')).body);
  });
  afterAll(async () => t?.close());

  it('the OpenAPI document lists the operations to fuzz', () => {
    const paths = ops.map((o) => `${o.method} ${o.path}`);
    expect(paths).toContain('GET /healthz');
    expect(paths).toContain('GET /v1/projects/{projectId}');
  });

  it('never answers 5xx, and every 4xx carries {error, code} and x-request-id', async () => {
    const paramValue = fc.oneof(
      { weight: 5, arbitrary: fc.constant('$A') },
      fc.constant('$B'),
      fc.constantFrom('job_123', 'prj_nope', '0', '-1', '..', '%2e%2e', '%', '%zz', '%00', 'a'.repeat(120)),
      fc.string({ maxLength: 30 }).map(encodeURIComponent),
    );
    const requestArb = fc.record({
      op: fc.constantFrom(...ops),
      method: fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD')),
      params: fc.array(paramValue, { minLength: 4, maxLength: 4 }),
      query: fc.array(fc.tuple(fc.option(fc.string({ maxLength: 10 })), fc.oneof(fc.string({ maxLength: 20 }), fc.integer().map(String))), { maxLength: 3 }),
      auth: fc.constantFrom('admin', 'ingest', 'otherAdmin', 'revoked', 'none', 'garbage', 'basic', 'bearerOnly'),
      contentType: fc.oneof({ weight: 4, arbitrary: fc.constant('application/json') }, fc.constantFrom(...CONTENT_TYPES), fc.constant(null), headerValue),
      bodyKind: fc.constantFrom('schema', 'schema', 'schema', 'json', 'text', 'none', 'bytes'),
      schemaBody: fc.constant(null),
      json: fc.jsonValue({ maxDepth: 3 }),
      text: fc.string({ maxLength: 200 }),
      bytes: fc.uint8Array({ maxLength: 200 }),
      accept: fc.constantFrom(undefined, 'application/json', '*/*', 'text/html', 'text/event-stream', 'text/markdown'),
      extraHeaders: fc.dictionary(fc.stringMatching(/^x-[a-z0-9-]{1,12}$/), headerValue, { maxKeys: 3 }),
      requestId: fc.option(headerValue),
      seed: fc.integer(),
    });

    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArb, fc.context(), async (r, ctxLog) => {
        const { op } = r;
        const method = r.method ?? op.method;
        let pi = 0;
        let path = op.path.replace(/\{(\w+)\}/g, () => {
          const v = r.params[pi++ % 4] as string;
          return v === '$A' ? a.project.id : v === '$B' ? b.project.id : v;
        });
        const qs = [...r.query.map(([k, v]) => `${encodeURIComponent(k ?? op.queryParams[0]?.name ?? 'q')}=${encodeURIComponent(v)}`)];
        if (qs.length) path += `?${qs.join('&')}`;
        const headers: Record<string, string> = { ...r.extraHeaders };
        const auth = {
          admin: `Bearer ${a.adminKey}`,
          ingest: `Bearer ${a.ingestKey}`,
          otherAdmin: `Bearer ${b.adminKey}`,
          revoked: `Bearer ${revoked}`,
          none: undefined,
          garbage: `Bearer ink_${'z'.repeat(40)}`,
          basic: 'Basic dXNlcjpwYXNz',
          bearerOnly: 'Bearer',
        }[r.auth];
        if (auth) headers.authorization = auth;
        if (r.accept) headers.accept = r.accept;
        if (r.requestId !== null) headers['x-request-id'] = r.requestId;
        let body: string | Uint8Array | undefined;
        if (method !== 'GET' && method !== 'HEAD' && r.bodyKind !== 'none') {
          if (r.bodyKind === 'schema' && op.body) body = JSON.stringify(fc.sample(arbFromSchema(op.body), { seed: r.seed, numRuns: 1 })[0]);
          else if (r.bodyKind === 'json' || r.bodyKind === 'schema') body = JSON.stringify(r.json);
          else if (r.bodyKind === 'text') body = r.text;
          else body = r.bytes;
          if (r.contentType !== null) headers['content-type'] = r.contentType;
        }
        ctxLog.log(`${method} ${path} ${JSON.stringify(headers)} ${typeof body === 'string' ? body.slice(0, 300) : body ? '<bytes>' : ''}`);
        const res = await fetch(t.baseUrl + path, { method, headers, body: body as BodyInit | undefined, signal: AbortSignal.timeout(10_000) });
        const ct = res.headers.get('content-type') ?? '';
        let text = '';
        if (ct.includes('text/event-stream')) await res.body?.cancel();
        else text = await res.text();
        ctxLog.log(`→ ${res.status} ${text.slice(0, 300)}`);
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
        expect(res.status).toBeLessThan(500);
        expect(res.headers.get('x-request-id')).toBeTruthy();
        if (res.status >= 400 && method !== 'HEAD') {
          expect(ct).toMatch(/application\/json/);
          const parsed = JSON.parse(text);
          expect(typeof parsed.error).toBe('string');
          expect(parsed.code).toMatch(/^[a-z_]+$/);
        }
      }),
      { numRuns: 250, interruptAfterTimeLimit: 60_000, markInterruptAsFailure: false },
    );
    // The requests got past authentication and validation often enough to mean something.
    const statuses = [...seen.keys()];
    if (process.env.INKWELL_FUZZ_VERBOSE) process.stdout.write(`fuzz [${dialect}] statuses: ${JSON.stringify(Object.fromEntries(seen))}\n`);
    expect(statuses.some((s) => s >= 200 && s < 300)).toBe(true);
    expect(statuses.filter((s) => s >= 400).length).toBeGreaterThanOrEqual(4);
  });
});
