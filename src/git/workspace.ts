// Workspace: one bare mirror per repository (<dataDir>/mirrors/<hash>), fetched before each run, and
// one detached worktree per job (<dataDir>/worktrees/<jobId>). Job branches exist only on the remote
// (pushed with HEAD:refs/heads/<branch>), so concurrent jobs never fight over a local branch.
// A finished job's worktree is cleaned and kept as a spare (<dataDir>/worktrees/.spare/<hash>/…, up to
// INKWELL_WORKTREE_POOL per repository); the next job moves a spare into place and checks out its commit,
// which writes only the files that differ instead of the whole tree.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.ts';
import { parseRepository, repositoryProblem } from '../hosts/detect.ts';
import { credentialsFor } from './credentials.ts';
import { withLock } from './lock.ts';
import { branchNameProblem } from './refs.ts';
import { GitError, type GitOptions, git } from './run.ts';

const JOB_ID_RE = /^[A-Za-z0-9_-]{1,128}$/;

export function mirrorPath(config: Pick<Config, 'dataDir'>, repository: string): string {
  const hash = crypto.createHash('sha256').update(repository).digest('hex').slice(0, 32);
  return path.join(config.dataDir, 'mirrors', hash);
}

export function worktreePath(config: Pick<Config, 'dataDir'>, jobId: string): string {
  if (!JOB_ID_RE.test(jobId)) throw new GitError(`invalid job id for a worktree: ${JSON.stringify(jobId)}`, null, '');
  return path.join(config.dataDir, 'worktrees', jobId);
}

/** The URL git is given for the remote: the project's repository as is (local paths made absolute). Never carries credentials. */
export function remoteUrl(repository: string, config: Pick<Config, 'hosts'>): string {
  const loc = parseRepository(repository, config);
  if (loc.kind === 'local' && !repository.startsWith('file://')) return loc.path;
  return repository;
}

export interface Workspace {
  dir: string;
  mirror: string;
  /** Commit the worktree starts from (the pushed branch when it exists, else the base ref). */
  startSha: string;
  baseSha: string;
  remoteBranchExists: boolean;
  /** Runs git for this repository with the credential settings applied. */
  git(args: string[], opts?: WorkspaceGitOptions): Promise<{ stdout: string; code: number; truncated?: boolean }>;
  /** The mirror's config (or hooks, or a worktree's config) had been changed outside Inkwell and was restored. */
  mirrorConfigRestored: boolean;
  /** The remote URL the mirror's config names (see `writeMirrorConfig`). */
  url: string;
}

/** What a workspace's git call may set (see `GitOptions`). */
export type WorkspaceGitOptions = Partial<Pick<GitOptions, 'cwd' | 'okCodes' | 'env' | 'maxOutputBytes' | 'timeoutMs'>>;

export interface PrepareInput {
  repository: string;
  ref: string;
  branch: string;
  jobId: string;
  signal?: AbortSignal;
}

function gitFor(config: Config, repository: string, mirror: string, signal?: AbortSignal) {
  const creds = credentialsFor(repository, config);
  return (args: string[], opts: WorkspaceGitOptions = {}) =>
    git(args, {
      cwd: opts.cwd ?? mirror,
      env: { ...creds.env, ...opts.env },
      config: creds.config,
      globalConfig: config.worker.gitConfigGlobal,
      signal,
      okCodes: opts.okCodes,
      maxOutputBytes: opts.maxOutputBytes,
      timeoutMs: opts.timeoutMs,
    });
}

async function exists(p: string): Promise<boolean> {
  return fs.stat(p).then(
    () => true,
    () => false,
  );
}

async function revParse(run: Workspace['git'], ref: string): Promise<string | null> {
  const r = await run(['rev-parse', '--verify', '-q', `${ref}^{commit}`], { okCodes: [1] });
  return r.code === 0 ? r.stdout.trim() : null;
}

