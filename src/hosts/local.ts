// Local repositories (a path or file:// URL): the branch is pushed there; there is no pull request.
import type { CodeHost } from './types.ts';

export function createLocalHost(): CodeHost {
  return {
    kind: 'local',
    async ensurePullRequest() {
      return null;
    },
    async updatePullRequest() {},
    async markPullRequestReady() {},
    async commentOnPullRequest() {
      return false;
    },
  };
}
