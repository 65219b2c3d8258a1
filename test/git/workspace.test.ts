// Mirror + worktree workspace on real repositories: concurrency, re-creation, cleanup, validation.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Config, testConfig } from '../../src/config.ts';
import { branchNameProblem } from '../../src/git/refs.ts';
import { appendGitConfigEnv, git } from '../../src/git/run.ts';
import { commitAll, commitsAhead, mirrorPath, prepareWorkspace, pushBranch, removeWorktree, worktreePath } from '../../src/git/workspace.ts';
import { repositoryProblem } from '../../src/hosts/detect.ts';
import { applyEnv, type BareRepo, createBareRepo, insteadOfEnv, listBranchFiles, readBranchFile, tempDir } from '../helpers/git.ts';

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
    const { pushCommit } = await import('../helpers/git.ts');
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
    const controller = new AbortController();
    const slow = git(['-c', 'alias.slow=!sleep 5', 'slow'], { cwd: repo.dir, signal: controller.signal }).catch((e) => e);
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    expect((await slow).name).toBe('AbortError');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