/** The whole config of a mirror: Inkwell's, nothing else (see `HARDENING` in run.ts). Pure. */
export function mirrorConfigText(url: string): string {
  if (/[\0\n\r]/.test(url)) throw new GitError('repository must not contain control characters', null, '');
  // Quoted only when git's config syntax needs it (comment characters, quotes, backslashes, edge spaces).
  const quoted = /[;#"\\]|^\s|\s$/.test(url) ? `"${url.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"` : url;
  return [
    '[core]',
    '\trepositoryformatversion = 0',
    '\tfilemode = true',
    '\tbare = true',
    '[remote "origin"]',
    `\turl = ${quoted}`,
    '\tfetch = +refs/heads/*:refs/remotes/origin/*',
    '',
  ].join('\n');
}

/**
 * Writes the mirror's config from scratch when it differs from Inkwell's (anything else in it, such as
 * `core.fsmonitor`, a filter driver or an include, is gone), drops per-worktree config files and hooks.
 * Under the mirror lock. Returns whether anything had to be restored.
 */
export async function writeMirrorConfig(mirror: string, url: string): Promise<boolean> {
  const want = mirrorConfigText(url);
  const file = path.join(mirror, 'config');
  const have = await fs.readFile(file, 'utf8').catch(() => null);
  let restored = false;
  if (have !== want) {
    const tmp = `${file}.inkwell-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
    await fs.writeFile(tmp, want, { mode: 0o644 });
    await fs.rename(tmp, file);
    // A mirror made by an earlier Inkwell (`git init` + `git config`) differs only in layout: not worth a warning.
    restored = have !== null && !onlyKnownKeys(have);
  }
  const worktrees = await fs.readdir(path.join(mirror, 'worktrees')).catch(() => [] as string[]);
  for (const name of worktrees) {
    const extra = path.join(mirror, 'worktrees', name, 'config.worktree');
    if (await exists(extra)) {
      await fs.rm(extra, { force: true });
      restored = true;
    }
  }
  for (const dir of ['hooks', path.join('info', 'attributes')]) {
    const p = path.join(mirror, dir);
    const st = await fs.lstat(p).catch(() => null);
    if (!st) continue;
    const entries = st.isDirectory() ? await fs.readdir(p) : null;
    if (entries?.length === 0) continue;
    await fs.rm(p, { recursive: true, force: true });
    // git's template hooks (`*.sample`) never run: removing them is housekeeping, not a restoration.
    if (!entries?.every((e) => e.endsWith('.sample'))) restored = true;
  }
  return restored;
}

/** The keys `git init --bare` and an earlier Inkwell wrote: a config with only these was not tampered with. Pure. */
function onlyKnownKeys(text: string): boolean {
  const known = new Set([
    'core.repositoryformatversion',
    'core.filemode',
    'core.bare',
    'core.logallrefupdates',
    'core.ignorecase',
    'core.precomposeunicode',
    'remote.origin.url',
    'remote.origin.fetch',
  ]);
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"([^"]*)")?\s*\]$/.exec(line);
    if (head) {
      section = head[2] === undefined ? head[1]!.toLowerCase() : `${head[1]!.toLowerCase()}.${head[2]}`;
      continue;
    }
    const key = /^([A-Za-z][A-Za-z0-9-]*)\s*(=|$)/.exec(line)?.[1];
    if (!key || !known.has(`${section}.${key.toLowerCase()}`)) return false;
  }
  return true;
}

async function ensureMirror(mirror: string, url: string, run: Workspace['git']): Promise<boolean> {
  if (await exists(path.join(mirror, 'HEAD'))) return writeMirrorConfig(mirror, url);
  await fs.rm(mirror, { recursive: true, force: true });
  await fs.mkdir(mirror, { recursive: true });
  await run(['init', '--bare', '-q', '--template=', '.'], { cwd: mirror });
  await writeMirrorConfig(mirror, url);
  return false;
}

/**
 * Removes ref and config lock files a killed git (an aborted run) may have left in the mirror. Only
 * called while holding the mirror lock, under which every ref-changing command of the mirror runs.
 */
async function clearStaleLocks(mirror: string): Promise<void> {
  for (const name of ['packed-refs.lock', 'config.lock', 'shallow.lock', 'HEAD.lock', 'FETCH_HEAD.lock']) {
    await fs.rm(path.join(mirror, name), { force: true });
  }
  const entries = await fs.readdir(path.join(mirror, 'refs'), { recursive: true, withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    // parentPath (Node ≥ 20.12), path on older 20.x.
    const dir = e.parentPath ?? (e as unknown as { path: string }).path;
    if (e.isFile() && e.name.endsWith('.lock')) await fs.rm(path.join(dir, e.name), { force: true });
  }
}

async function dropWorktree(mirror: string, dir: string, run: Workspace['git']): Promise<void> {
  if (await exists(dir)) {
    await run(['worktree', 'remove', '--force', '--force', dir], { okCodes: [128, 1] }).catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true });
  }
  if (await exists(mirror)) await run(['worktree', 'prune']).catch(() => undefined);
}

/**
 * Fetches the mirror and (re)creates the job's worktree, clean, at the branch's pushed state (or at
 * `ref` when the branch was never pushed). Safe to call again after a crash mid-turn.
 */
export async function prepareWorkspace(config: Config, input: PrepareInput): Promise<Workspace> {
  const problem = repositoryProblem(input.repository) ?? branchNameProblem(input.branch) ?? branchNameProblem(input.ref);
  if (problem) throw new GitError(problem, null, '');
  const dir = worktreePath(config, input.jobId);
  // This turn owns the job's worktree from now on: a release of an earlier turn that has not started yet (in
  // this process or another) leaves it alone, and one under way finishes first (the job lock).
  const token = `${process.pid}-${crypto.randomBytes(8).toString('hex')}`;
  owners.set(input.jobId, token);
  await fs.mkdir(path.dirname(dir), { recursive: true });
  return withJobLock(
    dir,
    async () => {
      await fs.writeFile(ownerFile(dir), token);
      return prepareLocked(config, input, dir);
    },
    input.signal,
  );
}

async function prepareLocked(config: Config, input: PrepareInput, dir: string): Promise<Workspace> {
  const mirror = mirrorPath(config, input.repository);
  const run = gitFor(config, input.repository, mirror, input.signal);
  await fs.mkdir(path.dirname(mirror), { recursive: true });
  const pooled = config.worker.worktreePool > 0;
  const { ws, reused } = await withLock(
    mirror,
    async () => {
      const url = remoteUrl(input.repository, config);
      const mirrorConfigRestored = await ensureMirror(mirror, url, run);
      await clearStaleLocks(mirror);
      await run(['fetch', '--prune', '--no-tags', '--quiet', 'origin']);
      const baseSha = await revParse(run, `refs/remotes/origin/${input.ref}`);
      if (!baseSha) throw new GitError(`base ref "${input.ref}" does not exist in the repository`, null, '');
      const branchSha = await revParse(run, `refs/remotes/origin/${input.branch}`);
      const startSha = branchSha ?? baseSha;
      const ws: Workspace = { dir, mirror, startSha, baseSha, remoteBranchExists: branchSha !== null, git: run, mirrorConfigRestored, url };
      // The job's own worktree is still there (its next turn was queued before the last one settled, or a
      // run crashed): with the pool on it is reused in place like a spare.
      if (pooled && (await isWorktreeOf(dir, mirror))) return { ws, reused: true };
      await dropWorktree(mirror, dir, run);
      if (pooled && (await takeSpare(config, mirror, dir, run))) return { ws, reused: true };
      await addWorktree(dir, startSha, run);
      return { ws, reused: false };
    },
    { signal: input.signal },
  );
  if (reused) {
    // The worktree is this job's (only this run touches it): switch it to the start commit and drop anything
    // not in it. Both touch the worktree's own HEAD and index only, so no mirror lock. A worktree git cannot
    // switch (a killed git left its index.lock, say) is replaced by a fresh checkout.
    const switched = await run(['checkout', '--quiet', '--detach', '--force', ws.startSha], { cwd: dir })
      .then(() => run(['clean', '-ffdxq'], { cwd: dir }))
      .then(
        () => true,
        (err: unknown) => {
          if (input.signal?.aborted) throw err;
          return false;
        },
      );
    if (!switched) {
      await withLock(
        mirror,
        async () => {
          await dropWorktree(mirror, dir, run);
          await addWorktree(dir, ws.startSha, run);
        },
        { signal: input.signal },
      );
    }
  }
  return ws;
}

/** A new detached worktree at `dir` checked out at `sha`. Under the mirror lock. */
async function addWorktree(dir: string, sha: string, run: Workspace['git']): Promise<void> {
  await run(['worktree', 'add', '--detach', '--force', '--quiet', dir, sha]);
}

/** True when `dir` is a live worktree of `mirror`. */
async function isWorktreeOf(dir: string, mirror: string): Promise<boolean> {
  const owner = await mirrorOf(dir);
  if (!owner) return false;
  const [a, b] = await Promise.all([fs.realpath(owner).catch(() => owner), fs.realpath(mirror).catch(() => mirror)]);
  return a === b;
}

/** Where clean worktrees of one mirror wait for their next job. */
function spareRoot(config: Pick<Config, 'dataDir'>, mirror: string): string {
  return path.join(config.dataDir, 'worktrees', '.spare', path.basename(mirror));
}

/** Moves a spare worktree of `mirror` to `dir`; false when there is none. Under the mirror lock. */
async function takeSpare(config: Pick<Config, 'dataDir'>, mirror: string, dir: string, run: Workspace['git']): Promise<boolean> {
  const root = spareRoot(config, mirror);
  const names = await fs.readdir(root).catch(() => [] as string[]);
  for (const name of names) {
    const spare = path.join(root, name);
    const moved = await run(['worktree', 'move', spare, dir]).then(
      () => true,
      () => false,
    );
    if (moved) return true;
    // Not a worktree of this mirror any more (e.g. the mirror was re-created): discard it.
    await fs.rm(spare, { recursive: true, force: true });
    await run(['worktree', 'prune']).catch(() => undefined);
  }
  return false;
}

export interface CommitInput {
  message: string;
  authorName: string;
  authorEmail: string;
  /** Replace the worktree's HEAD commit (same parent) instead of adding one on top of it. */
  amend?: boolean;
}

/**
 * Stages everything in the worktree. The mirror's config is restored first (again): this is the first git
 * command after the agent's tools ran.
 */
export async function stageAll(ws: Workspace): Promise<void> {
  ws.mirrorConfigRestored = (await writeMirrorConfig(ws.mirror, ws.url)) || ws.mirrorConfigRestored;
  await ws.git(['add', '-A', '--', '.'], { cwd: ws.dir });
}

/** Stages everything and commits; null when the worktree has no changes. */
export async function commitAll(ws: Workspace, input: CommitInput): Promise<string | null> {
  await stageAll(ws);
  const diff = await ws.git(['diff', '--cached', '--quiet', '--no-ext-diff', '--no-textconv'], { cwd: ws.dir, okCodes: [1] });
  if (diff.code === 0) return null;
  const who = { name: input.authorName, email: input.authorEmail };
  const amend = input.amend ? ['--amend', '--allow-empty'] : [];
  await ws.git(['commit', '--quiet', '--no-verify', '--cleanup=verbatim', ...amend, '-m', input.message], {
    cwd: ws.dir,
    env: { GIT_AUTHOR_NAME: who.name, GIT_AUTHOR_EMAIL: who.email, GIT_COMMITTER_NAME: who.name, GIT_COMMITTER_EMAIL: who.email },
  });
  return (await ws.git(['rev-parse', 'HEAD'], { cwd: ws.dir })).stdout.trim();
}

/**
 * Pushes the worktree's HEAD to refs/heads/<branch> on the remote: a fast-forward, or with `replacing`, in place
 * of exactly that commit (`--force-with-lease` naming it: a branch that moved meanwhile is left alone and the
 * push fails). Under the mirror lock: the push updates the mirror's remote-tracking ref.
 */
export async function pushBranch(ws: Workspace, branch: string, signal?: AbortSignal, opts: { replacing?: string } = {}): Promise<void> {
  const lease = opts.replacing ? [`--force-with-lease=refs/heads/${branch}:${opts.replacing}`] : [];
  await withLock(ws.mirror, () => ws.git(['push', '--quiet', '--no-verify', ...lease, 'origin', `HEAD:refs/heads/${branch}`], { cwd: ws.dir }), { signal });
}

/** The author's email and the full message of commit `sha`. */
export async function commitOf(ws: Workspace, sha: string): Promise<{ authorEmail: string; message: string }> {
  const out = (await ws.git(['log', '-1', '--no-show-signature', '--format=%ae%n%B', sha, '--'], { cwd: ws.dir })).stdout;
  const nl = out.indexOf('\n');
  return nl < 0 ? { authorEmail: out.trim(), message: '' } : { authorEmail: out.slice(0, nl), message: out.slice(nl + 1) };
}

/** Number of commits the pushed branch has on top of the base ref (0 when the branch does not exist). */
export async function commitsAhead(ws: Workspace, ref: string, branch: string): Promise<number> {
  const branchSha = await revParse(ws.git, `refs/remotes/origin/${branch}`);
  if (!branchSha) return 0;
  const r = await ws.git(['rev-list', '--count', `refs/remotes/origin/${ref}..${branchSha}`]);
  return Number(r.stdout.trim()) || 0;
}

/** The mirror a worktree belongs to (from its `.git` file), or null when it is not a live worktree. */
async function mirrorOf(dir: string): Promise<string | null> {
  try {
    const dotGit = await fs.readFile(path.join(dir, '.git'), 'utf8');
    const m = /^gitdir:\s*(.+)$/m.exec(dotGit);
    // <mirror>/worktrees/<name>
    const mirror = m ? path.dirname(path.dirname(m[1]!.trim())) : null;
    return mirror && (await exists(path.join(mirror, 'HEAD'))) ? mirror : null;
  } catch {
    return null;
  }
}

/** Git for local work on a mirror's worktrees (no remote, so no credentials). */
function localGit(config: Config, mirror: string): Workspace['git'] {
  return (args, opts = {}) => git(args, { cwd: opts.cwd ?? mirror, okCodes: opts.okCodes, globalConfig: config.worker.gitConfigGlobal });
}

/** Removes a finished job's worktree (the pushed branch stays on the remote). Safe when it does not exist. */
export async function removeWorktree(config: Config, jobId: string): Promise<void> {
  const dir = worktreePath(config, jobId);
  const mirror = await mirrorOf(dir);
  if (!mirror) {
    await fs.rm(dir, { recursive: true, force: true });
    return;
  }
  await withLock(mirror, () => dropWorktree(mirror, dir, localGit(config, mirror)));
}

/** Per job, the token of the turn this process prepared last (see `prepareWorkspace`). */
const owners = new Map<string, string>();

/** Holds the token of the turn that prepared a job's worktree last, in whichever process sharing the data directory. */
const ownerFile = (dir: string) => `${dir}.owner`;

/**
 * How old a job lock may get before it is taken over (its holder died): held locks are refreshed every third
 * of this, and preparing or releasing one worktree takes seconds.
 */
const JOB_LOCK_STALE_MS = 60_000;

/** Serializes preparing and releasing one job's worktree, across processes (lock file `<worktree>.lock`). */
function withJobLock<T>(dir: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  return withLock(dir, fn, { staleMs: JOB_LOCK_STALE_MS, ...(signal ? { signal } : {}) });
}

/**
 * Done with a finished job's worktree: cleaned (reset to its commit, untracked and ignored files removed) and
 * kept as a spare for the repository's next job while fewer than `worker.worktreePool` are kept; otherwise
 * removed. Safe when it does not exist. Called when a turn settles. It runs under the job lock, so a next turn
 * of the same job that starts meanwhile (in any process) waits for it; once such a turn has prepared the
 * worktree (its token is in the owner file), the release leaves the worktree alone.
 */
export async function releaseWorktree(config: Config, jobId: string): Promise<void> {
  const token = owners.get(jobId);
  const dir = worktreePath(config, jobId);
  await fs.mkdir(path.dirname(dir), { recursive: true }); // where the lock file goes
  await withJobLock(dir, async () => {
    const owner = await fs.readFile(ownerFile(dir), 'utf8').catch(() => undefined);
    // Another turn has prepared the worktree since this process's last one (or this process never prepared it).
    if (owner !== undefined && owner !== token) return;
    await release(config, jobId);
    await fs.rm(ownerFile(dir), { force: true });
    if (owners.get(jobId) === token) owners.delete(jobId);
  });
}

/** The release itself, under the job lock. */
async function release(config: Config, jobId: string): Promise<void> {
  const dir = worktreePath(config, jobId);
  const mirror = await mirrorOf(dir);
  if (mirror && config.worker.worktreePool > 0) {
    const run = localGit(config, mirror);
    // Cleaning outside the mirror lock: it touches this worktree's own index only.
    const clean = await run(['reset', '--quiet', '--hard'], { cwd: dir })
      .then(() => run(['clean', '-ffdxq'], { cwd: dir }))
      .then(
        () => true,
        () => false,
      );
    const kept =
      clean &&
      (await withLock(mirror, async () => {
        const root = spareRoot(config, mirror);
        const spares = await fs.readdir(root).catch(() => [] as string[]);
        if (spares.length >= config.worker.worktreePool) return false;
        await fs.mkdir(root, { recursive: true });
        const spare = path.join(root, `${Date.now().toString(36)}-${crypto.randomBytes(4).toString('hex')}`);
        return run(['worktree', 'move', dir, spare]).then(
          () => true,
          () => false,
        );
      }));
    if (kept) return;
  }
  await removeWorktree(config, jobId);
}
