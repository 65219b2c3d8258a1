// The code-host interface every host implements (GitHub, GitLab, local).
export interface PullRequestRef {
  url: string;
  number: number;
  /** True when this call opened it; false when it was open already (an earlier turn's). */
  created?: boolean;
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
  /** Replaces the pull request's body (GitLab: the merge request's description). */
  updatePullRequestBody(input: PullRequestWrite): Promise<void>;
  /**
   * Adds a comment to the pull request (GitLab: a note on the merge request), unless one already carries
   * `marker`; true when it posted one.
   */
  commentOnPullRequest(input: PullRequestComment): Promise<boolean>;
}
