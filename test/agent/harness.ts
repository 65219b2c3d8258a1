// Shared setup for executor tests: a bare repository mapped from https://github.com/acme/docs through
// url.<local>.insteadOf, a scripted model server, a fake GitHub API and a config pointing at them.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { createRunExecutor, RunError, type RunEvent, type RunInput } from '../../src/agent/execute.ts';
import { type Config, testConfig } from '../../src/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { applyEnv, type BareRepo, createBareRepo, insteadOfEnv, type RepoContent, tempDir } from '../helpers/git.ts';
import { type GitHubServer, startGitHubServer } from '../helpers/github-server.ts';
import { type ModelScriptEntry, type ModelServer, startModelServer } from '../helpers/model-server.ts';

export const GITHUB_URL = 'https://github.com/acme/docs';
export const TOKEN = `ghp_${'T0kenValue'.repeat(4)}`;

export const DEFAULT_FILES: RepoContent['files'] = {
  'README.md': '# Acme docs\n',
  'AGENTS.md': 'Write in sentence case. Never use the word "simply".\n',
  'docs.json': '{ "name": "Acme", "navigation": [] }\n',
  'docs/intro.mdx': '---\ntitle: Intro\n---\n\nHello from Acme.\n',
  'docs/install.mdx': '# Install\n\nRun the installer.\n',
};

export interface Harness {
  repo: BareRepo;
  model: ModelServer;
  github: GitHubServer;
  config: Config;
  dataDir: string;
  events: RunEvent[];
  execute(overrides?: Partial<RunInput>): ReturnType<ReturnType<typeof createRunExecutor>['execute']>;
  input(overrides?: Partial<RunInput>): RunInput;
  close(): Promise<void>;
}

export async function startHarness(
  opts: { env?: Record<string, string>; files?: RepoContent['files']; symlinks?: RepoContent['symlinks']; script?: ModelScriptEntry[] } = {},
): Promise<Harness> {
  const repo = createBareRepo({ files: opts.files ?? DEFAULT_FILES, symlinks: opts.symlinks });
  const model = await startModelServer(opts.script ?? []);
  const github = await startGitHubServer({ token: TOKEN });
  const restoreEnv = applyEnv(insteadOfEnv({ [GITHUB_URL]: repo.dir }));
  const dataDir = tempDir('inkwell-data-');
  const config = testConfig(
    { dataDir },
    {
      OPENAI_COMPATIBLE_BASE_URL: model.baseUrl,
      GITHUB_API_URL: github.apiUrl,
      GITHUB_TOKEN: TOKEN,
      INKWELL_MODEL_MAX_RETRIES: '2',
      INKWELL_MODEL_RETRY_BASE_MS: '5',
      // The automatic docs check is off unless a test turns it on (test/agent/docs-checks.test.ts): these
      // scripts end after the model's summary.
      INKWELL_CHECK_REPAIR_ROUNDS: '0',
      ...opts.env,
    },
  );
  const executor = createRunExecutor(config, createLogger(config));
  const events: RunEvent[] = [];
  const input = (overrides: Partial<RunInput> = {}): RunInput => ({
    jobId: 'job_test1',
    repository: GITHUB_URL,
    ref: 'main',
    branch: 'inkwell/test1-update-intro',
    model: 'openai-compatible/test-model',
    draft: false,
    history: [],
    prompt: 'Update the intro',
    signal: new AbortController().signal,
    onEvent: (e) => {
      events.push(e);
    },
    ...overrides,
  });
  return {
    repo,
    model,
    github,
    config,
    dataDir,
    events,
    input,
    execute: (overrides) => executor.execute(input(overrides)),
    close: async () => {
      restoreEnv();
      await model.close();
      await github.close();
      repo.cleanup();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Every file under the data directory's mirrors, concatenated (to look for leaked secrets). */
export function mirrorConfigs(dataDir: string): string {
  const root = path.join(dataDir, 'mirrors');
  if (!fs.existsSync(root)) return '';
  return fs
    .readdirSync(root)
    .filter((d) => fs.existsSync(path.join(root, d, 'config')))
    .map((d) => fs.readFileSync(path.join(root, d, 'config'), 'utf8'))
    .join('\n');
}

/** The RunError a run failed with (fails the test when it did not fail that way). */
export async function runError(p: Promise<unknown>): Promise<RunError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RunError);
  return err as RunError;
}
