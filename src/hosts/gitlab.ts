// GitLab (gitlab.com or self-managed at GITLAB_URL) merge requests through @gitbeaker/rest.
// Auth: GITLAB_TOKEN, sent as the PRIVATE-TOKEN header; it never appears in a returned URL or error.
import { Gitlab } from '@gitbeaker/rest';
import type { Config } from '../config.ts';
import { scrubSecrets } from '../lib/logger.ts';
import { parseRepository } from './detect.ts';
import { HostError } from './github.ts';
import type { CodeHost, EnsurePullRequestInput, PullRequestRef } from './types.ts';

/** True for repositories on gitlab.com or on the host of GITLAB_URL (https, ssh or scp-style remotes). */
export function isGitLabRepository(repository: string, config: Config): boolean {
  return parseRepository(repository, config).kind === 'gitlab';
}

/** The project path (`group/sub/repo`) of a GitLab repository URL, or null when it is not one. */
export function gitlabProjectPath(repository: string, config: Config): string | null {
  const loc = parseRepository(repository, config);
  return loc.kind === 'gitlab' ? loc.projectPath : null;
}

interface MergeRequestLike {
  iid: number;
  web_url: string;
  source_branch?: string;
}

const DRAFT_PREFIX = 'Draft: ';

function mrTitle(title: string, draft: boolean | undefined): string {
  const t = title.trim() || 'Inkwell changes';
  if (!draft || /^(draft|wip)\s*:/i.test(t) || /^\[(draft|wip)\]/i.test(t)) return t;
  return `${DRAFT_PREFIX}${t}`;
}

function describe(err: unknown, token: string | undefined): string {
  const e = err as { message?: string; cause?: { description?: unknown; response?: { status?: number } } };
  const status = e.cause?.response?.status;
  const description = typeof e.cause?.description === 'string' && e.cause.description ? e.cause.description : (e.message ?? String(err));
  let text = scrubSecrets(`${status ? `HTTP ${status}: ` : ''}${description}`);
  if (token) text = text.split(token).join('[redacted]');
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

function statusOf(err: unknown): number | undefined {
  return (err as { cause?: { response?: { status?: number } } }).cause?.response?.status;
}

export function createGitLabHost(config: Config): CodeHost {
  const token = config.hosts.gitlabToken;
  const api = new Gitlab({ host: config.hosts.gitlabUrl, token: token ?? '', queryTimeout: 30_000 });

  async function findOpen(projectPath: string, branch: string): Promise<PullRequestRef | null> {
    const list = (await api.MergeRequests.all({
      projectId: projectPath,
      sourceBranch: branch,
      state: 'opened',
      perPage: 20,
      maxPages: 1,
    })) as unknown as MergeRequestLike[];
    const mr = list.find((m) => m.source_branch === undefined || m.source_branch === branch);
    return mr ? { url: mr.web_url, number: mr.iid } : null;
  }

  return {
    kind: 'gitlab',
    async ensurePullRequest(input: EnsurePullRequestInput): Promise<PullRequestRef | null> {
      const projectPath = gitlabProjectPath(input.repository, config);
      if (!projectPath) throw new HostError(`not a GitLab repository: ${scrubSecrets(input.repository)}`);
      if (!token) throw new HostError('GITLAB_TOKEN is not set: it is needed to open merge requests on GitLab');
      try {
        const existing = await findOpen(projectPath, input.branch);
        if (existing) return existing;
        try {
          const created = (await api.MergeRequests.create(projectPath, input.branch, input.base, mrTitle(input.title, input.draft), {
            description: input.body,
          })) as unknown as MergeRequestLike;
          return { url: created.web_url, number: created.iid };
        } catch (err) {
          // GitLab answers 409 when an open merge request for the source branch appeared meanwhile: reuse it.
          if (statusOf(err) === 409) {
            const again = await findOpen(projectPath, input.branch);
            if (again) return again;
          }
          throw err;
        }
      } catch (err) {
        if (err instanceof HostError) throw err;
        throw new HostError(`GitLab merge request for ${projectPath} branch ${input.branch} failed: ${describe(err, token)}`);
      }
    },
  };
}
