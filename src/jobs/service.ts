// The job API's operations: create, get, message, list, archive, events, diff. Routes call these; SQL stays
// in the store. Errors are coded AppErrors (the one registry).
import type { BudgetLimits } from '../agent/budget.ts';
import { AppError } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import { type RepositoryScope, repositoryAllowed } from '../projects/repository.ts';
import { type JobDiffView, toDiffView } from './diff-view.ts';
import { appendEvent, type JobEvent, toJobEvent } from './events.ts';
import { IDEMPOTENCY_TTL_MS, requestFingerprint } from './idempotency.ts';
import { changeStatus } from './lifecycle.ts';
import type { JobNotifier } from './notify.ts';
import { branchName, type JobStatus, transition } from './state.ts';
import type { JobRow, JobsStore, JobsStoreQueries, JobViewForKey, JobViewRow } from './store.ts';
import { decodeCursor, encodeCursor, type JobView, toJobView } from './view.ts';

export interface ProjectDefaults {
  id: string;
  repository: string;
  ref: string;
  model: string | null;
  /** The allow-list: a job may use the project's repository or one listed here (src/projects/repository.ts). */
  settings?: RepositoryScope['settings'];
}

export interface CreateJobInput {
  prompt: string;
  model?: string;
  source?: { repository?: string; ref?: string };
  branch?: string;
  draft?: boolean;
  /** The job's own budgets (validated by the route's schema); each beats the project's and the server's default. */
  budget?: BudgetLimits;
}

export interface Idempotency {
  key: string;
  /** Method and path of the request, for the fingerprint. */
  method: string;
  path: string;
}

/** Writes what belongs with a stored job or message, in its transaction (`tx.kysely` for another area's store). */
export type OnStored = (tx: JobsStoreQueries, jobId: string) => Promise<void>;

export interface JobResponse {
  status: number;
  job: JobView;
  /** True when an Idempotency-Key matched an earlier request and nothing new was done. */
  replayed: boolean;
}

export interface JobServiceDeps {
  store: JobsStore;
  notifier: JobNotifier;
  defaultModel: string;
  /** Why a model cannot be used (provider without credentials, unknown provider), or null. */
  modelConfigError: (model: string) => string | null;
  /** The project's repository and allow-list, read before a message is queued (a job's repository may have been disallowed since). */
  repositoryScope?: (projectId: string) => Promise<RepositoryScope | undefined>;
  /** Whether a model's price is known (a job's spend budget needs it); default: never. */
  priceKnown?: (model: string) => boolean;
  now: () => number;
}

