// What a turn does to its pull request's state: draft or ready, and its title. Pure.
//
// - A pull request is opened as a draft when the job asked for one (`draft: true`), when the docs checks still
//   fail or when its changes are over the changed-files budget; when the checks alone made it a draft, its body
//   carries CHECKS_DRAFT_MARKER (an HTML comment, invisible).
// - A follow-up whose checks pass marks a draft ready for review only when its body carries that marker and the
//   job did not ask for a draft: a draft the job asked for, or one a person made, stays a draft.
// - A follow-up whose checks fail on a pull request that is ready leaves it ready and says so in its comment.
// - The title is the first turn's; a follow-up renames the pull request only when its summary starts with
//   `Title:` (the system prompt tells the model so), which keeps the title stable across small follow-ups.

/** Marks a body whose pull request is a draft because its docs checks failed (not because anyone asked). */
export const CHECKS_DRAFT_MARKER = '<!-- inkwell:draft:checks -->';

export interface PullRequestStateInput {
  /** The job asked for a draft. */
  jobDraft: boolean;
  /** This turn's changes are over the changed-files budget (src/agent/scope.ts): a draft, not marked ready. */
  overBudget?: boolean;
  /** This turn's docs checks: null when they did not run. */
  checks: 'passed' | 'failed' | null;
  /** The pull request as found open (an earlier turn's), or null when this turn opens it. */
  existing: { draft: boolean; body: string | null } | null;
  /** The title a follow-up's summary gave with `Title:`, else null. */
  newTitle: string | null;
}

export interface PullRequestState {
  /** A draft after this turn. */
  draft: boolean;
  /** The body carries CHECKS_DRAFT_MARKER. */
  checksDraft: boolean;
  /** Mark the (existing) pull request ready for review. */
  markReady: boolean;
  /** Rename the (existing) pull request to this; null keeps its title. */
  title: string | null;
  /** A line for the follow-up's comment about the pull request's state, or null. */
  note: string | null;
}

export function pullRequestState(input: PullRequestStateInput): PullRequestState {
  const { jobDraft, checks, existing } = input;
  const overBudget = input.overBudget === true;
  if (!existing) {
    const checksDraft = !jobDraft && !overBudget && checks === 'failed';
    return { draft: jobDraft || overBudget || checks === 'failed', checksDraft, markReady: false, title: null, note: null };
  }
  const wasChecksDraft = !jobDraft && existing.draft && (existing.body ?? '').includes(CHECKS_DRAFT_MARKER);
  const markReady = wasChecksDraft && checks === 'passed' && !overBudget;
  const draft = existing.draft && !markReady;
  let note: string | null = null;
  if (markReady) note = 'The docs checks pass now: the pull request is marked ready for review.';
  else if (checks === 'failed' && !existing.draft)
    note = 'The docs checks fail after this turn; the pull request stays ready for review (its description lists the findings).';
  else if (checks === 'failed' && wasChecksDraft) note = 'The docs checks still fail: the pull request stays a draft.';
  return { draft, checksDraft: wasChecksDraft && !markReady, markReady, title: input.newTitle, note };
}
