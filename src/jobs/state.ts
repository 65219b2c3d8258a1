// The job model (SPEC 3.2): states, the transition table, and branch naming. Pure: no I/O.

export const JOB_STATUSES = ['active', 'completed', 'failed', 'archived'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** What moves a job from one state to another. */
export const JOB_TRIGGERS = ['create', 'run_completed', 'run_failed', 'message', 'archive'] as const;
export type JobTrigger = (typeof JOB_TRIGGERS)[number];

/** The state before a job exists. */
export const NEW = 'new' as const;
export type JobState = JobStatus | typeof NEW;

/**
 * Every legal transition: `TRANSITIONS[from][trigger] = to`. Anything absent is illegal.
 * - create → active (queued and running are both `active`)
 * - active → completed | failed (the run ended) | archived
 * - completed | failed → active (a follow-up message) | archived
 * - archived is final.
 */
export const TRANSITIONS = {
  new: { create: 'active' },
  active: { run_completed: 'completed', run_failed: 'failed', archive: 'archived' },
  completed: { message: 'active', archive: 'archived' },
  failed: { message: 'active', archive: 'archived' },
  archived: {},
} as const satisfies Record<JobState, Partial<Record<JobTrigger, JobStatus>>>;

export class IllegalTransitionError extends Error {
  constructor(
    readonly from: JobState,
    readonly trigger: JobTrigger,
  ) {
    super(`Illegal job transition: ${trigger} from ${from}`);
    this.name = 'IllegalTransitionError';
  }
}

/** The state after `trigger`, or null when the transition is illegal. */
export function nextState(from: JobState, trigger: JobTrigger): JobStatus | null {
  const row = TRANSITIONS[from] as Partial<Record<JobTrigger, JobStatus>>;
  return row[trigger] ?? null;
}

/** The state after `trigger`; throws IllegalTransitionError when it is illegal. */
export function transition(from: JobState, trigger: JobTrigger): JobStatus {
  const to = nextState(from, trigger);
  if (to === null) throw new IllegalTransitionError(from, trigger);
  return to;
}

export function canTransition(from: JobState, trigger: JobTrigger): boolean {
  return nextState(from, trigger) !== null;
}

/** Terminal for a run: a client polling the job may stop (until a follow-up message). */
export function isSettled(status: JobStatus): boolean {
  return status !== 'active';
}

/**
 * `prLink` as the API shows it: null while the job is active (the interface says so) and null when the
 * job never produced a pull request.
 */
export function visiblePrLink(status: JobStatus, prUrl: string | null): string | null {
  return status === 'active' ? null : prUrl;
}

// ---------------------------------------------------------------------------------------------------
// Branch naming: inkwell/<job-id-short>-<slug-of-prompt>

export const BRANCH_PREFIX = 'inkwell/';
const SHORT_ID_LENGTH = 8;
const SLUG_MAX = 40;

/** The random part of a job id (`job_AbC…` → first 8 characters after the prefix), lower-cased. */
export function shortJobId(jobId: string): string {
  const random = jobId.includes('_') ? jobId.slice(jobId.lastIndexOf('_') + 1) : jobId;
  return random.slice(0, SHORT_ID_LENGTH).toLowerCase();
}

/** A git- and URL-safe slug of the prompt's first words: lower-case ASCII letters, digits and dashes. */
export function slugify(text: string, max = SLUG_MAX): string {
  const ascii = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
  const words = ascii.split(/[^a-z0-9]+/).filter((w) => w.length > 0);
  let out = '';
  for (const w of words) {
    const next = out === '' ? w : `${out}-${w}`;
    if (next.length > max) {
      if (out === '') out = w.slice(0, max);
      break;
    }
    out = next;
  }
  return out;
}

/** `inkwell/<short-id>-<slug>`; just `inkwell/<short-id>` when the prompt has no usable words. */
export function branchName(jobId: string, prompt: string): string {
  const slug = slugify(prompt);
  return `${BRANCH_PREFIX}${shortJobId(jobId)}${slug ? `-${slug}` : ''}`;
}

/**
 * Whether a requested branch (or ref) is a name git accepts for a branch (the rules of
 * `git check-ref-format --branch`), kept to a safe subset: no spaces or control characters.
 */
export function isValidBranchName(name: string): boolean {
  if (name.length === 0 || name.length > 200) return false;
  if (!/^[A-Za-z0-9._\-/]+$/.test(name)) return false;
  if (name.startsWith('/') || name.endsWith('/') || name.startsWith('-')) return false;
  if (name.endsWith('.') || name.endsWith('.lock') || name.includes('..') || name.includes('//')) return false;
  if (name === '@' || name === 'HEAD') return false;
  return name.split('/').every((part) => part.length > 0 && !part.startsWith('.') && !part.endsWith('.lock'));
}
