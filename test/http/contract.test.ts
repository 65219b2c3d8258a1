// The contract checker every test request goes through (test/helpers/contract.ts) catches what it claims to,
// and the document it checks against says what an integrator needs of every operation.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS, type ErrorCode } from '../../src/errors.ts';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { contractViolation, hostedViolation } from '../helpers/contract.ts';
import { JOBS_TEST_ENV } from '../helpers/jobs.ts';

const addFormats = (addFormatsModule.default ?? addFormatsModule) as unknown as (a: Ajv2020) => void;

type Media = { schema?: object; example?: unknown; examples?: Record<string, { value: unknown }> };
type Operation = {
  summary?: string;
  description?: string;
  parameters?: { name: string; schema?: object; example?: unknown }[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
};

/** Every example a media object gives: `example`, `examples`, and its schema's own `examples`. */
function examplesOf(media: Media): unknown[] {
  return [
    ...(media.example !== undefined ? [media.example] : []),
    ...Object.values(media.examples ?? {}).map((e) => e.value),
    ...((media.schema as { examples?: unknown[] } | undefined)?.examples ?? []),
  ];
}

describe('contract checker', () => {
  let t: TestApp;
  let s: Seeded;
  let doc: { paths: Record<string, Record<string, Operation>> };
  beforeAll(async () => {
    t = await startTestApp('sqlite', {}, JOBS_TEST_ENV);
    s = await t.seed();
    doc = (await t.request('GET', '/openapi.json')).body;
  });
  afterAll(async () => t?.close());

  const json = (body: unknown, headers: Record<string, string> = { 'x-request-id': 'r1' }) => ({
    contentType: 'application/json; charset=utf-8',
    body,
    text: JSON.stringify(body),
    headers: new Headers(headers),
  });
  const check = (method: string, url: string, status: number, body: unknown, headers?: Record<string, string>) =>
    contractViolation(t.baseUrl, method, url, { status, ...json(body, headers) });

  it('accepts what the server really answers, checked on the way', async () => {
    const r = await t.request('GET', `/v1/projects/${s.project.id}`, { key: s.adminKey });
    expect(r.status).toBe(200);
    expect(await check('GET', `/v1/projects/${s.project.id}`, 200, r.body, { 'x-request-id': 'r1' })).toBeNull();
    const job = await t.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.adminKey, body: { prompt: 'Fix the typo in the README' } });
    expect(job.status).toBe(201);
    const missing = await t.request('GET', `/v2/agent/${s.project.id}/job/job_nothing`, { key: s.adminKey });
    expect(missing.body.code).toBe('job_not_found');
  });

  it('refuses an unlisted status and a body that breaks the schema; ignores what no operation covers', async () => {
    expect(await check('GET', `/v1/projects/${s.project.id}`, 418, { error: 'x', code: 'teapot' })).toMatch(/does not list/);
    expect(await check('GET', `/v1/projects/${s.project.id}`, 200, { id: 1 })).toMatch(/does not match/);
    expect(await check('GET', `/v2/agent/${s.project.id}/jobs`, 400, { code: 'x' })).toMatch(/does not match/);
    expect(await check('GET', '/v1/nowhere', 404, { error: 'x', code: 'not_found' })).toBeNull();
    expect(await check('DELETE', `/v1/projects/${s.project.id}`, 405, { error: 'x', code: 'method_not_allowed' })).toBeNull();
  });

  it('refuses an error code the operation does not list for that status', async () => {
    expect(await check('GET', `/v2/agent/${s.project.id}/job/job_x`, 404, { error: 'Job not found', code: 'job_not_found' })).toBeNull();
    expect(await check('GET', `/v2/agent/${s.project.id}/jobs`, 404, { error: 'Job not found', code: 'job_not_found' })).toMatch(/does not match/);
    expect(await check('GET', `/v2/agent/${s.project.id}/job/job_x`, 409, { error: 'Job is archived', code: 'job_archived' })).toMatch(/does not list/);
  });

  it('refuses a missing required header, a malformed one, and a content type the document does not give', async () => {
    const url = `/v2/agent/${s.project.id}/job`;
    const limited = { error: 'Rate limit exceeded', code: 'rate_limited' };
    const rateHeaders = { 'x-request-id': 'r1', 'ratelimit-limit': '10', 'ratelimit-remaining': '0', 'ratelimit-reset': '7' };
    expect(await check('POST', url, 429, limited, { ...rateHeaders, 'retry-after': '7' })).toBeNull();
    expect(await check('POST', url, 429, limited, rateHeaders)).toMatch(/required header retry-after is missing/);
    expect(await check('POST', url, 429, limited, { ...rateHeaders, 'retry-after': 'soon' })).toMatch(/header retry-after/);
    expect(await check('GET', `/v1/projects/${s.project.id}`, 404, { error: 'x', code: 'project_not_found' }, {})).toMatch(/x-request-id is missing/);
    const asText = await contractViolation(t.baseUrl, 'GET', '/healthz', {
      status: 200,
      contentType: 'text/html',
      body: '<p>ok</p>',
      text: '<p>ok</p>',
      headers: new Headers({ 'x-request-id': 'r1' }),
    });
    expect(asText).toMatch(/content type text\/html/);
  });

  it('holds the operations the hosted service also has to the hosted documents', async () => {
    const r = await t.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.adminKey, body: { prompt: 'Fix the broken link' } });
    const hosted = (template: string, method: string, status: number, body: unknown) => hostedViolation(method, template, { status, ...json(body) });
    expect(hosted('/v2/agent/{projectId}/job', 'POST', 201, r.body)).toBeNull();
    // A success must be the hosted status; a body must match the hosted schema.
    expect(hosted('/v2/agent/{projectId}/job', 'POST', 200, r.body)).toMatch(/hosted document \(hosted-admin\) does not list/);
    expect(hosted('/v2/agent/{projectId}/job/{id}', 'GET', 200, { ...r.body, status: 'queued' })).toMatch(/hosted document \(hosted-admin/);
    const page = { totals: { human: 1, ai: 0, total: 1 }, visitors: [{ path: '/', human: 1, ai: 0, total: 1 }], hasMore: false };
    expect(hosted('/v1/analytics/{projectId}/visitors', 'GET', 200, page)).toBeNull();
    expect(hosted('/v1/analytics/{projectId}/visitors', 'GET', 200, { ...page, visitors: [{ path: '/', human: '1' }] })).toMatch(/hosted-analytics/);
    // An error status the hosted document does not list is held to the error schema it uses for the others.
    expect(hosted('/v2/agent/{projectId}/job/{id}', 'GET', 401, { error: 'Unauthorized', code: 'unauthorized' })).toBeNull();
    expect(hosted('/v2/agent/{projectId}/job/{id}', 'GET', 401, { error: 401 })).toMatch(/hosted document \(hosted-admin, response 404\)/);
    expect(hosted('/v1/analytics/{projectId}/views', 'GET', 403, { error: 'x', details: [{ path: 'a' }] })).toMatch(/hosted-analytics, response 400/);
    // Operations the hosted service does not have are not its business.
    expect(hosted('/v1/projects/{projectId}', 'GET', 200, { anything: true })).toBeNull();
  });

  describe('the document', () => {
    const operations = () =>
      Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })));

    it('every operation has a summary, a description, an example of its request body and of its success answer (204: no body)', () => {
      expect(operations().length).toBeGreaterThan(10);
      for (const { name, op } of operations()) {
        expect(op.summary, name).toBeTruthy();
        expect(op.description, name).toBeTruthy();
        for (const media of Object.values(op.requestBody?.content ?? {})) expect(examplesOf(media).length, `${name} request body`).toBeGreaterThan(0);
        const success = Object.entries(op.responses).filter(([status]) => status.startsWith('2'));
        expect(success.length, name).toBeGreaterThan(0);
        for (const [status, response] of success) {
          if (status === '204') {
            expect(response.content, `${name} 204 has no body`).toBeUndefined();
            continue;
          }
          const examples = Object.values(response.content ?? {}).flatMap(examplesOf);
          expect(examples.length, `${name} ${status}`).toBeGreaterThan(0);
        }
      }
    });

    it('every example validates against its own schema', () => {
      const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
      addFormats(ajv);
      let checked = 0;
      const validate = (where: string, schema: object | undefined, examples: unknown[]) => {
        if (!schema) return;
        const { examples: _own, ...rest } = schema as { examples?: unknown };
        const v = ajv.compile(rest);
        for (const example of examples) {
          checked++;
          expect(v(example), `${where}: ${ajv.errorsText(v.errors)} in ${JSON.stringify(example).slice(0, 200)}`).toBe(true);
        }
      };
      for (const { name, op } of operations()) {
        for (const p of op.parameters ?? []) validate(`${name} parameter ${p.name}`, p.schema, p.example === undefined ? [] : [p.example]);
        for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) validate(`${name} request ${type}`, media.schema, examplesOf(media));
        for (const [status, response] of Object.entries(op.responses)) {
          for (const [type, media] of Object.entries(response.content ?? {})) validate(`${name} ${status} ${type}`, media.schema, examplesOf(media));
        }
      }
      expect(checked).toBeGreaterThan(40);
    });

    it('every error answer lists its codes, each of the registry and of that status; every code but 405 is listed somewhere', () => {
      const listed = new Set<string>();
      for (const { name, op } of operations()) {
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) < 400) continue;
          const schema = response.content?.['application/json']?.schema as { properties?: { code?: { enum?: string[] } } } | undefined;
          const codes = schema?.properties?.code?.enum;
          expect(codes?.length, `${name} ${status}`).toBeGreaterThan(0);
          for (const code of codes ?? []) {
            expect(ERRORS[code as ErrorCode]?.status, `${name} ${status} ${code}`).toBe(Number(status));
            listed.add(code);
          }
        }
      }
      // 405 is the answer to a method a path does not have: outside every operation.
      expect(Object.keys(ERRORS).filter((c) => !listed.has(c))).toEqual(['method_not_allowed']);
    });
  });
});
