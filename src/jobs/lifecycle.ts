// Status changes inside a transaction: the row update, its `status` event and, for completed / failed /
// archived, the webhook outbox row — all committed together.
import { appendEvent } from './events.ts';
import type { JobStatus } from './state.ts';
import type { JobRow, JobsStoreQueries } from './store.ts';
import { toJobView } from './view.ts';
import { enqueueWebhook } from './webhooks.ts';

export type JobPatch = Partial<Omit<JobRow, 'id' | 'project_id' | 'created_at' | 'status'>>;

const WEBHOOK_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'archived'];

/** Sets the job's status (and `patch`), records a `status` event and queues the webhook; returns the new row. */
export async function changeStatus(
  tx: JobsStoreQueries,
  row: JobRow,
  to: JobStatus,
  patch: JobPatch,
  at: number,
  eventData: Record<string, unknown> = {},
): Promise<JobRow> {
  const next: JobRow = { ...row, ...patch, status: to, updated_at: at };
  await tx.updateJob(row.id, { ...patch, status: to, updated_at: at });
  const view = toJobView(next);
  await appendEvent(tx, row.id, 'status', { status: to, prLink: view.prLink, error: view.error, ...eventData }, at);
  if (WEBHOOK_STATUSES.includes(to)) {
    await enqueueWebhook(tx.kysely, row.project_id, { type: `job.${to}` as 'job.completed' | 'job.failed' | 'job.archived', data: { job: view } }, at);
  }
  return next;
}
