// The typed client against a real server and worker (injected executor), and the live event stream:
// a client connecting mid-run and one reconnecting with Last-Event-ID each get every event exactly
// once, in order — also when the SSE endpoint is served by another "process" (its own database
// handle, no in-process notifications) than the worker.
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { ApiError, createClient, type InkwellClient, type JobEvent } from '../../src/client/index.ts';
import { SseParser } from '../../src/client/sse.ts';
import { createContext } from '../../src/context.ts';
import { buildApp } from '../../src/http/app.ts';
import { createLogger } from '../../src/lib/logger.ts';
import type { Seeded } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { type JobsTestApp, startJobsApp, waitFor } from '../helpers/jobs.ts';
import { type Call, fakeExecutor } from '../jobs/fake-executor.ts';

describeEachDialect('typed client and live events', (dialect) => {
  let t: JobsTestApp;
  let s: Seeded;
  let client: InkwellClient;
  const closers: (() => Promise<void>)[] = [];

  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
    await t.close();
  });

  async function setup() {
    t = await startJobsApp(dialect, {}, { INKWELL_POLL_INTERVAL_MS: '20', INKWELL_LEASE_MS: '5000' });
    s = await t.seed();
    client = createClient({ baseUrl: t.baseUrl, key: s.adminKey });
  }

  it('create, get, message, list, archive, events; errors as ApiError with code and details', async () => {
    await setup();
    const exec = fakeExecutor();
    t.startWorker(exec);
    const job = await client.createJob(s.project.id, { prompt: 'Hello', draft: true }, { idempotencyKey: 'k1' });
    expect(job.status).toBe('active');
    expect((await client.createJob(s.project.id, { prompt: 'Hello', draft: true }, { idempotencyKey: 'k1' })).id).toBe(job.id);
    await waitFor(async () => (await client.getJob(s.project.id, job.id)).status === 'completed');
    expect(exec.calls[0]!.input.draft).toBe(true);
    const m = await client.sendMessage(s.project.id, job.id, 'More');
    expect(m.status).toBe('active');
    await waitFor(async () => (await client.getJob(s.project.id, job.id)).status === 'completed');
    const list = await client.listJobs(s.project.id, { limit: 1 });
    expect(list).toMatchObject({ hasMore: false, nextCursor: null });
    expect(list.jobs[0]!.id).toBe(job.id);
    const ev = await client.events(s.project.id, job.id, { after: 1 });
    expect(ev.events[0]!.seq).toBe(2);
    const archived = await client.archiveJob(s.project.id, job.id);
    expect(archived.status).toBe('archived');

    const e1 = await client.sendMessage(s.project.id, job.id, 'x').catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(ApiError);
    expect(e1).toMatchObject({ status: 409, code: 'job_archived' });
    const e2 = (await client.createJob(s.project.id, { prompt: '' }).catch((e: unknown) => e)) as ApiError;
    expect(e2).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(e2.details[0]!.path).toBe('prompt');
    expect(e2.requestId).toBeTruthy();
    const e3 = await createClient({ baseUrl: t.baseUrl, key: 'ink_wrong' })
      .getJob(s.project.id, job.id)
      .catch((e: unknown) => e);
    expect(e3).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  for (const where of ['same process', 'another API process'] as const) {
    it(`SSE (${where}): mid-run connect and Last-Event-ID reconnect each get every event exactly once, in order`, async () => {
      await setup();
      let baseUrl = t.baseUrl;
      if (where === 'another API process') {
        // Its own database handle: no in-process notifications reach it; it must poll the events table.
        const db = t.testDb.reopen();
        const app2 = await buildApp(createContext(t.ctx.config, db, createLogger(t.ctx.config)));
        await app2.listen({ host: '127.0.0.1', port: 0 });
        closers.push(() => app2.close());
        baseUrl = `http://127.0.0.1:${(app2.server.address() as AddressInfo).port}`;
      }
      const exec = fakeExecutor(async (input, call) => {
        for (let i = 1; i <= 5; i++) await input.onEvent({ type: 'tool_call', data: { tool: 'read_file', args: { path: `a${i}.md` } } });
        await (call as Call & { released: Promise<void> }).released;
        for (let i = 6; i <= 30; i++) {
          await input.onEvent({ type: i % 2 ? 'tool_call' : 'tool_result', data: { tool: 'read_file', i } });
          if (i % 5 === 0) await new Promise((r) => setTimeout(r, 15));
        }
        return { prLink: 'https://github.com/acme/docs/pull/1' };
      });
      t.startWorker(exec);
      const sseClient = createClient({ baseUrl, key: s.adminKey });
      const job = await client.createJob(s.project.id, { prompt: 'Stream me' });
      await waitFor(async () => (await client.events(s.project.id, job.id)).events.length >= 8); // mid-run

      // Client A: connects now, from the beginning.
      const a: JobEvent[] = [];
      const ca = new AbortController();
      const aDone = (async () => {
        for await (const e of sseClient.streamEvents(s.project.id, job.id, { signal: ca.signal })) {
          a.push(e);
          if (e.type === 'status' && e.data.status === 'completed') ca.abort();
        }
      })();

      // Client B: raw SSE; reads 4 events, disconnects, reconnects with Last-Event-ID.
      const b: number[] = [];
      const readRaw = async (lastEventId: string | null, max: number) => {
        const ctl = new AbortController();
        const res = await fetch(`${baseUrl}/v2/agent/${s.project.id}/job/${job.id}/events`, {
          headers: { authorization: `Bearer ${s.adminKey}`, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
          signal: ctl.signal,
        });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toContain('text/event-stream');
        const parser = new SseParser();
        const dec = new TextDecoder();
        let n = 0;
        let done = false;
        try {
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
            for (const m of parser.push(dec.decode(chunk, { stream: true }))) {
              const e = JSON.parse(m.data) as JobEvent;
              expect(m.id).toBe(String(e.seq));
              expect(m.event).toBe(e.type);
              b.push(e.seq);
              n++;
              if ((e.type === 'status' && e.data.status === 'completed') || n >= max) done = true;
              if (done) break;
            }
            if (done) break;
          }
        } finally {
          ctl.abort();
        }
        return b.at(-1) ?? 0;
      };
      const lastSeen = await readRaw(null, 4);
      exec.calls[0]!.release();
      await new Promise((r) => setTimeout(r, 30)); // events happen while B is away
      await readRaw(String(lastSeen), 10_000);
      await aDone;

      const all = (await client.events(s.project.id, job.id)).events.map((e) => e.seq);
      expect(all).toEqual(all.map((_, i) => i + 1));
      expect(all.length).toBeGreaterThan(30);
      expect(a.map((e) => e.seq)).toEqual(all);
      expect(b).toEqual(all);
    });
  }

  it('SSE: 404 for an unknown job before any stream; 400 for a bad Last-Event-ID; the stream closes when the server closes', async () => {
    await setup();
    const r = await fetch(`${t.baseUrl}/v2/agent/${s.project.id}/job/job_nope/events`, {
      headers: { authorization: `Bearer ${s.adminKey}`, accept: 'text/event-stream' },
    });
    expect(r.status).toBe(404);
    expect((await r.json()).code).toBe('job_not_found');
    const job = await client.createJob(s.project.id, { prompt: 'x' });
    const bad = await fetch(`${t.baseUrl}/v2/agent/${s.project.id}/job/${job.id}/events`, {
      headers: { authorization: `Bearer ${s.adminKey}`, accept: 'text/event-stream', 'last-event-id': 'abc' },
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).details[0].path).toBe('Last-Event-ID');
    // An open stream does not keep the server from closing.
    const open = await fetch(`${t.baseUrl}/v2/agent/${s.project.id}/job/${job.id}/events`, {
      headers: { authorization: `Bearer ${s.adminKey}`, accept: 'text/event-stream' },
    });
    expect(open.status).toBe(200);
    const reader = (open.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    // A stream that held the server open would keep this close waiting for as long as the stream lasts.
    await t.app.close();
    let ended = false;
    for (let i = 0; i < 20 && !ended; i++) ended = (await reader.read()).done;
    expect(ended).toBe(true);
  });
});
