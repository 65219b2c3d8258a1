// The database queue, worker side: claim a job's next turn under a lease, renew it, and record the
// outcome. Every write that ends a turn checks that this worker still holds the lease, so a worker
// that lost its lease (and whose turn another worker resumed) can never record a second outcome.
import type { ModelMessage } from 'ai';
import type { BranchDiff } from '../git/diff.ts';
import { parseConversation } from './conversation.ts';
import { toDiffRow } from './diff-view.ts';
import { appendEvent, type JobEventType } from './events.ts';
import { changeStatus } from './lifecycle.ts';
import type { JobNotifier } from './notify.ts';
import { type JobStatus, transition } from './state.ts';
import type { JobRow, JobsStore, TurnRow } from './store.ts';

export interface Claim {
  job: JobRow;
  turn: TurnRow;
  /** The attempt number this claim is (1 for a first run; more after lost leases). */
  attempt: number;
  history: ModelMessage[];
}

export type ClaimResult = { kind: 'claimed'; claim: Claim } | { kind: 'worker_lost'; jobId: string } | { kind: 'skipped'; jobId: string } | { kind: 'none' };

export interface TurnOutcome {
  /** False when this worker no longer held the lease: nothing was recorded. */
  recorded: boolean;
  /** The job's status afterwards (undefined when not recorded). */
  status?: JobStatus;
}

/** A turn's tokens, with their cost when the model's price was known. */
export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd?: number | null;
}

/** The job's usage columns after adding a turn's usage. */
function addedUsage(row: JobRow, usage: TurnUsage): Pick<JobRow, 'input_tokens' | 'output_tokens' | 'cost_usd'> {
  const known = usage.costUsd !== undefined && usage.costUsd !== null;
  return {
    input_tokens: Number(row.input_tokens) + usage.inputTokens,
    output_tokens: Number(row.output_tokens) + usage.outputTokens,
    cost_usd: known ? Number(row.cost_usd ?? 0) + (usage.costUsd as number) : row.cost_usd,
  };
}

export interface QueueDeps {
  store: JobsStore;
  notifier: JobNotifier;
  workerId: string;
  leaseMs: number;
  maxAttempts: number;
  now: () => number;
}

