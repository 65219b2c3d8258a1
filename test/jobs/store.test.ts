// Store-level queue guarantees on both dialects: concurrent claims never hand one job to two workers,
// leases expire, renewals (and diff writes) only work for the holder.
import { afterEach, expect, it } from 'vitest';
import { toDiffView } from '../../src/jobs/diff-view.ts';
import { notifierFor } from '../../src/jobs/notify.ts';
import { createQueue } from '../../src/jobs/queue.ts';
import { createJobsStore, type JobRow } from '../../src/jobs/store.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

function job(id: string, projectId: string, t: number): JobRow {
  return {
    id,
    project_id: projectId,
    status: 'active',
    repository: 'r',
    ref: 'main',
    model: 'm/x',
    branch: `inkwell/${id}`,
    draft: 0,
    pr_url: null,
    error_code: null,
    error_message: null,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: null,
    budget: null,
    conversation: '[]',
    event_seq: 0,
    lease_owner: null,
    lease_expires_at: null,
    created_at: t,
    updated_at: t,
    archived_at: null,
  };
}

describeEachDialect('jobs store', (dialect) => {
  let t: TestDb;
  afterEach(async () => {
    await t.cleanup();
  });

  async function seed(n: number) {
    t = await openTestDb(dialect);
    await t.db.kysely
      .insertInto('projects')
      .values({ id: 'prj', name: 'n', repository: 'r', ref: 'main', model: null, settings: '{}', visitor_secret: 's', created_at: 1 })
      .execute();
    const store = createJobsStore(t.db);
    for (let i = 0; i < n; i++) await store.insertJob(job(`job_${i}`, 'prj', 1000 + i));
    return store;
  }

  it('concurrent claims (separate connections) give each job to exactly one worker', async () => {
    const store = await seed(6);
    // Several handles: on PostgreSQL these are separate connection pools, as separate processes would be.
    const stores = [store, createJobsStore(t.reopen()), createJobsStore(t.reopen())];
    const now = Date.now();
    const claims = await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % 3]!.claimJob(`w${i}`, now, 60_000)));
    const got = claims.filter((c): c is string => c !== undefined);
    expect(got.sort()).toEqual(['job_0', 'job_1', 'job_2', 'job_3', 'job_4', 'job_5']);
    expect(await store.claimJob('late', now, 60_000)).toBeUndefined();
  });

  it('leases: only the holder renews; an expired lease can be claimed by another worker; release clears it', async () => {
    const store = await seed(1);
    const t0 = Date.now();
    expect(await store.claimJob('a', t0, 1000)).toBe('job_0');
    expect(await store.claimJob('b', t0 + 500, 1000)).toBeUndefined();
    expect(await store.renewLease('job_0', 'b', t0 + 5000)).toBeUndefined();
    expect(await store.renewLease('job_0', 'a', t0 + 2000)).toBe('active');
    expect(await store.claimJob('b', t0 + 1500, 1000)).toBeUndefined(); // renewed to t0+2000
    expect(await store.claimJob('b', t0 + 2001, 1000)).toBe('job_0');
    expect(await store.renewLease('job_0', 'a', t0 + 9000)).toBeUndefined(); // a lost it
    expect(await store.releaseLease('job_0', 'a')).toBe(false);
    expect(await store.releaseLease('job_0', 'b')).toBe(true);
    expect((await store.getJobById('job_0'))!.lease_owner).toBeNull();
  });

  it('event seqs are dense and ordered under concurrent appends', async () => {
    const store = await seed(1);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.transaction(async (tx) => {
          const seq = await tx.nextEventSeq('job_0');
          await tx.insertEvent({ job_id: 'job_0', seq, type: 'tool_call', at: i, data: '{}' });
        }),
      ),
    );
    expect((await store.listEvents('job_0', 0, 100)).map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('a diff is stored only by the lease holder, replaces the one before, and is read within its project', async () => {
    const store = await seed(1);
    const t0 = Date.now();
    const queueOf = (workerId: string) => createQueue({ store, notifier: notifierFor(t.db), workerId, leaseMs: 1000, maxAttempts: 3, now: () => t0 });
    const file = { path: 'a.md', oldPath: null, status: 'modified' as const, additions: 2, deletions: 1, binary: false };
    const diff = { base: 'b'.repeat(40), head: 'c'.repeat(40), files: [file], diff: '-x\n+y\n+z\n', truncated: false };
    expect(await store.getJobDiff('prj', 'job_0')).toEqual({ diff: null });
    expect(await store.getJobDiff('other', 'job_0')).toBeUndefined();
    expect(await store.claimJob('a', t0, 1000)).toBe('job_0');
    expect(await queueOf('b').recordDiff('job_0', diff)).toBe(false);
    expect(await store.getJobDiff('prj', 'job_0')).toEqual({ diff: null });
    expect(await queueOf('a').recordDiff('job_0', diff)).toBe(true);
    expect(await queueOf('a').recordDiff('job_0', { ...diff, head: 'd'.repeat(40), truncated: true })).toBe(true);
    const stored = (await store.getJobDiff('prj', 'job_0'))!.diff!;
    expect(toDiffView(stored)).toEqual({
      base: diff.base,
      head: 'd'.repeat(40),
      files: [file],
      totals: { files: 1, additions: 2, deletions: 1 },
      diff: diff.diff,
      truncated: true,
      updatedAt: new Date(t0).toISOString(),
    });
  });
});
