// Jobs end to end with the real agent executor: the test app and its worker, a scripted model server, a real bare
// repository reached as https://github.com/acme/docs (url.<local>.insteadOf) and the fake GitHub API, with a
// project seeded on that repository.
import { createRunExecutor } from '../../src/agent/execute.ts';
import { releaseWorktree } from '../../src/git/workspace.ts';
import type { Seeded } from './app.ts';
import type { DialectName } from './db.ts';
import { applyEnv, type BareRepo, createBareRepo, insteadOfEnv, type RepoContent } from './git.ts';
import { type GitHubServer, startGitHubServer } from './github-server.ts';
import { type JobsTestApp, startJobsApp, waitForStatus } from './jobs.ts';
import { type ModelScriptEntry, type ModelServer, startModelServer } from './model-server.ts';

export const GITHUB_URL = 'https://github.com/acme/docs';

export interface AgentJobs {
  t: JobsTestApp;
  repo: BareRepo;
  model: ModelServer;
  github: GitHubServer;
  /** The project on GITHUB_URL (ref main) and its keys. */
  s: Seeded;
  close(): Promise<void>;
}

export interface AgentJobsOptions {
  files: RepoContent['files'];
  script?: ModelScriptEntry[];
  /** The model's reply once the script is used up. */
  fallback?: ModelScriptEntry | undefined;
  /** The GitHub token the fake accepts (and the server is given). */
  token: string;
  env?: Record<string, string>;
}

export async function startAgentJobs(dialect: DialectName, opts: AgentJobsOptions): Promise<AgentJobs> {
  const repo = createBareRepo({ files: opts.files });
  const model = await startModelServer(opts.script ?? [], opts.fallback ? { fallback: opts.fallback } : {});
  const github = await startGitHubServer({ token: opts.token });
  const restoreEnv = applyEnv(insteadOfEnv({ [GITHUB_URL]: repo.dir }));
  const t = await startJobsApp(
    dialect,
    {},
    {
      OPENAI_COMPATIBLE_BASE_URL: model.baseUrl,
      GITHUB_API_URL: github.apiUrl,
      GITHUB_TOKEN: opts.token,
      INKWELL_POLL_INTERVAL_MS: '20',
      INKWELL_LEASE_MS: '5000',
      ...opts.env,
    },
  );
  const config = t.ctx.config;
  t.startWorker(createRunExecutor(config, t.ctx.logger), { releaseWorktree: (id) => releaseWorktree(config, id) });
  const s = await t.seed({ repository: GITHUB_URL, ref: 'main' });
  return {
    t,
    repo,
    model,
    github,
    s,
    async close() {
      await t.close();
      restoreEnv();
      await model.close();
      await github.close();
      repo.cleanup();
    },
  };
}

/** The seeded project's job API as its admin, and a wait for a job to finish; `get` is the current stack. */
export function jobApi(get: () => AgentJobs) {
  return {
    api: (method: string, p: string, body?: unknown) =>
      get().t.request(method, `/v2/agent/${get().s.project.id}${p}`, { key: get().s.adminKey, ...(body ? { body } : {}) }),
    settle: (id: string) => waitForStatus(get().t, get().s.adminKey, get().s.project.id, id, ['completed', 'failed']),
  };
}
