// Git for the eval: a fixture folder (plus a task's extra files) becomes a fresh bare repository per task run,
// and what the agent pushed is read back from it into an Outcome for the checker.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ChangedFile } from '../../src/docs-checks/types.ts';
import { parseNameStatus } from '../../src/git/diff.ts';

const run = promisify(execFile);

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Eval Fixture',
  GIT_AUTHOR_EMAIL: 'fixture@example.invalid',
  GIT_COMMITTER_NAME: 'Eval Fixture',
  GIT_COMMITTER_EMAIL: 'fixture@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
};

export async function git(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' });
  return stdout;
}

/** Every file under `dir` (relative, `/`-separated, sorted). */
export async function listTree(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .sort();
}

export interface TaskRepo {
  /** The bare repository (what the run's `repository` names: a local path, so the local code host). */
  dir: string;
  base: string;
  cleanup(): Promise<void>;
}

/** A bare repository whose `main` holds one commit: the fixture's files with `extra` laid over them. */
export async function createTaskRepo(fixtureDir: string, extra: Record<string, string> = {}): Promise<TaskRepo> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'inkwell-eval-repo-')));
  const bare = path.join(base, 'origin.git');
  const work = path.join(base, 'work');
  await fs.cp(fixtureDir, work, { recursive: true });
  for (const [file, text] of Object.entries(extra)) {
    const abs = path.join(work, file);
    await fs.mkdir(path.dirname(abs), { recursive: true });
    await fs.writeFile(abs, text);
  }
  await git(['init', '--bare', '-q', '-b', 'main', bare], base);
  await git(['init', '-q', '-b', 'main', work], base);
  await git(['add', '-A'], work);
  await git(['commit', '-q', '--no-gpg-sign', '-m', 'Docs as they are'], work);
  await git(['push', '-q', bare, 'HEAD:refs/heads/main'], work);
  await fs.rm(work, { recursive: true, force: true });
  return { dir: bare, base, cleanup: () => fs.rm(base, { recursive: true, force: true }) };
}

export interface BranchCheckout {
  /** A checkout of the branch (of `main` when the branch was never pushed). */
  dir: string;
  /** Whether the branch exists in the bare repository. */
  pushed: boolean;
  files: Map<string, string>;
  changed: ChangedFile[];
}

const MAX_FILE_BYTES = 1024 * 1024;

/** Checks the pushed branch out next to the bare repository and reads its text files and its changes against main. */
export async function checkoutBranch(repo: TaskRepo, branch: string): Promise<BranchCheckout> {
  const dir = path.join(repo.base, 'result');
  await fs.rm(dir, { recursive: true, force: true });
  const pushed = (await git(['for-each-ref', '--format=%(refname)', `refs/heads/${branch}`], repo.dir)).trim() !== '';
  const ref = pushed ? branch : 'main';
  await git(['clone', '-q', '--no-hardlinks', '--branch', ref, repo.dir, dir], repo.base);
  const changed = [...parseNameStatus(await git(['diff', '--no-ext-diff', '--no-textconv', '--name-status', '-z', '-M', 'origin/main...HEAD', '--'], dir))].map(
    ([p, c]) => ({ path: p, status: c.status, oldPath: c.oldPath }),
  );
  const files = new Map<string, string>();
  for (const f of (await git(['ls-files', '-z'], dir)).split('\0').filter(Boolean)) {
    const buf = await fs.readFile(path.join(dir, f)).catch(() => null);
    if (!buf || buf.length > MAX_FILE_BYTES || buf.includes(0)) continue;
    files.set(f, buf.toString('utf8'));
  }
  return { dir, pushed, files, changed };
}
