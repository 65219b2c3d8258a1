// SQL for code-host deliveries: one function per query.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { CodeHostEventTables } from './tables.ts';

export type DeliveryRow = CodeHostEventTables['code_host_deliveries'];
export type ThreadRow = CodeHostEventTables['code_host_threads'];
type DeliveryKey = Pick<DeliveryRow, 'project_id' | 'host' | 'delivery_id'>;

export function createDeliveriesStore(db: Kysely<DB>) {
  return {
    /**
     * Records a delivery as being acted on; false when its id was recorded before (a redelivery). A delivery
     * still `processing` since before `staleBefore` was being acted on by a process that died: it is taken over
     * (acting again is safe: the job it creates or continues carries the delivery's idempotency key).
     */
    async claim(row: Omit<DeliveryRow, 'outcome' | 'job_id' | 'reason'>, staleBefore: number): Promise<boolean> {
      const res = await db
        .insertInto('code_host_deliveries')
        .values({ ...row, outcome: 'processing', job_id: null, reason: null })
        .onConflict((oc) => oc.columns(['project_id', 'host', 'delivery_id']).doNothing())
        .executeTakeFirst();
      if (Number(res.numInsertedOrUpdatedRows ?? 0n) === 1) return true;
      const taken = await db
        .updateTable('code_host_deliveries')
        .set({ received_at: row.received_at, event: row.event })
        .where('project_id', '=', row.project_id)
        .where('host', '=', row.host)
        .where('delivery_id', '=', row.delivery_id)
        .where('outcome', '=', 'processing')
        .where('received_at', '<', staleBefore)
        .executeTakeFirst();
      return Number(taken.numUpdatedRows) === 1;
    },

    async finish(key: DeliveryKey, outcome: string, jobId: string | null, reason: string | null): Promise<void> {
      await db
        .updateTable('code_host_deliveries')
        .set({ outcome, job_id: jobId, reason })
        .where('project_id', '=', key.project_id)
        .where('host', '=', key.host)
        .where('delivery_id', '=', key.delivery_id)
        .execute();
    },

    /** Forgets a delivery that could not be acted on (the code host was unreachable…), so a redelivery acts. */
    async release(key: DeliveryKey): Promise<void> {
      await db
        .deleteFrom('code_host_deliveries')
        .where('project_id', '=', key.project_id)
        .where('host', '=', key.host)
        .where('delivery_id', '=', key.delivery_id)
        .execute();
    },

    async get(key: DeliveryKey): Promise<DeliveryRow | undefined> {
      return db
        .selectFrom('code_host_deliveries')
        .selectAll()
        .where('project_id', '=', key.project_id)
        .where('host', '=', key.host)
        .where('delivery_id', '=', key.delivery_id)
        .executeTakeFirst();
    },

    /** Remembers (or moves) the thread a job replies in. */
    async rememberThread(row: ThreadRow): Promise<void> {
      const { job_id: _id, ...rest } = row;
      await db
        .insertInto('code_host_threads')
        .values(row)
        .onConflict((oc) => oc.column('job_id').doUpdateSet(rest))
        .execute();
    },

    async threadOf(jobId: string): Promise<ThreadRow | undefined> {
      return db.selectFrom('code_host_threads').selectAll().where('job_id', '=', jobId).executeTakeFirst();
    },
  };
}

export type DeliveriesStore = ReturnType<typeof createDeliveriesStore>;
