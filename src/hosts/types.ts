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
}

export interface CodeHost {
  readonly kind: 'github' | 'gitlab' | 'local';
  /** Returns the open pull request for the branch, creating one if none exists; null for hosts without pull requests (local). */
  ensurePullRequest(input: EnsurePullRequestInput): Promise<PullRequestRef | null>;
}
