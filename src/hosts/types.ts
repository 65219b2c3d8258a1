// The code-host interface every host implements (GitHub, GitLab, local).
export interface PullRequestRef {
  url: string;
  number: number;
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

export interface CodeHost {
  readonly kind: 'github' | 'gitlab' | 'local';
  /** Returns the open pull request for the branch, creating one if none exists; null for hosts without pull requests (local). */
  ensurePullRequest(input: EnsurePullRequestInput): Promise<PullRequestRef | null>;
}
