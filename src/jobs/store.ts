// SQL for jobs, turns, events and idempotency keys: one function per query. Dialect differences are
// capability flags (caps.skipLocked, caps.concurrentWriters), never dialect names.
import type { Kysely, Selectable } from 'kysely';
import type { DialectCaps } from '../db/dialect.ts';
import type { Database } from '../db/index.ts';
import { reusableQuery } from '../db/reusable.ts';
import type { DB } from '../db/schema.ts';
import type { KeyAuthRow } from '../projects/store.ts';
import { MAX_EVENT_SEQ } from './events.ts';
import type { JobsTables } from './tables.ts';

export type JobRow = Selectable<JobsTables['jobs']>;
export type TurnRow = Selectable<JobsTables['job_turns']>;
export type EventRow = Selectable<JobsTables['job_events']>;
export type IdempotencyRow = Selectable<JobsTables['idempotency_keys']>;
export type JobDiffRow = Selectable<JobsTables['job_diffs']>;

export type TurnStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
const PENDING: TurnStatus[] = ['queued', 'running'];

export interface ListCursor {
  createdAt: number;
  id: string;
}

/** The columns the API's job object is made of (not the conversation, which grows with every turn). */
export const JOB_VIEW_COLUMNS = [
  'id',
  'status',
  'repository',
  'ref',
  'model',
  'pr_url',
  'created_at',
  'archived_at',
  'branch',
  'updated_at',
  'error_code',
  'error_message',
  'input_tokens',
  'output_tokens',
  'cost_usd',
] as const;
export type JobViewRow = Pick<JobRow, (typeof JOB_VIEW_COLUMNS)[number]>;

// GET job (the API's hot read), compiled once.
const jobViewInProject = reusableQuery<[projectId: string, id: string], JobViewRow>('job_view_in_project', 2, (db: Kysely<DB>, projectId, id) =>
  db.selectFrom('jobs').select(JOB_VIEW_COLUMNS).where('id', '=', id).where('project_id', '=', projectId),
);

/** GET job's single read: the presented key's auth columns and, when it exists in that project, the job. */
export interface JobViewForKey {
  key: KeyAuthRow;
  job: JobViewRow | undefined;
}

// The key (by hash, unique) left-joined with the job (by primary key and project): one statement, one
// round trip on PostgreSQL, for authentication and the read. Key columns are aliased key_*. Batchable: on
// PostgreSQL the GETs that arrive while one is in flight are read together by the next statement
// (src/db/reusable.ts), each caller getting its own row.
const keyAndJobView = reusableQuery<[hash: string, projectId: string, id: string], Record<string, unknown>>(
  'key_and_job_view',
  3,
  (db: Kysely<DB>, hash, projectId, id) =>
    db
      .selectFrom('api_keys')
      .leftJoin('jobs', (join) => join.on('jobs.id', '=', id).on('jobs.project_id', '=', projectId))
      .select([
        'api_keys.id as key_id',
        'api_keys.project_id as key_project_id',
        'api_keys.kind as key_kind',
        'api_keys.last_used_at as key_last_used_at',
        'api_keys.revoked_at as key_revoked_at',
        ...JOB_VIEW_COLUMNS.map((c) => `jobs.${c}` as const),
      ])
      .where('api_keys.hash', '=', hash),
  ['text', 'text', 'text'],
);

