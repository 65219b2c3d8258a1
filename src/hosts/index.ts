// Chooses the code host from the repository URL: github.com (and GITHUB_API_URL's host for
// Enterprise) → GitHub; gitlab.com (and GITLAB_URL's host) → GitLab; a path or file:// → local.
import type { Config } from '../config.ts';
import { parseRepository } from './detect.ts';
import { createGitHubHost } from './github.ts';
import { createGitLabHost } from './gitlab.ts';
import { createLocalHost } from './local.ts';
import { type HostDeps, HostError } from './retry.ts';
import type { CodeHost } from './types.ts';

export type { HostDeps, HostWait } from './retry.ts';
export { HostError, HostRateLimitedError } from './retry.ts';

export function hostFor(repository: string, config: Config, deps: HostDeps = {}): CodeHost {
  const loc = parseRepository(repository, config);
  switch (loc.kind) {
    case 'local':
      return createLocalHost();
    case 'github':
      return createGitHubHost(config, deps);
    case 'gitlab':
      return createGitLabHost(config, deps);
    default:
      throw new HostError(
        `No code host for repository ${repository}: use a GitHub or GitLab URL (set GITHUB_API_URL / GITLAB_URL for self-hosted instances) or a local path / file:// URL`,
      );
  }
}

/**
 * Why a run on this repository cannot open pull requests, or null. Lets callers fail before any
 * model call (e.g. a GitHub repository without GITHUB_TOKEN).
 */
export function hostConfigError(repository: string, config: Config): string | null {
  const loc = parseRepository(repository, config);
  if (loc.kind === 'github' && !config.hosts.githubToken) return 'GITHUB_TOKEN is not set: it is needed to push and open pull requests on GitHub';
  if (loc.kind === 'gitlab' && !config.hosts.gitlabToken) return 'GITLAB_TOKEN is not set: it is needed to push and open merge requests on GitLab';
  if (loc.kind === 'unknown') return `No code host for repository ${repository}`;
  return null;
}
