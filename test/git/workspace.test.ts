// Mirror + worktree workspace on real repositories: concurrency, re-creation, cleanup, validation.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Config, testConfig } from '../../src/config.ts';
import { branchNameProblem } from '../../src/git/refs.ts';
import { appendGitConfigEnv, git } from '../../src/git/run.ts';
import { commitAll, commitsAhead, mirrorPath, prepareWorkspace, pushBranch, releaseWorktree, removeWorktree, worktreePath } from '../../src/git/workspace.ts';
import { repositoryProblem } from '../../src/hosts/detect.ts';
import { applyEnv, type BareRepo, createBareRepo, insteadOfEnv, listBranchFiles, pushCommit, readBranchFile, tempDir } from '../helpers/git.ts';

let repo: BareRepo;
let config: Config;

beforeEach(() => {
  repo = createBareRepo({ files: { 'README.md': '# Docs\n', 'docs/a.md': 'a\n' } });
  config = testConfig({ dataDir: tempDir('inkwell-data-') });
});

afterEach(() => {
  repo.cleanup();
  fs.rmSync(config.dataDir, { recursive: true, force: true });
});

const author = { authorName: 'Inkwell Agent', authorEmail: 'agent@inkwell.invalid' };

/** Whether a process with this id exists (signal 0 checks without sending anything). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('workspace', () => {
  it('creates the mirror under <dataDir>/mirrors/<hash> and the worktree under <dataDir>/worktrees/<jobId>', async () => {
    const ws = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/j1-x', jobId: 'job_1' });
    expect(ws.mirror).toBe(mirrorPath(config, repo.dir));
    expect(ws.mirror.startsWith(path.join(config.dataDir, 'mirrors'))).toBe(true);
    expect(ws.dir).toBe(path.join(config.dataDir, 'worktrees', 'job_1'));
    expect(fs.readFileSync(path.join(ws.dir, 'docs/a.md'), 'utf8')).toBe('a\n');
    expect(ws.remoteBranchExists).toBe(false);
    expect(ws.startSha).toBe(ws.baseSha);
    // The mirror is bare and its remote is exactly the project's repository.
    expect(execFileSync('git', ['config', 'remote.origin.url'], { cwd: ws.mirror, encoding: 'utf8' }).trim()).toBe(repo.dir);
  });

  it('concurrent runs on one repository do not corrupt the mirror; each pushes its own branch', async () => {
    const jobs = Array.from({ length: 5 }, (_, i) => i);
    await Promise.all(
      jobs.map(async (i) => {
        const ws = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: `inkwell/c${i}`, jobId: `job_c${i}` });
        fs.writeFileSync(path.join(ws.dir, `page${i}.md`), `page ${i}\n`);
        const sha = await commitAll(ws, { message: `Add page ${i}`, ...author });
        expect(sha).toMatch(/^[0-9a-f]{40}$/);
        await pushBranch(ws, `inkwell/c${i}`);
      }),
    );
    for (const i of jobs) {
      expect(readBranchFile(repo, `inkwell/c${i}`, `page${i}.md`)).toBe(`page ${i}\n`);
      expect(listBranchFiles(repo, `inkwell/c${i}`)).toEqual(['README.md', 'docs/a.md', `page${i}.md`].sort());
    }
    const mirror = mirrorPath(config, repo.dir);
    execFileSync('git', ['fsck', '--no-progress'], { cwd: mirror });
    expect(fs.existsSync(`${mirror}.lock`)).toBe(false);
  });

  it('re-creates a job worktree at the pushed branch, clean, and counts commits ahead of the base', async () => {
    const first = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/r', jobId: 'job_r' });
    fs.writeFileSync(path.join(first.dir, 'x.md'), 'x\n');
    const sha = await commitAll(first, { message: 'Add x', ...author });
    await pushBranch(first, 'inkwell/r');
    expect(await commitsAhead(first, 'main', 'inkwell/r')).toBe(1); // push updates the mirror's remote-tracking ref
    fs.writeFileSync(path.join(first.dir, 'dirty.md'), 'uncommitted\n');
    // Worktree deleted behind our back (disk cleanup): the next turn still works.
    fs.rmSync(first.dir, { recursive: true, force: true });
    const second = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/r', jobId: 'job_r' });
    expect(second.remoteBranchExists).toBe(true);
    expect(second.startSha).toBe(sha);
    expect(fs.readFileSync(path.join(second.dir, 'x.md'), 'utf8')).toBe('x\n');
    expect(fs.existsSync(path.join(second.dir, 'dirty.md'))).toBe(false);
    expect(await commitsAhead(second, 'main', 'inkwell/r')).toBe(1);
    expect(await commitAll(second, { message: 'nothing', ...author })).toBeNull();
  });

  it('lock files left by a killed git in the mirror do not break the next run', async () => {
    const ws = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/l', jobId: 'job_l' });
    fs.writeFileSync(path.join(ws.mirror, 'refs', 'remotes', 'origin', 'main.lock'), '');
    fs.writeFileSync(path.join(ws.mirror, 'packed-refs.lock'), '');
    const moved = pushCommit(repo, 'main', { files: { 'new.md': 'new\n' } });
    const again = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/l', jobId: 'job_l' });
    expect(again.baseSha).toBe(moved);
    expect(fs.readFileSync(path.join(again.dir, 'new.md'), 'utf8')).toBe('new\n');
  });

  it('removeWorktree deletes the worktree and its registration; safe when absent', async () => {
    const ws = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/d', jobId: 'job_d' });
    await removeWorktree(config, 'job_d');
    expect(fs.existsSync(ws.dir)).toBe(false);
    const list = execFileSync('git', ['worktree', 'list', '--porcelain'], { cwd: ws.mirror, encoding: 'utf8' });
    expect(list).not.toContain('job_d');
    await removeWorktree(config, 'job_d');
    await removeWorktree(config, 'job_never');
    expect(() => worktreePath(config, '../escape')).toThrow(/invalid job id/);
  });

  describe('worktree pool (released worktrees are cleaned and reused)', () => {
    const spareDir = (mirror: string) => path.join(config.dataDir, 'worktrees', '.spare', path.basename(mirror));
    const spares = (mirror: string) => (fs.existsSync(spareDir(mirror)) ? fs.readdirSync(spareDir(mirror)) : []);
    const registered = (mirror: string) =>
      execFileSync('git', ['worktree', 'list', '--porcelain'], { cwd: mirror, encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.startsWith('worktree '))
        .map((l) => l.slice('worktree '.length));
    const tree = (dir: string): string[] =>
      fs
        .readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && !path.join(e.parentPath, e.name).includes(`${path.sep}.git`) && e.name !== '.git')
        .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
        .sort();

    it('a released worktree is cleaned and kept; the next job moves it into place at its own start commit with nothing left over', async () => {
      const first = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/p1', jobId: 'job_p1' });
      fs.writeFileSync(path.join(first.dir, 'docs/a.md'), 'edited by job 1\n');
      fs.writeFileSync(path.join(first.dir, 'pushed.md'), 'pushed\n');
      await commitAll(first, { message: 'job 1', ...author });
      await pushBranch(first, 'inkwell/p1');
      // Left behind after the commit: an uncommitted edit, an untracked file, an ignored-looking directory.
      fs.writeFileSync(path.join(first.dir, 'README.md'), 'dirty\n');
      fs.writeFileSync(path.join(first.dir, 'stray.md'), 'stray\n');
      fs.mkdirSync(path.join(first.dir, 'node_modules/x'), { recursive: true });
      fs.writeFileSync(path.join(first.dir, 'node_modules/x/i.js'), '1\n');
      const inode = fs.statSync(first.dir).ino;

      await releaseWorktree(config, 'job_p1');
      expect(fs.existsSync(first.dir)).toBe(false);
      expect(spares(first.mirror)).toHaveLength(1);
      const spare = path.join(spareDir(first.mirror), spares(first.mirror)[0]!);
      expect(fs.existsSync(path.join(spare, 'stray.md'))).toBe(false);
      expect(execFileSync('git', ['status', '--porcelain', '--ignored'], { cwd: spare, encoding: 'utf8' })).toBe('');

      // A new job on the base ref (which moved meanwhile) gets the spare: the same directory, at main's new commit.
      const moved = pushCommit(repo, 'main', { files: { 'docs/b.md': 'b\n' } });
      const second = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/p2', jobId: 'job_p2' });
      expect(fs.statSync(second.dir).ino).toBe(inode);
      expect(spares(first.mirror)).toHaveLength(0);
      expect(second.startSha).toBe(moved);
      expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: second.dir, encoding: 'utf8' }).trim()).toBe(moved);
      expect(tree(second.dir)).toEqual(['README.md', 'docs/a.md', 'docs/b.md']);
      expect(fs.readFileSync(path.join(second.dir, 'docs/a.md'), 'utf8')).toBe('a\n');
      expect(fs.readFileSync(path.join(second.dir, 'README.md'), 'utf8')).toBe('# Docs\n');
      expect(registered(first.mirror)).toContain(fs.realpathSync(second.dir));
      fs.writeFileSync(path.join(second.dir, 'c.md'), 'c\n');
      await commitAll(second, { message: 'job 2', ...author });
      await pushBranch(second, 'inkwell/p2');
      expect(listBranchFiles(repo, 'inkwell/p2')).toEqual(['README.md', 'c.md', 'docs/a.md', 'docs/b.md']);

      // A follow-up turn of job 1 starts from its pushed branch, also from a spare.
      await releaseWorktree(config, 'job_p2');
      const again = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/p1', jobId: 'job_p1' });
      expect(again.remoteBranchExists).toBe(true);
      expect(tree(again.dir)).toEqual(['README.md', 'docs/a.md', 'pushed.md']);
      expect(fs.readFileSync(path.join(again.dir, 'docs/a.md'), 'utf8')).toBe('edited by job 1\n');
      expect(await commitAll(again, { message: 'nothing', ...author })).toBeNull();
      execFileSync('git', ['fsck', '--no-progress'], { cwd: again.mirror });
    });

    it('a job whose worktree is still there (next turn queued during a run) reuses it in place, clean, at its branch', async () => {
      const first = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/in', jobId: 'job_in' });
      fs.writeFileSync(path.join(first.dir, 'turn1.md'), 'turn 1\n');
      const sha = await commitAll(first, { message: 'turn 1', ...author });
      await pushBranch(first, 'inkwell/in');
      fs.writeFileSync(path.join(first.dir, 'README.md'), 'dirty\n');
      fs.writeFileSync(path.join(first.dir, 'untracked.md'), 'x\n');
      const inode = fs.statSync(first.dir).ino;
      const second = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/in', jobId: 'job_in' });
      expect(fs.statSync(second.dir).ino).toBe(inode);
      expect(second.startSha).toBe(sha);
      expect(tree(second.dir)).toEqual(['README.md', 'docs/a.md', 'turn1.md']);
      expect(fs.readFileSync(path.join(second.dir, 'README.md'), 'utf8')).toBe('# Docs\n');
      expect(execFileSync('git', ['status', '--porcelain', '--ignored'], { cwd: second.dir, encoding: 'utf8' })).toBe('');
    });

    it("a next turn that starts while the last turn's release is under way waits for it and gets the worktree", async () => {
      const first = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/q', jobId: 'job_q' });
      fs.writeFileSync(path.join(first.dir, 'turn1.md'), 'turn 1\n');
      await commitAll(first, { message: 'turn 1', ...author });
      await pushBranch(first, 'inkwell/q');
      fs.writeFileSync(path.join(first.dir, 'left-over.md'), 'x\n');
      const inode = fs.statSync(first.dir).ino;
      // The turn settles and its release starts; a follow-up turn of the same job is claimed at once.
      const released = releaseWorktree(config, 'job_q');
      const [, next] = await Promise.all([released, prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/q', jobId: 'job_q' })]);
      expect(fs.statSync(next.dir).ino).toBe(inode); // left in place for the new turn, not moved to the pool
      expect(spares(next.mirror)).toHaveLength(0);
      expect(tree(next.dir)).toEqual(['README.md', 'docs/a.md', 'turn1.md']);
      fs.writeFileSync(path.join(next.dir, 'turn2.md'), 'turn 2\n');
      await commitAll(next, { message: 'turn 2', ...author });
      await pushBranch(next, 'inkwell/q');
      expect(listBranchFiles(repo, 'inkwell/q')).toEqual(['README.md', 'docs/a.md', 'turn1.md', 'turn2.md']);
      // Its own release later keeps it as a spare as usual.
      await releaseWorktree(config, 'job_q');
      expect(spares(next.mirror)).toHaveLength(1);
    });

    it("a release that comes after another process's next turn prepared the worktree leaves it alone", async () => {
      const first = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/x', jobId: 'job_x' });
      fs.writeFileSync(path.join(first.dir, 'turn1.md'), 'turn 1\n');
      await commitAll(first, { message: 'turn 1', ...author });
      await pushBranch(first, 'inkwell/x');
      const inode = fs.statSync(first.dir).ino;
      // The turn settled; before this process releases the worktree, another worker process claims the job's
      // next turn, prepares the worktree and starts working in it.
      const out = execFileSync(
        process.execPath,
        ['--import', 'tsx', path.join(import.meta.dirname, 'turn-process.ts'), config.dataDir, repo.dir, 'inkwell/x', 'job_x', 'turn2-work.md'],
        {
          encoding: 'utf8',
        },
      );
      expect(out.trim()).toBe(first.dir);
      await releaseWorktree(config, 'job_x');
      // Still that turn's: in place, its work untouched, not cleaned or moved to the pool.
      expect(fs.statSync(first.dir).ino).toBe(inode);
      expect(fs.readFileSync(path.join(first.dir, 'turn2-work.md'), 'utf8')).toMatch(/^written by process \d+\n$/);
      expect(spares(first.mirror)).toHaveLength(0);
      expect(tree(first.dir)).toEqual(['README.md', 'docs/a.md', 'turn1.md', 'turn2-work.md']);
      // A turn of this process prepares it again later: its own release then works as usual.
      await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/x', jobId: 'job_x' });
      await releaseWorktree(config, 'job_x');
      expect(fs.existsSync(first.dir)).toBe(false);
      expect(spares(first.mirror)).toHaveLength(1);
    });

    it('a next turn in another process waits while a release holds the job lock', async () => {
      const first = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/y', jobId: 'job_y' });
      await pushBranch(first, 'inkwell/y');
      // The release is under way (it holds the job's lock file); the other process's prepare must wait for it.
      const lockFile = `${first.dir}.lock`;
      fs.writeFileSync(lockFile, 'held\n');
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', path.join(import.meta.dirname, 'turn-process.ts'), config.dataDir, repo.dir, 'inkwell/y', 'job_y', 'turn2.md'],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      const exited = new Promise<number | null>((r) => child.on('exit', r));
      await new Promise((r) => setTimeout(r, 1500));
      expect(child.exitCode).toBeNull();
      expect(fs.existsSync(path.join(first.dir, 'turn2.md'))).toBe(false);
      fs.rmSync(lockFile);
      expect(await exited).toBe(0);
      expect(fs.existsSync(path.join(first.dir, 'turn2.md'))).toBe(true);
    });

    it('a worktree git cannot switch (index.lock left by a killed git) is replaced by a fresh checkout', async () => {
      const first = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/bk', jobId: 'job_bk' });
      const admin = fs
        .readFileSync(path.join(first.dir, '.git'), 'utf8')
        .replace(/^gitdir:\s*/, '')
        .trim();
      fs.writeFileSync(path.join(admin, 'index.lock'), '');
      fs.writeFileSync(path.join(first.dir, 'stray.md'), 'stray\n');
      const second = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/bk', jobId: 'job_bk' });
      expect(tree(second.dir)).toEqual(['README.md', 'docs/a.md']);
      fs.writeFileSync(path.join(second.dir, 'new.md'), 'new\n');
      expect(await commitAll(second, { message: 'works', ...author })).toMatch(/^[0-9a-f]{40}$/);
    });

    it('keeps at most worker.worktreePool spares per repository and removes the rest; 0 turns the pool off', async () => {
      config = { ...config, worker: { ...config.worker, worktreePool: 2 } };
      const made = await Promise.all(
        [1, 2, 3].map((i) => prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: `inkwell/k${i}`, jobId: `job_k${i}` })),
      );
      const mirror = made[0]!.mirror;
      await Promise.all([1, 2, 3].map((i) => releaseWorktree(config, `job_k${i}`)));
      expect(spares(mirror)).toHaveLength(2);
      for (const ws of made) expect(fs.existsSync(ws.dir)).toBe(false);
      // Registered worktrees are exactly the spares (the third was removed, not leaked).
      const kept = spares(mirror).map((n) => fs.realpathSync(path.join(spareDir(mirror), n)));
      expect(
        registered(mirror)
          .filter((w) => w !== mirror)
          .sort(),
      ).toEqual(kept.sort());

      const off = { ...config, worker: { ...config.worker, worktreePool: 0 } };
      const ws = await prepareWorkspace(off, { repository: repo.dir, ref: 'main', branch: 'inkwell/k4', jobId: 'job_k4' });
      expect(spares(mirror)).toHaveLength(2); // not taken
      await releaseWorktree(off, 'job_k4');
      expect(fs.existsSync(ws.dir)).toBe(false);
      expect(spares(mirror)).toHaveLength(2);
      expect(registered(mirror)).not.toContain(ws.dir);
    });

    it('a spare that is no longer a worktree of the mirror is discarded and the job gets a fresh checkout', async () => {
      const ws = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/s1', jobId: 'job_s1' });
      await releaseWorktree(config, 'job_s1');
      const [name] = spares(ws.mirror);
      // Its registration is gone (e.g. an operator ran `git worktree prune` after deleting files) and it holds junk.
      const spare = path.join(spareDir(ws.mirror), name!);
      fs.rmSync(path.join(spare, '.git'));
      fs.writeFileSync(path.join(spare, 'junk.md'), 'junk\n');
      execFileSync('git', ['worktree', 'prune'], { cwd: ws.mirror });
      const next = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/s2', jobId: 'job_s2' });
      expect(tree(next.dir)).toEqual(['README.md', 'docs/a.md']);
      expect(spares(ws.mirror)).toHaveLength(0);
      expect(fs.existsSync(spare)).toBe(false);
    });

    it('spares belong to one repository: another repository never gets them', async () => {
      const other = createBareRepo({ files: { 'other.md': 'o\n' } });
      try {
        const a = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: 'inkwell/r1', jobId: 'job_r1' });
        await releaseWorktree(config, 'job_r1');
        const b = await prepareWorkspace(config, { repository: other.dir, ref: 'main', branch: 'inkwell/r2', jobId: 'job_r2' });
        expect(tree(b.dir)).toEqual(['other.md']);
        expect(spares(a.mirror)).toHaveLength(1);
      } finally {
        other.cleanup();
      }
    });

    it('concurrent jobs taking and releasing spares each get a clean worktree of their own', async () => {
      for (let round = 0; round < 3; round++) {
        await Promise.all(
          [0, 1, 2, 3].map(async (i) => {
            const id = `job_x${round}_${i}`;
            const ws = await prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch: `inkwell/x${round}-${i}`, jobId: id });
            expect(tree(ws.dir)).toEqual(['README.md', 'docs/a.md']);
            fs.writeFileSync(path.join(ws.dir, `page${i}.md`), `${round}/${i}\n`);
            await commitAll(ws, { message: `page ${i}`, ...author });
            await pushBranch(ws, `inkwell/x${round}-${i}`);
            await releaseWorktree(config, id);
          }),
        );
        for (const i of [0, 1, 2, 3]) expect(listBranchFiles(repo, `inkwell/x${round}-${i}`)).toEqual(['README.md', 'docs/a.md', `page${i}.md`]);
      }
      const mirror = mirrorPath(config, repo.dir);
      expect(spares(mirror).length).toBeLessThanOrEqual(config.worker.worktreePool);
      execFileSync('git', ['fsck', '--no-progress'], { cwd: mirror });
    });
  });

  it('keeps operator GIT_CONFIG_* settings (url.<base>.insteadOf) and appends its own after them', async () => {
    const restore = applyEnv(insteadOfEnv({ 'https://git.example.com/acme/docs': repo.dir }));
    try {
      const ws = await prepareWorkspace(config, { repository: 'https://git.example.com/acme/docs', ref: 'main', branch: 'inkwell/i', jobId: 'job_i' });
      expect(fs.readFileSync(path.join(ws.dir, 'README.md'), 'utf8')).toBe('# Docs\n');
      expect(execFileSync('git', ['config', 'remote.origin.url'], { cwd: ws.mirror, encoding: 'utf8' }).trim()).toBe('https://git.example.com/acme/docs');
    } finally {
      restore();
    }
    expect(appendGitConfigEnv({ GIT_CONFIG_COUNT: '2' }, [['a.b', 'c']])).toEqual({ GIT_CONFIG_KEY_2: 'a.b', GIT_CONFIG_VALUE_2: 'c', GIT_CONFIG_COUNT: '3' });
    expect(appendGitConfigEnv({}, [['a.b', 'c']])).toEqual({ GIT_CONFIG_KEY_0: 'a.b', GIT_CONFIG_VALUE_0: 'c', GIT_CONFIG_COUNT: '1' });
    expect(appendGitConfigEnv({ GIT_CONFIG_COUNT: '4' }, [])).toEqual({});
  });

  it('refuses bad branch names and repository strings before running git', async () => {
    for (const branch of ['-x', 'a..b', 'a b', 'a~1', 'x.lock', '.hidden', 'a/.b', 'HEAD', '', 'a//b', 'a:b']) {
      expect(branchNameProblem(branch), branch).not.toBeNull();
      await expect(prepareWorkspace(config, { repository: repo.dir, ref: 'main', branch, jobId: 'job_b' })).rejects.toThrow();
    }
    for (const ok of ['inkwell/abc123-fix-typo', 'feature/Docs_v2', 'main']) expect(branchNameProblem(ok)).toBeNull();
    for (const bad of [
      '--upload-pack=touch /tmp/x',
      'ext::sh -c touch% /tmp/pwned',
      'https://user:pw@github.com/a/b',
      'ftp://x/y',
      ' https://github.com/a/b',
    ]) {
      expect(repositoryProblem(bad), bad).not.toBeNull();
    }
    for (const ok of ['https://github.com/a/b', 'git@github.com:a/b.git', '/srv/repo.git', 'file:///srv/repo.git', 'ssh://git@host/a/b.git']) {
      expect(repositoryProblem(ok), ok).toBeNull();
    }
    expect(fs.existsSync('/tmp/pwned')).toBe(false);
  });

  it('the git wrapper reports failures with the exit code and scrubbed stderr, and stops on abort', async () => {
    const err = await git(['rev-parse', '--verify', 'nope'], { cwd: repo.dir }).catch((e) => e);
    expect(err.name).toBe('GitError');
    expect(err.exitCode).toBe(128);
    // A command that never ends by itself (only the abort can stop it); it writes its pid once it runs.
    const pidFile = path.join(tempDir('inkwell-git-abort-'), 'pid');
    const controller = new AbortController();
    const slow = git(['-c', `alias.slow=!echo $$ > '${pidFile}' && exec sleep 600`, 'slow'], { cwd: repo.dir, signal: controller.signal }).catch((e) => e);
    const pid = await vi.waitFor(
      () => {
        const text = fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8').trim() : '';
        if (!text) throw new Error('the command has not started yet');
        return Number(text);
      },
      { timeout: 60_000, interval: 10 },
    );
    controller.abort();
    expect((await slow).name).toBe('AbortError');
    // The stop reaches the running command too (git ends its alias's process when it is terminated).
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 60_000, interval: 10 });
  });
});
