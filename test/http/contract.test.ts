// The contract checker every test request goes through (test/helpers/contract.ts) catches what it claims to:
// a status the operation does not list, a body that does not match the operation's schema.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { contractViolation } from '../helpers/contract.ts';

describe('contract checker', () => {
  let t: TestApp;
  let s: Seeded;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
    s = await t.seed();
  });
  afterAll(async () => t?.close());

  const check = (method: string, url: string, status: number, body: unknown) =>
    contractViolation(t.baseUrl, method, url, { status, contentType: 'application/json; charset=utf-8', body, text: JSON.stringify(body) });

  it('accepts what the server really answers, checked on the way', async () => {
    const r = await t.request('GET', `/v1/projects/${s.project.id}`, { key: s.adminKey });
    expect(r.status).toBe(200);
    expect(await check('GET', `/v1/projects/${s.project.id}`, 200, r.body)).toBeNull();
  });

  it('refuses an unlisted status and a body that breaks the schema; ignores what no operation covers', async () => {
    expect(await check('GET', `/v1/projects/${s.project.id}`, 418, { error: 'x', code: 'teapot' })).toMatch(/does not list/);
    expect(await check('GET', `/v1/projects/${s.project.id}`, 200, { id: 1 })).toMatch(/does not match/);
    expect(await check('GET', `/v2/agent/${s.project.id}/jobs`, 400, { code: 'x' })).toMatch(/does not match/);
    expect(await check('GET', '/v1/nowhere', 404, { error: 'x', code: 'not_found' })).toBeNull();
    expect(await check('DELETE', `/v1/projects/${s.project.id}`, 405, { error: 'x', code: 'method_not_allowed' })).toBeNull();
  });
});
