// SQL for webhook deliveries: one function per query.
import type { Kysely } from 'kysely';
import type { DialectCaps } from '../db/dialect.ts';
import type { DB } from '../db/schema.ts';
import type { WebhookDeliveryStatus, WebhookTables } from './webhook-tables.ts';

export type DeliveryRow = WebhookTables['webhook_deliveries'];

export function createWebhookStore(db: Kysely<DB>, caps: Pick<DialectCaps, 'skipLocked'>) {
  return {
    async insertDelivery(row: DeliveryRow): Promise<void> {
      await db.insertInto('webhook_deliveries').values(row).execute();
    },

    async getDelivery(id: string): Promise<DeliveryRow | undefined> {
      return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
    },

    /**
     * Claims up to `limit` due deliveries in one statement: counts the attempt and pushes
     * next_attempt_at to `leaseUntil`, so a dispatcher that dies mid-attempt only delays the retry.
     * On engines with SKIP LOCKED, concurrent dispatchers never claim the same row.
     */
    async claimDue(now: number, leaseUntil: number, limit: number): Promise<DeliveryRow[]> {
      return db
        .updateTable('webhook_deliveries')
        .set((eb) => ({ attempts: eb('attempts', '+', 1), next_attempt_at: leaseUntil, updated_at: now }))
        .where('id', 'in', (eb) => {
          const due = eb
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('status', '=', 'pending')
            .where('next_attempt_at', '<=', now)
            .orderBy('next_attempt_at')
            .limit(limit);
          return caps.skipLocked ? due.forUpdate().skipLocked() : due;
        })
        .where('status', '=', 'pending')
        .returningAll()
        .execute();
    },

    /** Records the end of an attempt; a no-op when another claim has since taken the row (fencing on attempts). */
    async finishAttempt(
      id: string,
      attempts: number,
      patch: {
        status: WebhookDeliveryStatus;
        next_attempt_at: number | null;
        last_status_code: number | null;
        last_error: string | null;
        delivered_at: number | null;
        updated_at: number;
      },
    ): Promise<boolean> {
      const r = await db
        .updateTable('webhook_deliveries')
        .set(patch)
        .where('id', '=', id)
        .where('attempts', '=', attempts)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    /**
     * Queues a finished delivery (delivered, failed or cancelled) of the project again, due now, as if it were new:
     * attempts and the retry window start over (created_at). Same id, so the receiver can tell it is the same
     * event. Returns false when there is no such finished delivery.
     */
    /** Queues a finished delivery again; returns the columns it set, or null when it was still pending. */
    async requeueDelivery(id: string, projectId: string, now: number) {
      const set = { status: 'pending' as const, attempts: 0, next_attempt_at: now, delivered_at: null, created_at: now, updated_at: now };
      const r = await db
        .updateTable('webhook_deliveries')
        .set(set)
        .where('id', '=', id)
        .where('project_id', '=', projectId)
        .where('status', '!=', 'pending')
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0 ? set : null;
    },

    async listDeliveries(projectId: string, limit: number, status?: WebhookDeliveryStatus): Promise<DeliveryRow[]> {
      let q = db.selectFrom('webhook_deliveries').selectAll().where('project_id', '=', projectId);
      if (status) q = q.where('status', '=', status);
      return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    },
  };
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;
