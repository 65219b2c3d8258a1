// Tables of the jobs area. Times are epoch milliseconds (64-bit integers); JSON is stored as text.
import type { Generated } from 'kysely';

export interface JobsTables {
  jobs: {
    id: string;
    project_id: string;
    /** JobStatus: active | completed | failed | archived. */
    status: string;
    repository: string;
    ref: string;
    model: string;
    branch: string;
    /** 1 when pull requests open as drafts. */
    draft: number;
    /** The job's pull request (kept while active; the API hides it then). */
    pr_url: string | null;
    error_code: string | null;
    error_message: string | null;
    input_tokens: number;
    output_tokens: number;
    /** USD spent so far; null while no turn ran with a known price (src/agent/prices.ts). */
    cost_usd: number | null;
    /** JSON text: the job's own budget (BudgetLimits), null when it has none. */
    budget: string | null;
    /** JSON text: the conversation so far (ModelMessage[] of completed turns). */
    conversation: string;
    /** Last event sequence number handed out for this job (events are numbered 1, 2, 3 … per job). */
    event_seq: number;
    /** Worker holding the run lease, and until when. */
    lease_owner: string | null;
    lease_expires_at: number | null;
    created_at: number;
    updated_at: number;
    archived_at: number | null;
  };
  /** One row per prompt (the first one and each follow-up message): the queue of turns, in order. */
  job_turns: {
    id: Generated<number>;
    job_id: string;
    /** 1, 2, 3 … per job: the order turns run in. */
    turn_no: number;
    prompt: string;
    /** queued | running | done | failed | cancelled */
    status: string;
    /** Starts that did not finish (a graceful hand-back does not count). */
    attempts: number;
    created_at: number;
    started_at: number | null;
    finished_at: number | null;
    /** The turn's tokens (all its attempts that reported them); a project's daily budget counts these. */
    input_tokens: Generated<number>;
    output_tokens: Generated<number>;
  };
  job_events: {
    id: Generated<number>;
    job_id: string;
    seq: number;
    type: string;
    at: number;
    /** JSON text. */
    data: string;
  };
  /** The job branch's diff against its base, as the last turn that pushed left it (one row per job). */
  job_diffs: {
    job_id: string;
    /** Merge base with the job's ref, and the branch's commit. */
    base_sha: string;
    head_sha: string;
    /** JSON text: DiffFile[] (src/git/diff.ts), complete. */
    files: string;
    /** Unified diff text, cut at MAX_DIFF_TEXT_BYTES (repository content: data only). */
    diff: string;
    /** 1 when `diff` was cut. */
    truncated: number;
    updated_at: number;
  };
  /** Idempotency-Key records (24 h): the request fingerprint and the original response. */
  idempotency_keys: {
    project_id: string;
    key: string;
    /** sha256 of method, path and canonical body. */
    fingerprint: string;
    status_code: number | null;
    /** JSON text of the original response body. */
    response: string | null;
    created_at: number;
  };
}