function storeOver(db: Kysely<DB>, caps: DialectCaps) {
  return {
    /** The handle these queries run on (a transaction inside `transaction`), for status hooks of other stores. */
    kysely: db,

    // ---- jobs ----------------------------------------------------------------------------------
    async insertJob(row: JobsTables['jobs']): Promise<void> {
      await db.insertInto('jobs').values(row).execute();
    },

    async getJob(projectId: string, id: string): Promise<JobRow | undefined> {
      return db.selectFrom('jobs').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
    },

    /** The key with this hash (undefined: unknown) and the job `id` of `projectId` (undefined: none), in one query. */
    async getJobViewForKey(keyHash: string, projectId: string, id: string): Promise<JobViewForKey | undefined> {
      const r = (await keyAndJobView(db, keyHash, projectId, id))[0];
      if (!r) return undefined;
      const key = {
        id: r.key_id,
        project_id: r.key_project_id,
        kind: r.key_kind,
        last_used_at: r.key_last_used_at,
        revoked_at: r.key_revoked_at,
      } as KeyAuthRow;
      // The row carries every view column under its own name (and the key_* ones, which views ignore).
      return { key, job: r.id === null || r.id === undefined ? undefined : (r as unknown as JobViewRow) };
    },

    /** What the API shows of a job of this project (the hot read of GET job). */
    async getJobView(projectId: string, id: string): Promise<JobViewRow | undefined> {
      return (await jobViewInProject(db, projectId, id))[0];
    },

    /** The project's job whose pull request is at `prUrl` (the newest, should several share it). */
    async findJobIdByPullRequest(projectId: string, prUrl: string): Promise<string | undefined> {
      const r = await db
        .selectFrom('jobs')
        .select('id')
        .where('project_id', '=', projectId)
        .where('pr_url', '=', prUrl)
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      return r?.id;
    },

    async getJobById(id: string): Promise<JobRow | undefined> {
      return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    },

    /**
     * Reads the job and holds its row lock until the transaction ends. With row locks
     * (concurrentWriters) this is SELECT … FOR UPDATE; on a single-writer database a no-op UPDATE …
     * RETURNING takes the write lock up front, so the transaction never has to upgrade a read lock.
     */
    async lockJob(projectId: string | null, id: string): Promise<JobRow | undefined> {
      if (caps.concurrentWriters) {
        let q = db.selectFrom('jobs').selectAll().where('id', '=', id);
        if (projectId !== null) q = q.where('project_id', '=', projectId);
        return q.forUpdate().executeTakeFirst();
      }
      let u = db
        .updateTable('jobs')
        .set((eb) => ({ id: eb.ref('id') }))
        .where('id', '=', id);
      if (projectId !== null) u = u.where('project_id', '=', projectId);
      return u.returningAll().executeTakeFirst();
    },

    /** Newest first, keyset-paginated on (created_at, id). */
    async listJobs(projectId: string, opts: { status?: string; cursor?: ListCursor; limit: number }): Promise<JobRow[]> {
      let q = db.selectFrom('jobs').selectAll().where('project_id', '=', projectId);
      if (opts.status) q = q.where('status', '=', opts.status);
      const c = opts.cursor;
      if (c) q = q.where((eb) => eb.or([eb('created_at', '<', c.createdAt), eb.and([eb('created_at', '=', c.createdAt), eb('id', '<', c.id)])]));
      return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit).execute();
    },

    async updateJob(id: string, patch: Partial<Omit<JobsTables['jobs'], 'id' | 'project_id' | 'created_at'>>): Promise<void> {
      await db.updateTable('jobs').set(patch).where('id', '=', id).execute();
    },

    /**
     * Claims one active job whose lease is free or expired. On PostgreSQL the candidate row is taken
     * with FOR UPDATE SKIP LOCKED so concurrent workers never pick the same job; on a single-writer
     * database the one statement is atomic.
     */
    async claimJob(workerId: string, now: number, leaseMs: number): Promise<string | undefined> {
      const candidate = () => {
        const q = db
          .selectFrom('jobs')
          .select('id')
          .where('status', '=', 'active')
          .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
          .orderBy('updated_at')
          .orderBy('id')
          .limit(1);
        return caps.skipLocked ? q.forUpdate().skipLocked() : q;
      };
      const row = await db
        .updateTable('jobs')
        .set({ lease_owner: workerId, lease_expires_at: now + leaseMs })
        .where('id', '=', candidate())
        .where('status', '=', 'active')
        .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
        .returning('id')
        .executeTakeFirst();
      return row?.id;
    },

    /** Extends the lease if this worker still holds it; returns the job's status, or undefined when the lease is lost. */
    async renewLease(id: string, workerId: string, until: number): Promise<string | undefined> {
      const row = await db
        .updateTable('jobs')
        .set({ lease_expires_at: until })
        .where('id', '=', id)
        .where('lease_owner', '=', workerId)
        .returning('status')
        .executeTakeFirst();
      return row?.status;
    },

    /** Clears the lease if this worker holds it. */
    async releaseLease(id: string, workerId: string): Promise<boolean> {
      const r = await db
        .updateTable('jobs')
        .set({ lease_owner: null, lease_expires_at: null })
        .where('id', '=', id)
        .where('lease_owner', '=', workerId)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    /** Takes the next event number of a job (the row stays locked until the transaction ends, so events become visible in order). */
    async nextEventSeq(jobId: string): Promise<number> {
      const row = await db
        .updateTable('jobs')
        .set((eb) => ({ event_seq: eb('event_seq', '+', 1) }))
        .where('id', '=', jobId)
        .returning('event_seq')
        .executeTakeFirstOrThrow();
      return Number(row.event_seq);
    },

    // ---- turns ---------------------------------------------------------------------------------
    async maxTurnNo(jobId: string): Promise<number> {
      const row = await db
        .selectFrom('job_turns')
        .select((eb) => eb.fn.max('turn_no').as('m'))
        .where('job_id', '=', jobId)
        .executeTakeFirst();
      return Number(row?.m ?? 0);
    },

    async insertTurn(row: { job_id: string; turn_no: number; prompt: string; created_at: number }): Promise<void> {
      await db
        .insertInto('job_turns')
        .values({ ...row, status: 'queued', attempts: 0, started_at: null, finished_at: null })
        .execute();
    },

    /** The first turn not yet finished (queued or running), in turn order. */
    async nextPendingTurn(jobId: string): Promise<TurnRow | undefined> {
      return db.selectFrom('job_turns').selectAll().where('job_id', '=', jobId).where('status', 'in', PENDING).orderBy('turn_no').limit(1).executeTakeFirst();
    },

    async countPendingTurns(jobId: string): Promise<number> {
      const row = await db
        .selectFrom('job_turns')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('job_id', '=', jobId)
        .where('status', 'in', PENDING)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    async listTurns(jobId: string): Promise<TurnRow[]> {
      return db.selectFrom('job_turns').selectAll().where('job_id', '=', jobId).orderBy('turn_no').execute();
    },

    async startTurn(turnId: number, now: number): Promise<void> {
      await db
        .updateTable('job_turns')
        .set((eb) => ({ status: 'running', attempts: eb('attempts', '+', 1), started_at: now }))
        .where('id', '=', turnId)
        .execute();
    },

    async finishTurn(turnId: number, status: TurnStatus, now: number): Promise<void> {
      await db.updateTable('job_turns').set({ status, finished_at: now }).where('id', '=', turnId).execute();
    },

    /** A graceful stop: the turn goes back to the queue and the attempt does not count. */
    async handBackTurn(turnId: number): Promise<void> {
      await db
        .updateTable('job_turns')
        .set((eb) => ({ status: 'queued', attempts: eb('attempts', '-', 1) }))
        .where('id', '=', turnId)
        .where('status', '=', 'running')
        .execute();
    },

    /** Adds tokens to a turn's usage (the project's daily budget counts turns). */
    async addTurnUsage(turnId: number, usage: { inputTokens: number; outputTokens: number }): Promise<void> {
      if (usage.inputTokens === 0 && usage.outputTokens === 0) return;
      await db
        .updateTable('job_turns')
        .set((eb) => ({ input_tokens: eb('input_tokens', '+', usage.inputTokens), output_tokens: eb('output_tokens', '+', usage.outputTokens) }))
        .where('id', '=', turnId)
        .execute();
    },

    /** Input + output tokens of the project's turns that finished in [from, to). */
    async projectTokensBetween(projectId: string, from: number, to: number): Promise<number> {
      const row = await db
        .selectFrom('job_turns')
        .innerJoin('jobs', 'jobs.id', 'job_turns.job_id')
        .select((eb) => eb.fn.sum<number | string | null>(eb('job_turns.input_tokens', '+', eb.ref('job_turns.output_tokens'))).as('n'))
        .where('jobs.project_id', '=', projectId)
        .where('job_turns.finished_at', '>=', from)
        .where('job_turns.finished_at', '<', to)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    async cancelPendingTurns(jobId: string, now: number): Promise<void> {
      await db.updateTable('job_turns').set({ status: 'cancelled', finished_at: now }).where('job_id', '=', jobId).where('status', 'in', PENDING).execute();
    },

    // ---- events --------------------------------------------------------------------------------
    async insertEvent(row: { job_id: string; seq: number; type: string; at: number; data: string }): Promise<void> {
      await db.insertInto('job_events').values(row).execute();
    },

    /** Events with seq > afterSeq; an afterSeq beyond what the column holds finds none (never an out-of-range error). */
    async listEvents(jobId: string, afterSeq: number, limit: number): Promise<EventRow[]> {
      if (afterSeq >= MAX_EVENT_SEQ) return [];
      return db.selectFrom('job_events').selectAll().where('job_id', '=', jobId).where('seq', '>', afterSeq).orderBy('seq').limit(limit).execute();
    },

    /** The last event seq handed out for a job of this project (undefined: no such job). */
    async getEventSeq(projectId: string, id: string): Promise<number | undefined> {
      const row = await db.selectFrom('jobs').select('event_seq').where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
      return row === undefined ? undefined : Number(row.event_seq);
    },

    // ---- diffs ---------------------------------------------------------------------------------
    /** Stores the job's diff, replacing the one before. */
    async saveJobDiff(row: JobDiffRow): Promise<void> {
      const { job_id: _, ...rest } = row;
      await db
        .insertInto('job_diffs')
        .values(row)
        .onConflict((oc) => oc.column('job_id').doUpdateSet(rest))
        .execute();
    },

    /** The job of this project (undefined: none) and its stored diff (null: none yet), in one query. */
    async getJobDiff(projectId: string, id: string): Promise<{ diff: JobDiffRow | null } | undefined> {
      const r = await db
        .selectFrom('jobs')
        .leftJoin('job_diffs', 'job_diffs.job_id', 'jobs.id')
        .select([
          'jobs.id as id',
          'job_diffs.job_id',
          'job_diffs.base_sha',
          'job_diffs.head_sha',
          'job_diffs.files',
          'job_diffs.diff',
          'job_diffs.truncated',
          'job_diffs.updated_at',
        ])
        .where('jobs.id', '=', id)
        .where('jobs.project_id', '=', projectId)
        .executeTakeFirst();
      if (!r) return undefined;
      const { id: _, ...diff } = r;
      return { diff: diff.job_id === null ? null : (diff as JobDiffRow) };
    },

    // ---- idempotency keys ----------------------------------------------------------------------
    async deleteExpiredIdempotencyKey(projectId: string, key: string, before: number): Promise<void> {
      await db.deleteFrom('idempotency_keys').where('project_id', '=', projectId).where('key', '=', key).where('created_at', '<', before).execute();
    },

    /** Inserts the key unless it exists (a concurrent insert waits for the first to commit); true when inserted. */
    async insertIdempotencyKey(row: { project_id: string; key: string; fingerprint: string; created_at: number }): Promise<boolean> {
      const r = await db
        .insertInto('idempotency_keys')
        .values({ ...row, status_code: null, response: null })
        .onConflict((oc) => oc.columns(['project_id', 'key']).doNothing())
        .returning('key')
        .executeTakeFirst();
      return r !== undefined;
    },

    async getIdempotencyKey(projectId: string, key: string): Promise<IdempotencyRow | undefined> {
      return db.selectFrom('idempotency_keys').selectAll().where('project_id', '=', projectId).where('key', '=', key).executeTakeFirst();
    },

    async completeIdempotencyKey(projectId: string, key: string, statusCode: number, response: string): Promise<void> {
      await db.updateTable('idempotency_keys').set({ status_code: statusCode, response }).where('project_id', '=', projectId).where('key', '=', key).execute();
    },

    async purgeIdempotencyKeys(before: number): Promise<number> {
      const r = await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}

export type JobsStoreQueries = ReturnType<typeof storeOver>;

export interface JobsStore extends JobsStoreQueries {
  /** Runs `fn` in one transaction with a store bound to it. */
  transaction<T>(fn: (tx: JobsStoreQueries) => Promise<T>): Promise<T>;
}

export function createJobsStore(db: Database): JobsStore {
  return {
    ...storeOver(db.kysely, db.caps),
    transaction: (fn) => db.kysely.transaction().execute((trx) => fn(storeOver(trx, db.caps))),
  };
}
