// Queue and worker behaviour with an injected executor (the real one runs in e2e.test.ts): outcomes,
// queued follow-ups, archive, leases (expiry, resume, worker_lost, hand-back) and exactly-once claims.
import { afterEach, expect, it } from 'vitest';
import { RunError } from '../../src/agent/execute.ts';
import { notifierFor } from '../../src/jobs/notify.ts';
import { createQueue } from '../../src/jobs/queue.ts';
import { createJobsStore } from '../../src/jobs/store.ts';
import type { Seeded } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { type JobsTestApp, startJobsApp, waitFor, waitForStatus } from '../helpers/jobs.ts';
import { type Call, fakeExecutor, waitingStep } from './fake-executor.ts';

// Leases are generous: a lease that expires under a loaded test machine would (rightly) let another worker resume the turn.
const FAST = { INKWELL_LEASE_MS: '5000', INKWELL_POLL_INTERVAL_MS: '20', INKWELL_WORKER_CONCURRENCY: '2' };

describeEachDialect('job worker', (dialect) => {
  let t: JobsTestApp;
  let s: Seeded;
  const path = (id = '') => `/v2/agent/${s.project.id}/job${id ? `/${id}` : ''}`;
  const create = async (prompt: string) => {
    const r = await t.request('POST', path(), { key: s.adminKey, body: { prompt } });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };
  const message = async (id: string, prompt: string) => t.request('POST', `${path(id)}/message`, { key: s.adminKey, body: { prompt } });
  const events = async (id: string) =>
    (await t.request('GET', `${path(id)}/events`, { key: s.adminKey })).body.events as { seq: number; type: string; data: any }[];
  const jobRow = (id: string) => t.ctx.db.kysely.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const turns = (id: string) => t.ctx.db.kysely.selectFrom('job_turns').selectAll().where('job_id', '=', id).orderBy('turn_no').execute();

  async function setup(env: Record<string, string> = {}) {
    t = await startJobsApp(dialect, {}, { ...FAST, ...env });
    s = await t.seed();
  }
  afterEach(async () => {
    await t?.close();
  });

  it('runs a job to completed: events, usage, conversation; prLink hidden while active and shown after', async () => {
    await setup();
    const exec = fakeExecutor(async (input, call) => {
      await input.onEvent({ type: 'assistant_message', data: { text: 'editing' } });
      await input.onEvent({ type: 'pull_request', data: { url: 'https://github.com/acme/docs/pull/7' } });
      await (call as Call & { released: Promise<void> }).released;
      return { prLink: 'https://github.com/acme/docs/pull/7' };
    });
    t.startWorker(exec);
    const id = await create('Fix typo');
    await waitFor(async () => exec.calls.length === 1);
    expect((await t.request('GET', path(id), { key: s.adminKey })).body.prLink).toBeNull();
    exec.calls[0]!.release();
    const job = await waitForStatus(t, s.adminKey, s.project.id, id, ['completed']);
    expect(job.prLink).toBe('https://github.com/acme/docs/pull/7');
    expect(job.usage).toEqual({ inputTokens: 10, outputTokens: 5 });
    expect(job.error).toBeNull();
    const input = exec.calls[0]!.input;
    expect(input).toMatchObject({
      jobId: id,
      repository: s.project.repository,
      ref: 'main',
      branch: job.branch,
      model: job.model,
      draft: false,
      prompt: 'Fix typo',
      history: [],
    });
    const ev = await events(id);
    expect(ev.map((e) => e.seq)).toEqual(ev.map((_, i) => i + 1));
    expect(ev.map((e) => e.type)).toEqual(['status', 'user_message', 'status', 'assistant_message', 'pull_request', 'status']);
    expect(ev[2]!.data).toMatchObject({ status: 'active', phase: 'running', turn: 1, attempt: 1 });
    expect(ev[5]!.data).toMatchObject({ status: 'completed', prLink: 'https://github.com/acme/docs/pull/7' });
    const row = await jobRow(id);
    expect(JSON.parse(row.conversation)).toEqual([
      { role: 'user', content: 'Fix typo' },
      { role: 'assistant', content: 'done: Fix typo' },
    ]);
    expect(row.lease_owner).toBeNull();

    // A follow-up: active again with prLink null, the history carries the first turn, then the PR is back.
    const m = await message(id, 'Also fix the heading');
    expect(m.body).toMatchObject({ status: 'active', prLink: null });
    await waitFor(async () => exec.calls.length === 2);
    expect(exec.calls[1]!.input.history).toEqual(JSON.parse(row.conversation));
    exec.calls[1]!.release();
    const again = await waitForStatus(t, s.adminKey, s.project.id, id, ['completed']);
    expect(again.prLink).toBe('https://github.com/acme/docs/pull/7');
    expect(again.usage).toEqual({ inputTokens: 20, outputTokens: 10 });
  });

  it('a RunError fails the job with its code and message; a crash fails it with internal_error; never stuck active', async () => {
    await setup();
    const exec = fakeExecutor(async (input) => {
      if (input.prompt === 'model down') {
        const e = new RunError('model_error', 'The model call failed: HTTP 500');
        e.usage = { inputTokens: 3, outputTokens: 0 };
        throw e;
      }
      throw new Error('boom at /secret/path with Bearer abc.def');
    });
    t.startWorker(exec);
    const a = await create('model down');
    const b = await create('crash');
    const ja = await waitForStatus(t, s.adminKey, s.project.id, a, ['failed']);
    expect(ja.error).toEqual({ code: 'model_error', message: 'The model call failed: HTTP 500' });
    expect(ja.usage).toEqual({ inputTokens: 3, outputTokens: 0 });
    expect(ja.prLink).toBeNull();
    const jb = await waitForStatus(t, s.adminKey, s.project.id, b, ['failed']);
    expect(jb.error.code).toBe('internal_error');
    expect(JSON.stringify(jb)).not.toContain('/secret/path');
    const ev = await events(a);
    expect(ev.map((e) => e.type).slice(-2)).toEqual(['error', 'status']);
    expect(ev.at(-1)!.data).toMatchObject({ status: 'failed', error: { code: 'model_error' } });

    // failed → active on a message; the error clears.
    const m = await message(a, 'try again');
    expect(m.body).toMatchObject({ status: 'active', error: null });
  });

  it('completed, failed and archived queue a webhook delivery in the same transaction (project with a webhook)', async () => {
    await setup();
    await t.ctx.projects.updateSettings(s.project.id, { webhook: { url: 'https://hooks.example.com/inkwell', secret: 'whsec_dGVzdA==' } });
    const exec = fakeExecutor(async (input) => {
      if (input.prompt === 'bad') throw new RunError('model_error', 'down');
      return undefined;
    });
    t.startWorker(exec);
    const ok = await create('good');
    const bad = await create('bad');
    await waitForStatus(t, s.adminKey, s.project.id, ok, ['completed']);
    await waitForStatus(t, s.adminKey, s.project.id, bad, ['failed']);
    await t.request('POST', `${path(ok)}/archive`, { key: s.adminKey });
    const rows = await t.ctx.db.kysely.selectFrom('webhook_deliveries').selectAll().where('project_id', '=', s.project.id).execute();
    const byJob = rows.map((r) => {
      const p = JSON.parse(r.payload);
      return [p.data.job.id, r.event_type, p.data.job.status];
    });
    expect(byJob).toEqual(
      expect.arrayContaining([
        [ok, 'job.completed', 'completed'],
        [bad, 'job.failed', 'failed'],
        [ok, 'job.archived', 'archived'],
      ]),
    );
    expect(rows).toHaveLength(3);
  });

  it('messages sent during a run are queued and run in order after it, each exactly once', async () => {
    await setup({ INKWELL_WORKER_CONCURRENCY: '3' });
    const exec = fakeExecutor(waitingStep());
    t.startWorker(exec);
    t.startWorker(exec); // a second worker must not pick up the queued turns while the first runs
    const id = await create('turn 1');
    await waitFor(async () => exec.calls.length === 1);
    for (const p of ['turn 2', 'turn 3', 'turn 4']) {
      const r = await message(id, p);
      expect(r.status).toBe(200);
      expect(r.body.status).toBe('active');
    }
    await new Promise((r) => setTimeout(r, 150));
    expect(exec.calls).toHaveLength(1); // one run at a time per job
    for (let i = 0; i < 4; i++) {
      await waitFor(async () => exec.calls.length === i + 1);
      exec.calls[i]!.release();
    }
    const job = await waitForStatus(t, s.adminKey, s.project.id, id, ['completed']);
    expect(exec.prompts()).toEqual(['turn 1', 'turn 2', 'turn 3', 'turn 4']);
    // Each turn saw the conversation of the turns before it.
    expect(exec.calls.map((c) => c.input.history.length)).toEqual([0, 2, 4, 6]);
    expect((await turns(id)).map((x) => [x.turn_no, x.status, Number(x.attempts)])).toEqual([
      [1, 'done', 1],
      [2, 'done', 1],
      [3, 'done', 1],
      [4, 'done', 1],
    ]);
    expect(job.usage.inputTokens).toBe(40);
    const statuses = (await events(id)).filter((e) => e.type === 'status' && e.data.status !== 'active').map((e) => e.data.status);
    expect(statuses).toEqual(['completed']); // active throughout, completed once at the end
  });

  it('archive stops an active run; no further executor call', async () => {
    await setup();
    const exec = fakeExecutor(waitingStep());
    t.startWorker(exec);
    const id = await create('long job');
    await waitFor(async () => exec.calls.length === 1);
    await message(id, 'queued follow-up');
    const a = await t.request('POST', `${path(id)}/archive`, { key: s.adminKey });
    expect(a.body.status).toBe('archived');
    // The run never ends by itself (waitingStep): only the archive can abort it.
    await waitFor(async () => exec.aborted.includes(id));
    await waitFor(async () => (await jobRow(id)).lease_owner === null);
    await new Promise((r) => setTimeout(r, 300));
    expect(exec.calls).toHaveLength(1);
    const row = await jobRow(id);
    expect(row.status).toBe('archived');
    expect((await turns(id)).map((x) => x.status)).toEqual(['cancelled', 'cancelled']);
  });

  it('a worker that stops mid-run hands the lease back; another worker resumes without counting an attempt', async () => {
    await setup();
    const first = fakeExecutor(waitingStep());
    const w1 = t.startWorker(first);
    const id = await create('resume me');
    await waitFor(async () => first.calls.length === 1);
    await w1.stop();
    await w1.stop(); // idempotent
    expect(first.aborted).toEqual([id]);
    const row = await jobRow(id);
    expect(row.status).toBe('active');
    expect(row.lease_owner).toBeNull();
    expect((await turns(id))[0]).toMatchObject({ status: 'queued', attempts: 0 });
    const second = fakeExecutor();
    t.startWorker(second);
    await waitForStatus(t, s.adminKey, s.project.id, id, ['completed']);
    expect(second.calls).toHaveLength(1);
    expect(second.calls[0]!.input.prompt).toBe('resume me');
    expect((await turns(id))[0]).toMatchObject({ status: 'done', attempts: 1 });
  });

  it('an expired lease (dead worker) is resumed from the stored conversation; after 3 lost attempts → failed worker_lost', async () => {
    await setup();
    const store = createJobsStore(t.ctx.db);
    const deadClaim = async (n: number) => {
      const q = createQueue({ store, notifier: notifierFor({}), workerId: `dead-${n}`, leaseMs: 100, maxAttempts: 3, now: Date.now });
      return q.claimNext();
    };
    // A job that completed one turn, then got a follow-up whose worker died.
    const id = await create('first');
    const done = fakeExecutor();
    const w = t.startWorker(done);
    await waitForStatus(t, s.adminKey, s.project.id, id, ['completed']);
    await w.stop();
    await message(id, 'second');
    const c1 = await deadClaim(1);
    expect(c1.kind).toBe('claimed');
    await new Promise((r) => setTimeout(r, 150)); // lease expires; the dead worker never renews
    const resumed = fakeExecutor();
    const w2 = t.startWorker(resumed);
    await waitForStatus(t, s.adminKey, s.project.id, id, ['completed']);
    expect(resumed.calls).toHaveLength(1);
    expect(resumed.calls[0]!.input.prompt).toBe('second');
    expect(resumed.calls[0]!.input.history).toEqual([
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'done: first' },
    ]);
    expect((await turns(id))[1]).toMatchObject({ status: 'done', attempts: 2 });
    await w2.stop();

    // Three lost attempts in a row → worker_lost on the next claim.
    const lost = await create('doomed');
    for (let n = 1; n <= 3; n++) {
      const c = await deadClaim(10 + n);
      expect(c.kind).toBe('claimed');
      await new Promise((r) => setTimeout(r, 150));
    }
    const never = fakeExecutor();
    t.startWorker(never);
    const job = await waitForStatus(t, s.adminKey, s.project.id, lost, ['failed']);
    expect(job.error.code).toBe('worker_lost');
    expect(never.calls).toHaveLength(0);
    expect((await events(lost)).some((e) => e.type === 'error' && e.data.code === 'worker_lost')).toBe(true);
  });

  it('a worker whose lease was taken over stops its run and records nothing', async () => {
    await setup();
    const exec = fakeExecutor(waitingStep());
    t.startWorker(exec);
    const id = await create('contested');
    await waitFor(async () => exec.calls.length === 1);
    // Another worker steals the lease (as if this one had been presumed dead).
    await t.ctx.db.kysely
      .updateTable('jobs')
      .set({ lease_owner: 'thief', lease_expires_at: Date.now() + 60_000 })
      .where('id', '=', id)
      .execute();
    await waitFor(async () => exec.aborted.includes(id));
    await new Promise((r) => setTimeout(r, 100));
    const row = await jobRow(id);
    expect(row.lease_owner).toBe('thief');
    expect(row.status).toBe('active');
  });

  it('two workers and 20 jobs: every job runs exactly once', async () => {
    await setup({ INKWELL_WORKER_CONCURRENCY: '3' });
    const exec = fakeExecutor(async (input) => {
      await input.onEvent({ type: 'assistant_message', data: { text: input.jobId } });
      await new Promise((r) => setTimeout(r, 10));
      return undefined;
    });
    t.startWorker(exec);
    t.startWorker(exec);
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => create(`job ${i}`)));
    await waitFor(async () => {
      const r = await t.request('GET', `/v2/agent/${s.project.id}/jobs?status=completed&limit=100`, { key: s.adminKey });
      return r.body.jobs.length === 20;
    });
    const runs = exec.calls.map((c) => c.input.jobId).sort();
    expect(runs).toEqual([...ids].sort());
    const attempts = await t.ctx.db.kysely.selectFrom('job_turns').select('attempts').execute();
    expect(attempts.map((a) => Number(a.attempts))).toEqual(Array(20).fill(1));
  });
});
