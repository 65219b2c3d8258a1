// Real git repositories in temp directories for tests: bare "remotes" with content, readers for what
// got pushed, and the GIT_CONFIG_* / url.<base>.insteadOf environment that maps a GitHub URL onto a
// local bare repository (the same mechanism an operator would use, SPEC 3.4).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const AUTHOR = {
  GIT_AUTHOR_NAME: 'Test Author',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'Test Author',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
};

export function gitSync(args: string[], cwd: string, env: Record<string, string> = {}): string {
  return execFileSync('git', args, { cwd, env: { ...process.env, ...AUTHOR, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function tempDir(prefix = 'inkwell-test-'): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export interface BareRepo {
  /** Path of the bare repository. */
  dir: string;
  /** file:// URL of it. */
  url: string;
  /** Default branch the files were committed on. */
  branch: string;
  cleanup(): void;
}

export interface RepoContent {
  /** path → content */
  files: Record<string, string>;
  /** path → symlink target (as written by `ln -s target path`) */
  symlinks?: Record<string, string>;
  branch?: string;
  message?: string;
}

function writeTree(root: string, content: Pick<RepoContent, 'files' | 'symlinks'>): void {
  for (const [p, text] of Object.entries(content.files)) {
    const abs = path.join(root, p);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, text);
  }
  for (const [p, target] of Object.entries(content.symlinks ?? {})) {
    const abs = path.join(root, p);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.symlinkSync(target, abs);
  }
}

/** A bare repository whose `branch` (default main) holds one commit with the given files. */
export function createBareRepo(content: RepoContent): BareRepo {
  const base = tempDir('inkwell-repo-');
  const dir = path.join(base, 'origin.git');
  const work = path.join(base, 'work');
  const branch = content.branch ?? 'main';
  gitSync(['init', '--bare', '-q', '-b', branch, dir], base);
  gitSync(['init', '-q', '-b', branch, work], base);
  writeTree(work, content);
  gitSync(['add', '-A'], work);
  gitSync(['commit', '-q', '--no-gpg-sign', '-m', content.message ?? 'Initial content'], work);
  gitSync(['push', '-q', dir, `HEAD:refs/heads/${branch}`], work);
  fs.rmSync(work, { recursive: true, force: true });
  return { dir, url: `file://${dir}`, branch, cleanup: () => fs.rmSync(base, { recursive: true, force: true }) };
}

/** Commits files on top of `branch` (creating it from `from` when missing), as another person would. */
export function pushCommit(
  repo: Pick<BareRepo, 'dir'>,
  branch: string,
  content: Pick<RepoContent, 'files' | 'symlinks'> & { from?: string; message?: string },
): string {
  const work = tempDir('inkwell-clone-');
  try {
    gitSync(['clone', '-q', '--no-checkout', repo.dir, work], work);
    const start = branchExists(repo, branch) ? `origin/${branch}` : `origin/${content.from ?? 'main'}`;
    gitSync(['checkout', '-q', '-B', branch, start], work);
    writeTree(work, content);
    gitSync(['add', '-A'], work);
    gitSync(['commit', '-q', '--no-gpg-sign', '-m', content.message ?? 'Another change'], work);
    gitSync(['push', '-q', 'origin', `HEAD:refs/heads/${branch}`], work);
    return gitSync(['rev-parse', 'HEAD'], work).trim();
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

export function branchExists(repo: Pick<BareRepo, 'dir'>, branch: string): boolean {
  try {
    gitSync(['rev-parse', '--verify', '-q', `refs/heads/${branch}`], repo.dir);
    return true;
  } catch {
    return false;
  }
}

export function branches(repo: Pick<BareRepo, 'dir'>): string[] {
  return gitSync(['for-each-ref', '--format=%(refname:short)', 'refs/heads'], repo.dir).split('\n').filter(Boolean).sort();
}

/** File content on a branch, or null when the file (or branch) does not exist. */
export function readBranchFile(repo: Pick<BareRepo, 'dir'>, branch: string, file: string): string | null {
  try {
    return gitSync(['show', `refs/heads/${branch}:${file}`], repo.dir);
  } catch {
    return null;
  }
}

/** Files on a branch (recursive, sorted). */
export function listBranchFiles(repo: Pick<BareRepo, 'dir'>, branch: string): string[] {
  return gitSync(['ls-tree', '-r', '--name-only', `refs/heads/${branch}`], repo.dir)
    .split('\n')
    .filter(Boolean)
    .sort();
}

export interface CommitInfo {
  sha: string;
  subject: string;
  body: string;
  authorName: string;
  authorEmail: string;
}

/** Commits on `branch` that are not on `base`, newest first. */
export function commitsBetween(repo: Pick<BareRepo, 'dir'>, base: string, branch: string): CommitInfo[] {
  const out = gitSync(['log', '--format=%H%x1f%s%x1f%an%x1f%ae%x1f%b%x1e', `refs/heads/${base}..refs/heads/${branch}`], repo.dir);
  return out
    .split('\x1e')
    .map((r) => r.trim())
    .filter(Boolean)
    .map((r) => {
      const [sha, subject, authorName, authorEmail, body] = r.split('\x1f') as [string, string, string, string, string];
      return { sha, subject, authorName, authorEmail, body: (body ?? '').trim() };
    });
}

/**
 * Environment entries that make git fetch/push `fromUrl` (e.g. https://github.com/acme/docs) from/to
 * a local bare repository, via `url.<local>.insteadOf`, appended to any GIT_CONFIG_* already set.
 */
export function insteadOfEnv(map: Record<string, string>, base: Record<string, string | undefined> = process.env): Record<string, string> {
  const start = Number(base.GIT_CONFIG_COUNT ?? 0) || 0;
  const env: Record<string, string> = {};
  Object.entries(map).forEach(([fromUrl, local], i) => {
    env[`GIT_CONFIG_KEY_${start + i}`] = `url.${local}.insteadOf`;
    env[`GIT_CONFIG_VALUE_${start + i}`] = fromUrl;
  });
  env.GIT_CONFIG_COUNT = String(start + Object.keys(map).length);
  return env;
}

/** Sets environment entries on process.env (git children inherit them); returns a restore function. */
export function applyEnv(env: Record<string, string>): () => void {
  const previous = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  return () => {
    for (const [k, v] of Object.entries(previous)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
