// A whole agent turn on a GitLab repository: the repository URL points at the local GitLab fake (so
// the host is chosen as GitLab), git reaches a local bare repository through url.<local>.insteadOf,
// a scripted model edits a file, and the run ends with a merge request whose web_url is prLink.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createRunExecutor, type RunEvent, type RunInput } from '../../src/agent/execute.ts';
import { testConfig } from '../../src/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { applyEnv, type BareRepo, commitsBetween, createBareRepo, insteadOfEnv, readBranchFile, tempDir } from '../helpers/git.ts';
import { type GitLabServer, startGitLabServer } from '../helpers/gitlab-server.ts';
import { type ModelServer, startModelServer } from '../helpers/model-server.ts';

const TOKEN = `glpat-${'Fl0wToken'.repeat(3)}`;
const BRANCH = 'inkwell/gl1-update-intro';

describe('agent run on a GitLab repository', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c();
    cleanups.length = 0;
  });

  async function setup(): Promise<{
    gitlab: GitLabServer;
    model: ModelServer;
    repo: BareRepo;
    repository: string;
    input: (o?: Partial<RunInput>) => RunInput;
    events: RunEvent[];
    execute: (i: RunInput) => ReturnType<ReturnType<typeof createRunExecutor>['execute']>;
  }> {
    const repo = createBareRepo({ files: { 'README.md': '# Docs\n', 'docs/intro.md': 'Hello.\n' } });
    cleanups.push(() => repo.cleanup());
    const gitlab = await startGitLabServer({ token: TOKEN });
    cleanups.push(() => gitlab.close());
    const model = await startModelServer([
      { toolCalls: [{ name: 'edit_file', args: { path: 'docs/intro.md', old_string: 'Hello.', new_string: 'Welcome to the docs.' } }] },
      { text: 'Warmer intro greeting\n\nThe intro now welcomes readers.' },
      // Follow-up turn
      { toolCalls: [{ name: 'write_file', args: { path: 'docs/more.md', content: '# More\n' } }] },
      { text: 'Add a more page\n\nAdded docs/more.md.' },
    ]);
    cleanups.push(() => model.close());
    const repository = `${gitlab.url}/group/sub/docs.git`;
    cleanups.push(applyEnv(insteadOfEnv({ [repository]: repo.dir })));
    const dataDir = tempDir('inkwell-data-');
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const config = testConfig(
      { dataDir },
      { OPENAI_COMPATIBLE_BASE_URL: model.baseUrl, GITLAB_URL: gitlab.url, GITLAB_TOKEN: TOKEN, INKWELL_MODEL_MAX_RETRIES: '0' },
    );
    const executor = createRunExecutor(config, createLogger(config));
    const events: RunEvent[] = [];
    const input = (o: Partial<RunInput> = {}): RunInput => ({
      jobId: 'job_gl1',
      repository,
      ref: 'main',
      branch: BRANCH,
      model: 'openai-compatible/test-model',
      draft: false,
      history: [],
      prompt: 'Make the intro warmer',
      signal: new AbortController().signal,
      onEvent: (e) => {
        events.push(e);
      },
      ...o,
    });
    return { gitlab, model, repo, repository, input, events, execute: (i) => executor.execute(i) };
  }

  it('pushes the branch and opens one merge request whose web_url is prLink; a follow-up reuses it', async () => {
    const s = await setup();
    const first = await s.execute(s.input());

    expect(readBranchFile(s.repo, BRANCH, 'docs/intro.md')).toBe('Welcome to the docs.\n');
    expect(commitsBetween(s.repo, 'main', BRANCH)).toHaveLength(1);
    expect(s.gitlab.mergeRequests).toHaveLength(1);
    expect(s.gitlab.mergeRequests[0]).toMatchObject({
      projectPath: 'group/sub/docs',
      source_branch: BRANCH,
      target_branch: 'main',
      title: 'Warmer intro greeting',
      state: 'opened',
    });
    expect(first.prLink).toBe(`${s.gitlab.url}/group/sub/docs/-/merge_requests/1`);
    expect(s.events.find((e) => e.type === 'pull_request')?.data).toMatchObject({ url: first.prLink, number: 1 });
    expect(s.gitlab.requests.every((r) => r.headers['private-token'] === TOKEN)).toBe(true);

    const second = await s.execute(s.input({ history: first.messages, prompt: 'Add a page' }));
    expect(second.prLink).toBe(first.prLink);
    expect(readBranchFile(s.repo, BRANCH, 'docs/more.md')).toBe('# More\n');
    expect(commitsBetween(s.repo, 'main', BRANCH)).toHaveLength(2);
    expect(s.gitlab.mergeRequests).toHaveLength(1);
    // One merge request created; the follow-up rewrote its description and added a note.
    const writes = s.gitlab.requests
      .filter((r) => r.method !== 'GET')
      .map((r) => `${r.method} ${decodeURIComponent(r.rawPath).replace(/^.*\/projects\/group\/sub\/docs/, '')}`);
    expect(writes).toEqual(['POST /merge_requests', 'PUT /merge_requests/1', 'POST /merge_requests/1/notes']);
    expect(JSON.stringify(s.events)).not.toContain(TOKEN);
  });

  it('opens a draft merge request when the job asks for one', async () => {
    const s = await setup();
    await s.execute(s.input({ draft: true }));
    expect(s.gitlab.mergeRequests[0]).toMatchObject({ title: 'Draft: Warmer intro greeting', draft: true });
  });
});