export function createJobService(deps: JobServiceDeps) {
  const { store, notifier, now } = deps;

  function checkModel(model: string): void {
    const problem = deps.modelConfigError(model);
    if (problem) throw new AppError('model_not_configured', problem, [{ message: problem, path: 'model' }]);
  }

  /** A job's own spend budget needs its model's price: 400 naming `budget.maxCostUsd` otherwise. */
  function checkBudget(budget: BudgetLimits | undefined, model: string): void {
    if (budget?.maxCostUsd === undefined || deps.priceKnown?.(model)) return;
    const message = `field "budget.maxCostUsd" needs the price of model "${model}", which the server does not know: add it to INKWELL_MODEL_PRICES`;
    throw new AppError('invalid_request', message, [{ message, path: 'budget.maxCostUsd' }]);
  }

  /** 403 repository_not_allowed unless the project may use `repository` (its own, or on its allow-list). */
  function checkRepository(project: RepositoryScope & { id: string }, repository: string, field?: string): void {
    if (repositoryAllowed(project, repository)) return;
    const message = `${field ? `field "${field}" names` : "this job's repository is"} a repository the project may not use: only its own repository and those on its allow-list (inkwell project set --project ${project.id} --allow-repository URL)`;
    throw new AppError('repository_not_allowed', message, [{ message, ...(field ? { path: field } : {}) }]);
  }

  /**
   * Runs `work` once per Idempotency-Key: the key row is inserted first (a concurrent identical request
   * waits on the unique key, then finds the finished response), and the response is stored in the same
   * transaction as the work.
   */
  async function idempotent(
    tx: JobsStoreQueries,
    projectId: string,
    idem: Idempotency | undefined,
    body: unknown,
    work: () => Promise<{ status: number; job: JobView }>,
  ): Promise<JobResponse> {
    if (!idem) return { ...(await work()), replayed: false };
    const t = now();
    const fingerprint = requestFingerprint(idem.method, idem.path, body);
    await tx.deleteExpiredIdempotencyKey(projectId, idem.key, t - IDEMPOTENCY_TTL_MS);
    const inserted = await tx.insertIdempotencyKey({ project_id: projectId, key: idem.key, fingerprint, created_at: t });
    if (!inserted) {
      const prior = await tx.getIdempotencyKey(projectId, idem.key);
      if (!prior) throw new AppError('conflict', 'A request with this Idempotency-Key is in progress; retry shortly');
      if (prior.fingerprint !== fingerprint) {
        throw new AppError('idempotency_mismatch', undefined, [
          { message: 'This Idempotency-Key was used with a different method, path or body in the last 24 hours', path: 'Idempotency-Key' },
        ]);
      }
      if (prior.status_code === null || prior.response === null)
        throw new AppError('conflict', 'A request with this Idempotency-Key is in progress; retry shortly');
      return { status: Number(prior.status_code), job: JSON.parse(prior.response) as JobView, replayed: true };
    }
    const res = await work();
    await tx.completeIdempotencyKey(projectId, idem.key, res.status, JSON.stringify(res.job));
    return { ...res, replayed: false };
  }

  async function getRow(projectId: string, id: string): Promise<JobViewRow> {
    const row = await store.getJobView(projectId, id);
    if (!row) throw new AppError('job_not_found');
    return row;
  }

  return {
    /**
     * `charge` (the rate limit) runs once the request is known to be valid, just before the job is written;
     * a throw from it rolls the transaction back. Idempotent replays and rejected requests are not charged.
     * `onStored` writes what belongs with the new job in the same transaction (before a worker can see it).
     */
    async createJob(project: ProjectDefaults, input: CreateJobInput, idem?: Idempotency, charge?: () => void, onStored?: OnStored): Promise<JobResponse> {
      const model = input.model ?? project.model ?? deps.defaultModel;
      // Before anything is stored, charged or handed to git or a code host.
      if (input.source?.repository !== undefined) checkRepository(project, input.source.repository, 'source.repository');
      const res = await store.transaction((tx) =>
        idempotent(tx, project.id, idem, input, async () => {
          checkModel(model);
          checkBudget(input.budget, model);
          charge?.();
          const t = now();
          const id = newId('job');
          const row: JobRow = {
            id,
            project_id: project.id,
            status: transition('new', 'create'),
            repository: input.source?.repository ?? project.repository,
            ref: input.source?.ref ?? project.ref,
            model,
            branch: input.branch ?? branchName(id, input.prompt),
            draft: input.draft ? 1 : 0,
            pr_url: null,
            error_code: null,
            error_message: null,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: null,
            budget: input.budget && Object.keys(input.budget).length > 0 ? JSON.stringify(input.budget) : null,
            conversation: '[]',
            event_seq: 0,
            lease_owner: null,
            lease_expires_at: null,
            created_at: t,
            updated_at: t,
            archived_at: null,
          };
          await tx.insertJob(row);
          await tx.insertTurn({ job_id: id, turn_no: 1, prompt: input.prompt, created_at: t });
          await appendEvent(tx, id, 'status', { status: 'active', prLink: null, error: null, reason: 'created' }, t);
          await appendEvent(tx, id, 'user_message', { turn: 1, prompt: input.prompt }, t);
          await onStored?.(tx, id);
          return { status: 201, job: toJobView(row) };
        }),
      );
      if (!res.replayed) notifier.queued(res.job.id);
      return res;
    },

    async getJob(projectId: string, id: string): Promise<JobView> {
      return toJobView(await getRow(projectId, id));
    },

    /** The key presented for GET job and the job itself, in one read (see `requireKeyWith`). */
    getJobViewForKey(keyHash: string, projectId: string, id: string): Promise<JobViewForKey | undefined> {
      return store.getJobViewForKey(keyHash, projectId, id);
    },

    /** The id of the project's job that opened the pull request at `prUrl`, if any. */
    findJobIdByPullRequest(projectId: string, prUrl: string): Promise<string | undefined> {
      return store.findJobIdByPullRequest(projectId, prUrl);
    },

    /** The row GET job shows (undefined: no such job in the project), for a request whose key was checked apart. */
    findJobViewRow(projectId: string, id: string): Promise<JobViewRow | undefined> {
      return store.getJobView(projectId, id);
    },

    /** The job object of a row read by `getJobViewForKey` (undefined: no such job in the project → 404). */
    jobView(row: JobViewRow | undefined): JobView {
      if (!row) throw new AppError('job_not_found');
      return toJobView(row);
    },

    /** Queues a follow-up turn; a completed or failed job becomes active again. */
    /** `charge`, `onStored`: as for createJob (not charged: unknown or archived job, bad model, replays). */
    async sendMessage(projectId: string, id: string, prompt: string, idem?: Idempotency, charge?: () => void, onStored?: OnStored): Promise<JobResponse> {
      const scope = await deps.repositoryScope?.(projectId);
      const res = await store.transaction(async (tx) => {
        const row = await tx.lockJob(projectId, id);
        if (!row) throw new AppError('job_not_found');
        return idempotent(tx, projectId, idem, { prompt }, async () => {
          if (row.status === 'archived') throw new AppError('job_archived', 'Job is archived; it takes no more messages');
          if (scope) checkRepository({ ...scope, id: projectId }, row.repository);
          checkModel(row.model);
          charge?.();
          const t = now();
          const turnNo = (await tx.maxTurnNo(id)) + 1;
          await tx.insertTurn({ job_id: id, turn_no: turnNo, prompt, created_at: t });
          await appendEvent(tx, id, 'user_message', { turn: turnNo, prompt }, t);
          await onStored?.(tx, id);
          let next = row;
          if (row.status !== 'active') {
            next = await changeStatus(tx, row, transition(row.status as JobStatus, 'message'), { error_code: null, error_message: null }, t, {
              reason: 'message',
            });
          } else {
            await tx.updateJob(id, { updated_at: t });
            next = { ...row, updated_at: t };
          }
          return { status: 200, job: toJobView(next) };
        });
      });
      if (!res.replayed) {
        notifier.queued(id);
        notifier.event(id);
      }
      return res;
    },

    async listJobs(
      projectId: string,
      opts: { status?: JobStatus; limit: number; cursor?: string },
    ): Promise<{ jobs: JobView[]; nextCursor: string | null; hasMore: boolean }> {
      let cursor: { createdAt: number; id: string } | undefined;
      if (opts.cursor !== undefined) {
        const c = decodeCursor(opts.cursor);
        if (!c)
          throw new AppError('invalid_request', 'query parameter "cursor" is not a cursor this API returned', [{ message: 'invalid cursor', path: 'cursor' }]);
        cursor = c;
      }
      const rows = await store.listJobs(projectId, { ...(opts.status ? { status: opts.status } : {}), ...(cursor ? { cursor } : {}), limit: opts.limit + 1 });
      const hasMore = rows.length > opts.limit;
      const page = rows.slice(0, opts.limit);
      const last = page[page.length - 1];
      return { jobs: page.map(toJobView), nextCursor: hasMore && last ? encodeCursor(Number(last.created_at), last.id) : null, hasMore };
    },

    /** Archives a job (idempotent: archiving an archived job returns it unchanged). A run in progress is stopped. */
    async archiveJob(projectId: string, id: string): Promise<JobView> {
      const { view, changed } = await store.transaction(async (tx) => {
        const row = await tx.lockJob(projectId, id);
        if (!row) throw new AppError('job_not_found');
        if (row.status === 'archived') return { view: toJobView(row), changed: false };
        const t = now();
        await tx.cancelPendingTurns(id, t);
        const next = await changeStatus(tx, row, transition(row.status as JobStatus, 'archive'), { archived_at: t }, t, { reason: 'archived' });
        return { view: toJobView(next), changed: true };
      });
      if (changed) {
        notifier.archived(id);
        notifier.event(id);
      }
      return view;
    },

    /** Events after `after` (exclusive), oldest first, at most `limit`. */
    async listEvents(projectId: string, id: string, after: number, limit: number): Promise<{ events: JobEvent[]; hasMore: boolean }> {
      await getRow(projectId, id);
      const rows = await store.listEvents(id, after, limit + 1);
      return { events: rows.slice(0, limit).map(toJobEvent), hasMore: rows.length > limit };
    },

    /** The last event seq of a job (0: none yet); job_not_found when the project has no such job. */
    async lastEventSeq(projectId: string, id: string): Promise<number> {
      const seq = await store.getEventSeq(projectId, id);
      if (seq === undefined) throw new AppError('job_not_found');
      return seq;
    },

    /** The job branch's diff as the last turn that pushed stored it (no files while nothing was pushed). */
    async getDiff(projectId: string, id: string): Promise<JobDiffView> {
      const found = await store.getJobDiff(projectId, id);
      if (!found) throw new AppError('job_not_found');
      return toDiffView(found.diff);
    },

    /** Events after `after` without the project check (the stream checked once at its start). */
    async eventsAfter(id: string, after: number, limit: number): Promise<JobEvent[]> {
      return (await store.listEvents(id, after, limit)).map(toJobEvent);
    },
  };
}

export type JobService = ReturnType<typeof createJobService>;
