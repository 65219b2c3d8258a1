// What Inkwell does in a GitLab issue or merge-request thread: look up a commenter's access level, acknowledge a
// comment with an emoji, reply. The same client as merge requests (gitlab.ts: each request sent once); transient
// failures are retried and rate limits waited for within a few seconds (a webhook delivery waits for the answer);
// anything longer or any other failure is thrown as a HostError, so the delivery that asked is answered 503 and
// GitLab can send it again.
import type { Config } from '../config.ts';
import { describeGitLabError, gitlabApi, gitlabFailure } from './gitlab.ts';
import { HostError, WaitBudget, withHostRetry } from './retry.ts';

/** GitLab's access levels: 30 Developer (pushes to branches), 40 Maintainer, 50 Owner. */
export const GITLAB_DEVELOPER = 30;

/** How long one thread request may wait for GitLab's rate limits and retries in all. */
const MAX_WAIT_MS = 5_000;

export type Noteable = 'issue' | 'merge_request';

export interface GitLabThreads {
  /** The user's access level on the project, inherited from its groups included (0: not a member). */
  accessLevel(projectPath: string, userId: number): Promise<number>;
  /** Adds an award emoji (`eyes`) to a comment. */
  react(projectPath: string, noteable: Noteable, iid: number, noteId: number, emoji: string): Promise<void>;
  /** Posts a comment in the thread of issue or merge request `iid`. */
  reply(projectPath: string, noteable: Noteable, iid: number, body: string): Promise<void>;
}

const statusOf = (err: unknown) => (err as { cause?: { response?: { status?: number } } }).cause?.response?.status;

export function createGitLabThreads(config: Pick<Config, 'hosts'>): GitLabThreads {
  const token = config.hosts.gitlabToken;
  const api = gitlabApi(config);

  async function call<T>(what: string, work: () => Promise<T>): Promise<T> {
    if (!token) throw new HostError('GITLAB_TOKEN is not set: it is needed to answer comments on GitLab');
    const budget = new WaitBudget({ host: 'GitLab', what, maxWaitMs: MAX_WAIT_MS });
    try {
      return await withHostRetry(work, budget, undefined, gitlabFailure);
    } catch (err) {
      if (err instanceof HostError) throw err;
      throw new HostError(`GitLab ${what} failed: ${describeGitLabError(err, token)}`);
    }
  }

  return {
    accessLevel: (projectPath, userId) =>
      call(`access level of user ${userId} on ${projectPath}`, async () => {
        try {
          const member = (await api.ProjectMembers.show(projectPath, userId, { includeInherited: true })) as { access_level?: unknown };
          return typeof member.access_level === 'number' ? member.access_level : 0;
        } catch (err) {
          // Not a member (or no such user): no access.
          if (statusOf(err) === 404) return 0;
          throw err;
        }
      }),
    react: (projectPath, noteable, iid, noteId, emoji) =>
      call(`award emoji on note ${noteId}`, async () => {
        const awards = noteable === 'issue' ? api.IssueNoteAwardEmojis : api.MergeRequestNoteAwardEmojis;
        await awards.award(projectPath, iid, noteId, emoji);
      }),
    reply: (projectPath, noteable, iid, body) =>
      call(`comment on ${noteable === 'issue' ? '#' : '!'}${iid}`, async () => {
        if (noteable === 'issue') await api.IssueNotes.create(projectPath, iid, body);
        else await api.MergeRequestNotes.create(projectPath, iid, body);
      }),
  };
}
