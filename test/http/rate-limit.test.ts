// Rate limits end to end: a tiny configured limit, a test-only route that consumes the `jobs` family
// (job create/message use the same call), real HTTP, both dialects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateLimitRule } from '../../src/config.ts';
import { requireKey } from '../../src/http/auth.ts';
import { createRateLimiter } from '../../src/http/rate-limit.ts';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';

const WINDOW_MS = 60_000;

describeEachDialect('rate limits', (dialect) => {
  let t: TestApp;
  let a: Seeded;
  let b: Seeded;
  let clock = 1_800_000_000_000;
  beforeAll(async () => {
    const rule: RateLimitRule = { max: 3, windowMs: WINDOW_MS };
    t = await startTestApp(
      dialect,
      {
        rateLimits: {
          jobs: rule,
          analyticsRead: { max: 2, windowMs: WINDOW_MS },
          ingest: { max: 10, windowMs: WINDOW_MS },
          signIn: { max: 2, windowMs: WINDOW_MS },
        },
      },
      {},
      {
        now: () => clock,
        routes: async (app, ctx) => {
          app.post('/test/:projectId/work', { onRequest: requireKey(ctx, ['admin']) }, async (request, reply) => {
            ctx.rateLimiter.consume(reply, 'jobs', request.auth!.projectId);
            return reply.status(201).send({ ok: true });
          });
          app.post('/test/:projectId/ingest', { onRequest: requireKey(ctx, ['admin', 'ingest']) }, async (request, reply) => {
            const n = (request.body as { n: number }).n;
            ctx.rateLimiter.consume(reply, 'ingest', request.auth!.projectId, n);
            return reply.status(202).send({ accepted: n });
          });
        },
      },
    );
    a = await t.seed({ name: 'A' });
    b = await t.seed({ name: 'B' });
  });
  afterAll(async () => t?.close());

  const work = (s: Seeded) => t.request('POST', `/test/${s.project.id}/work`, { key: s.adminKey });

  it('counts down, then answers 429 rate_limited with Retry-After and RateLimit-* headers', async () => {
    for (const remaining of [2, 1, 0]) {
      const r = await work(a);
      expect(r.status).toBe(201);
      expect(r.headers.get('ratelimit-limit')).toBe('3');
      expect(r.headers.get('ratelimit-remaining')).toBe(String(remaining));
      expect(r.headers.get('ratelimit-reset')).toBe('60');
    }
    clock += 15_000;
    const r = await work(a);
    expect(r.status).toBe(429);
    expect(r.body.code).toBe('rate_limited');
    expect(r.body.error).toMatch(/Rate limit exceeded: 3 per 60s/);
    expect(r.headers.get('retry-after')).toBe('45');
    expect(r.headers.get('ratelimit-limit')).toBe('3');
    expect(r.headers.get('ratelimit-remaining')).toBe('0');
    expect(r.headers.get('ratelimit-reset')).toBe('45');
    expect(r.headers.get('x-request-id')).toBeTruthy();
  });

  it('another project is unaffected', async () => {
    const r = await work(b);
    expect(r.status).toBe(201);
    expect(r.headers.get('ratelimit-remaining')).toBe('2');
  });

  it('the window resets', async () => {
    expect((await work(a)).status).toBe(429);
    clock += 45_000;
    const r = await work(a);
    expect(r.status).toBe(201);
    expect(r.headers.get('ratelimit-remaining')).toBe('2');
    expect(r.headers.get('ratelimit-reset')).toBe('60');
  });

  it('ingest counts events (the cost), not requests, and refuses a batch that would overflow', async () => {
    const ingest = (n: number) => t.request('POST', `/test/${a.project.id}/ingest`, { key: a.ingestKey, body: { n } });
    let r = await ingest(7);
    expect(r.status).toBe(202);
    expect(r.headers.get('ratelimit-remaining')).toBe('3');
    r = await ingest(4);
    expect(r.status).toBe(429);
    expect(r.headers.get('ratelimit-remaining')).toBe('3');
    r = await ingest(3);
    expect(r.status).toBe(202);
    expect(r.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('requests refused before the limiter (401) do not count', async () => {
    for (let i = 0; i < 5; i++) expect((await t.request('POST', `/test/${b.project.id}/work`, { key: 'nope' })).status).toBe(401);
    const r = await work(b);
    expect(r.status).toBe(201);
    expect(r.headers.get('ratelimit-remaining')).toBe('1');
  });
});

describe('createRateLimiter', () => {
  function fakeReply() {
    const headers: Record<string, string> = {};
    return { headers: (h: Record<string, string>) => Object.assign(headers, h), sent: headers } as any;
  }
  it('keeps families apart and forgets old windows', () => {
    let now = 0;
    const rl = createRateLimiter(
      { jobs: { max: 1, windowMs: 1000 }, analyticsRead: { max: 1, windowMs: 1000 }, ingest: { max: 5, windowMs: 1000 }, signIn: { max: 1, windowMs: 1000 } },
      () => now,
    );
    rl.consume(fakeReply(), 'jobs', 'p');
    rl.consume(fakeReply(), 'analyticsRead', 'p');
    expect(() => rl.consume(fakeReply(), 'jobs', 'p')).toThrow(/Rate limit exceeded/);
    now = 999;
    expect(() => rl.consume(fakeReply(), 'jobs', 'p')).toThrow();
    now = 1000;
    const reply = fakeReply();
    rl.consume(reply, 'jobs', 'p');
    expect(reply.sent).toEqual({ 'ratelimit-limit': '1', 'ratelimit-remaining': '0', 'ratelimit-reset': '1' });
    // Long after, the sweep runs and a fresh window starts.
    now = 10 * 60_000;
    rl.consume(fakeReply(), 'ingest', 'q', 5);
    expect(() => rl.consume(fakeReply(), 'ingest', 'q', 1)).toThrow();
  });
});