export function createQueue(deps: QueueDeps) {
  const { store, notifier, workerId, now } = deps;

  /** After a turn ends: stay active when more turns wait, else settle with `settled`. */
  async function settle(
    tx: Parameters<Parameters<JobsStore['transaction']>[0]>[0],
    row: JobRow,
    settled: 'run_completed' | 'run_failed',
    patch: Partial<JobRow>,
    t: number,
  ): Promise<JobStatus> {
    const pending = await tx.countPendingTurns(row.id);
    const base = { ...patch, lease_owner: null, lease_expires_at: null };
    if (pending > 0) {
      // The next turn runs next; an error shows on the job only once it settles as failed.
      await tx.updateJob(row.id, { ...base, error_code: null, error_message: null, updated_at: t });
      return 'active';
    }
    const to = transition('active', settled);
    await changeStatus(tx, row, to, base, t);
    return to;
  }

  return {
    workerId,

    /** Claims the next runnable turn of some active job. */
    async claimNext(): Promise<ClaimResult> {
      const t = now();
      const jobId = await store.claimJob(workerId, t, deps.leaseMs);
      if (!jobId) return { kind: 'none' };
      return store.transaction(async (tx): Promise<ClaimResult> => {
        const job = await tx.lockJob(null, jobId);
        if (job?.status !== 'active' || job.lease_owner !== workerId) return { kind: 'skipped', jobId };
        const turn = await tx.nextPendingTurn(jobId);
        if (!turn) {
          // An active job with nothing to run (should not happen): settle it rather than leave it active.
          const to = transition('active', job.error_code ? 'run_failed' : 'run_completed');
          await changeStatus(tx, job, to, { lease_owner: null, lease_expires_at: null }, t);
          return { kind: 'skipped', jobId };
        }
        if (Number(turn.attempts) >= deps.maxAttempts) {
          // Every earlier attempt lost its lease (a graceful hand-back does not count).
          const message = `The run was lost ${turn.attempts} times (worker stopped or crashed); giving up`;
          await tx.finishTurn(turn.id, 'failed', t);
          await appendEvent(tx, jobId, 'error', { code: 'worker_lost', message, turn: turn.turn_no }, t);
          await settle(tx, job, 'run_failed', { error_code: 'worker_lost', error_message: message }, t);
          return { kind: 'worker_lost', jobId };
        }
        await tx.startTurn(turn.id, t);
        const attempt = Number(turn.attempts) + 1;
        await appendEvent(tx, jobId, 'status', { status: 'active', phase: 'running', turn: turn.turn_no, attempt }, t);
        return {
          kind: 'claimed',
          claim: { job, turn: { ...turn, status: 'running', attempts: attempt, started_at: t }, attempt, history: parseConversation(job.conversation) },
        };
      });
    },

    /** Extends the lease; returns the job's status, or undefined when this worker lost the lease. */
    async renew(jobId: string): Promise<string | undefined> {
      return store.renewLease(jobId, workerId, now() + deps.leaseMs);
    },

    /** Records an executor event while this worker holds the lease; false when it does not. */
    async recordEvent(jobId: string, type: JobEventType, data: Record<string, unknown>): Promise<boolean> {
      const ok = await store.transaction(async (tx) => {
        const row = await tx.lockJob(null, jobId);
        if (!row || row.lease_owner !== workerId || row.status !== 'active') return false;
        await appendEvent(tx, jobId, type, data, now());
        return true;
      });
      if (ok) notifier.event(jobId);
      return ok;
    },

    /** Stores the job branch's diff (replacing the last one) while this worker holds the lease; false when it does not. */
    async recordDiff(jobId: string, diff: BranchDiff): Promise<boolean> {
      return store.transaction(async (tx) => {
        const row = await tx.lockJob(null, jobId);
        if (!row || row.lease_owner !== workerId) return false;
        await tx.saveJobDiff(toDiffRow(jobId, diff, now()));
        return true;
      });
    },

    /** The turn finished normally. */
    async complete(claim: Claim, result: { conversation: ModelMessage[]; prLink: string | null; usage: TurnUsage }): Promise<TurnOutcome> {
      const out = await store.transaction(async (tx): Promise<TurnOutcome> => {
        const row = await tx.lockJob(null, claim.job.id);
        if (!row || row.lease_owner !== workerId) return { recorded: false };
        const t = now();
        const usage = addedUsage(row, result.usage);
        await tx.addTurnUsage(claim.turn.id, result.usage);
        if (row.status !== 'active') {
          // Archived while the run was finishing: keep what it did, do not change the status.
          await tx.updateJob(row.id, {
            ...usage,
            conversation: JSON.stringify(result.conversation),
            pr_url: result.prLink ?? row.pr_url,
            lease_owner: null,
            lease_expires_at: null,
          });
          return { recorded: true, status: row.status as JobStatus };
        }
        await tx.finishTurn(claim.turn.id, 'done', t);
        const status = await settle(
          tx,
          row,
          'run_completed',
          { ...usage, conversation: JSON.stringify(result.conversation), pr_url: result.prLink ?? row.pr_url, error_code: null, error_message: null },
          t,
        );
        return { recorded: true, status };
      });
      notifier.event(claim.job.id);
      return out;
    },

    /** The turn failed with a coded error. */
    async fail(claim: Claim, code: string, message: string, usage: TurnUsage | null = null): Promise<TurnOutcome> {
      const out = await store.transaction(async (tx): Promise<TurnOutcome> => {
        const row = await tx.lockJob(null, claim.job.id);
        if (!row || row.lease_owner !== workerId) return { recorded: false };
        const t = now();
        await appendEvent(tx, row.id, 'error', { code, message, turn: claim.turn.turn_no }, t);
        if (row.status !== 'active') {
          await tx.updateJob(row.id, { lease_owner: null, lease_expires_at: null });
          return { recorded: true, status: row.status as JobStatus };
        }
        await tx.finishTurn(claim.turn.id, 'failed', t);
        const used = usage ? addedUsage(row, usage) : {};
        if (usage) await tx.addTurnUsage(claim.turn.id, usage);
        const status = await settle(tx, row, 'run_failed', { ...used, error_code: code, error_message: message }, t);
        return { recorded: true, status };
      });
      notifier.event(claim.job.id);
      return out;
    },

    /** The job was archived during the run: release the lease (the archive already cancelled the turn). */
    async releaseArchived(claim: Claim): Promise<void> {
      await store.releaseLease(claim.job.id, workerId);
    },

    /** Graceful stop: the turn goes back to the queue, the attempt does not count, the lease is freed. */
    async handBack(claim: Claim): Promise<boolean> {
      const ok = await store.transaction(async (tx) => {
        const row = await tx.lockJob(null, claim.job.id);
        if (!row || row.lease_owner !== workerId) return false;
        await tx.handBackTurn(claim.turn.id);
        await tx.releaseLease(claim.job.id, workerId);
        return true;
      });
      if (ok) notifier.queued(claim.job.id);
      return ok;
    },

    async purgeIdempotencyKeys(before: number): Promise<number> {
      return store.purgeIdempotencyKeys(before);
    },
  };
}

export type Queue = ReturnType<typeof createQueue>;
