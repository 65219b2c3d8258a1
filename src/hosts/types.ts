// The code-host interface every host implements (GitHub, GitLab, local).
export interface PullRequestRef {
  url: string;
  number: number;
  /** True when this call opened it; false when it was open already (an earlier turn's). */
  created?: boolean;
  /** A pull request found open: whether it is a draft, and its body (GitLab: description) as it is now. */
  draft?: boolean;
  body?: string | null;
}

export interface EnsurePullRequestInput {
  /** Repository URL as configured on the project (never carries credentials). */
  repository: string;
  branch: string;
  base: string;
  title: string;
  body: string;
  draft?: boolean;
  /** Ends rate-limit waits and requests early (the run was stopped or reached its deadline). */
  signal?: AbortSignal;
}

/** One write to an open pull request (its body, or a comment on it). */
export interface PullRequestWrite {
  repository: string;
  /** The pull request's number (GitLab: the merge request's iid). */
  number: number;
  /** Markdown: the new body, or the comment. */
  body: string;
  signal?: AbortSignal;
}

/** A new body (GitLab: description) for an open pull request, and a new title when given. */
export interface PullRequestUpdate extends PullRequestWrite {
  title?: string | null;
  /** Whether the pull request is a draft (GitLab keeps a draft's `Draft:` title prefix, which is its draft state). */
  draft?: boolean;
}

/** An open pull request to act on. */
export interface PullRequestTarget {
  repository: string;
  number: number;
  signal?: AbortSignal;
}

/** A comment on an open pull request, posted once per marker. */
export interface PullRequestComment extends PullRequestWrite {
  /**
   * Text the comment carries (an HTML comment, invisible when rendered): when a comment on the pull request
   * already carries it, nothing is posted (a retried turn that commented before its outcome was stored).
   */
  marker?: string;
}

export interface CodeHost {
  readonly kind: 'github' | 'gitlab' | 'local';
  /** Returns the open pull request for the branch, creating one if none exists; null for hosts without pull requests (local). */
  ensurePullRequest(input: EnsurePullRequestInput): Promise<PullRequestRef | null>;
  /** Replaces the pull request's body (GitLab: the merge request's description) and, when given, its title. */
  updatePullRequest(input: PullRequestUpdate): Promise<void>;
  /**
   * Marks a draft pull request ready for review (GitHub: the GraphQL markPullRequestReadyForReview mutation, as
   * REST cannot; GitLab: the title without its `Draft:` prefix). A pull request that is not a draft is left alone.
   */
  markPullRequestReady(input: PullRequestTarget): Promise<void>;
  /**
   * Adds a comment to the pull request (GitLab: a note on the merge request), unless one already carries
   * `marker`; true when it posted one.
   */
  commentOnPullRequest(input: PullRequestComment): Promise<boolean>;
}
