// The deliveries store on both databases: a delivery id is claimed once; a claim left `processing` by a process
// that stopped mid-way is taken over once it is stale, never while it may still be acted on, never once finished.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createDeliveriesStore } from '../../src/code-host-events/store.ts';
import { describeEachDialect, openTestDb, projectRow, type TestDb } from '../helpers/db.ts';

describeEachDialect('code-host deliveries store', (dialect) => {
  let t: TestDb;
  beforeEach(async () => {
    t = await openTestDb(dialect);
    await t.db.kysely
      .insertInto('projects')
      .values(projectRow('prj_a', 'A', 1))
      .execute();
  });
  afterEach(async () => t.cleanup());

  const key = { project_id: 'prj_a', host: 'github' as const, delivery_id: 'd-1' };
  const at = (received_at: number) => ({ ...key, event: 'issue_comment', received_at });

  it('claims a delivery id once; a stale processing claim is taken over, a finished one never', async () => {
    const store = createDeliveriesStore(t.db.kysely);
    expect(await store.claim(at(1_000), 0)).toBe(true);
    // A redelivery while the first is being acted on: not stale yet.
    expect(await store.claim(at(2_000), 500)).toBe(false);
    // The process died: past the stale point, one redelivery takes it over, and only one.
    expect(await store.claim(at(10_000), 5_000)).toBe(true);
    expect(await store.claim(at(10_001), 5_000)).toBe(false);
    expect((await store.get(key))?.received_at).toBe(10_000);
    await store.finish(key, 'job_started', 'job_1', null);
    expect(await store.claim(at(99_000), 90_000)).toBe(false);
    expect(await store.get(key)).toMatchObject({ outcome: 'job_started', job_id: 'job_1' });
    // A released claim (the host could not be asked) is free again at once.
    const other = { ...key, delivery_id: 'd-2' };
    expect(await store.claim({ ...other, event: 'issue_comment', received_at: 1 }, 0)).toBe(true);
    await store.release(other);
    expect(await store.claim({ ...other, event: 'issue_comment', received_at: 2 }, 0)).toBe(true);
  });
});
