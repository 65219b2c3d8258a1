// The branch diff (src/git/diff.ts) on real repositories through the hardened runner: stats, renames, binary
// files, awkward paths, the merge base, and the cap on the text (git stopped once its output reaches it).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { branchDiff, capDiffText, diffFiles } from '../../src/git/diff.ts';
import { git } from '../../src/git/run.ts';
import type { Workspace } from '../../src/git/workspace.ts';
import { gitSync, tempDir } from '../helpers/git.ts';

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  dirs = [];
});

/** A repository with `main` holding `files`; returns its path and a runner like a workspace's. */
function repoWith(files: Record<string, string | Buffer>): {
  dir: string;
  run: Workspace['git'];
  commit(files: Record<string, string | Buffer | null>): string;
} {
  const dir = tempDir('inkwell-diff-');
  dirs.push(dir);
  gitSync(['init', '-q', '-b', 'main', dir], dir);
  const commit = (change: Record<string, string | Buffer | null>) => {
    for (const [p, content] of Object.entries(change)) {
      const abs = path.join(dir, p);
      if (content === null) fs.rmSync(abs);
      else {
        fs.mkdirSync(path.dirname(abs), { recursive: true });
        fs.writeFileSync(abs, content);
      }
    }
    gitSync(['add', '-A'], dir);
    gitSync(['commit', '-q', '--no-gpg-sign', '-m', 'change'], dir);
    return gitSync(['rev-parse', 'HEAD'], dir).trim();
  };
  commit(files);
  const run: Workspace['git'] = (args, opts = {}) =>
    git(args, { cwd: opts.cwd ?? dir, ...(opts.okCodes ? { okCodes: opts.okCodes } : {}), maxOutputBytes: opts.maxOutputBytes });
  return { dir, run, commit };
}

const lines = (n: number, word: string) => `${Array.from({ length: n }, (_, i) => `${word} ${i + 1}`).join('\n')}\n`;

describe('branchDiff on a real repository', () => {
  it('lists edits, additions, deletions, renames and binary files with their line counts; the text is the unified diff', async () => {
    const r = repoWith({ 'docs/intro.md': lines(5, 'intro'), 'docs/setup.md': lines(20, 'setup step'), 'img/old.bin': Buffer.from([0, 1, 2, 3]) });
    const base = gitSync(['rev-parse', 'HEAD'], r.dir).trim();
    gitSync(['checkout', '-q', '-b', 'job'], r.dir);
    fs.mkdirSync(path.join(r.dir, 'docs/guide'));
    fs.renameSync(path.join(r.dir, 'docs/setup.md'), path.join(r.dir, 'docs/guide/setup.md'));
    const head = r.commit({
      'docs/intro.md': lines(5, 'intro').replace('intro 3\n', 'intro three\nintro 3b\n'),
      'docs/new page.md': 'é\n',
      'img/old.bin': null,
      'img/new.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1]),
    });
    const d = await branchDiff(r.run, 'main', head);
    expect(d.base).toBe(base);
    expect(d.head).toBe(head);
    expect(d.truncated).toBe(false);
    expect(d.files).toEqual([
      { path: 'docs/guide/setup.md', oldPath: 'docs/setup.md', status: 'renamed', additions: 0, deletions: 0, binary: false },
      { path: 'docs/intro.md', oldPath: null, status: 'modified', additions: 2, deletions: 1, binary: false },
      { path: 'docs/new page.md', oldPath: null, status: 'added', additions: 1, deletions: 0, binary: false },
      { path: 'img/new.png', oldPath: null, status: 'added', additions: 0, deletions: 0, binary: true },
      { path: 'img/old.bin', oldPath: null, status: 'deleted', additions: 0, deletions: 0, binary: true },
    ]);
    expect(d.diff).toContain('rename from docs/setup.md\nrename to docs/guide/setup.md\n');
    expect(d.diff).toContain('-intro 3\n+intro three\n+intro 3b\n');
    expect(d.diff).toContain('Binary files /dev/null and b/img/new.png differ');
    expect(d.diff).not.toContain('\x1b');
  });

  it('diffs against the merge base: commits on the base ref after the branch forked are not in it', async () => {
    const r = repoWith({ 'a.md': 'a\n' });
    const fork = gitSync(['rev-parse', 'HEAD'], r.dir).trim();
    gitSync(['checkout', '-q', '-b', 'job'], r.dir);
    const head = r.commit({ 'b.md': 'b\n' });
    gitSync(['checkout', '-q', 'main'], r.dir);
    r.commit({ 'c.md': 'c\n' });
    const d = await branchDiff(r.run, 'main', head);
    expect(d.base).toBe(fork);
    expect(d.files.map((f) => f.path)).toEqual(['b.md']);
  });

  it('paths with tabs, newlines and quotes are read exactly (NUL-separated listings)', async () => {
    const r = repoWith({ 'x.md': 'x\n' });
    gitSync(['checkout', '-q', '-b', 'job'], r.dir);
    const head = r.commit({ 'odd\tname\n"q".md': 'one\ntwo\n' });
    const d = await branchDiff(r.run, 'main', head);
    expect(d.files).toEqual([{ path: 'odd\tname\n"q".md', oldPath: null, status: 'added', additions: 2, deletions: 0, binary: false }]);
  });

  it('a text over the cap keeps whole files and says truncated; git is stopped at the cap; the stats stay complete', async () => {
    const r = repoWith({ 'keep.md': 'k\n' });
    gitSync(['checkout', '-q', '-b', 'job'], r.dir);
    const head = r.commit({ 'a.md': lines(10, 'small'), 'b.md': lines(20_000, 'repository text') });
    const d = await branchDiff(r.run, 'main', head, 4096);
    expect(d.truncated).toBe(true);
    expect(Buffer.byteLength(d.diff)).toBeLessThanOrEqual(4096);
    expect(d.diff).toContain('+small 10\n');
    expect(d.diff).not.toContain('b.md');
    expect(d.files).toEqual([
      { path: 'a.md', oldPath: null, status: 'added', additions: 10, deletions: 0, binary: false },
      { path: 'b.md', oldPath: null, status: 'added', additions: 20_000, deletions: 0, binary: false },
    ]);
    const whole = await branchDiff(r.run, 'main', head);
    expect(whole.truncated).toBe(false);
    expect(whole.diff.startsWith(d.diff)).toBe(true);
  });
});

describe('capDiffText', () => {
  const file = (name: string, body: string) => `diff --git a/${name} b/${name}\n--- a/${name}\n+++ b/${name}\n@@ -0,0 +1 @@\n+${body}\n`;

  it('keeps a text within the cap as it is', () => {
    const text = file('a', 'x');
    expect(capDiffText(text, Buffer.byteLength(text))).toEqual({ diff: text, truncated: false });
  });

  it('cuts before the first file that does not fit, or at a line when not even one fits', () => {
    const a = file('a', 'x');
    const b = file('b', 'y'.repeat(100));
    expect(capDiffText(a + b, a.length + 10)).toEqual({ diff: a, truncated: true });
    const cut = capDiffText(b, 60);
    expect(cut.truncated).toBe(true);
    expect(b.startsWith(cut.diff)).toBe(true);
    expect(cut.diff.endsWith('\n')).toBe(true);
  });

  it('never splits a character: the cap counts UTF-8 bytes', () => {
    const text = `${'é'.repeat(10)}\n${'é'.repeat(10)}\n`;
    const cut = capDiffText(text, 30);
    expect(cut).toEqual({ diff: `${'é'.repeat(10)}\n`, truncated: true });
  });

  it('a text git stopped early is truncated even within the cap', () => {
    expect(capDiffText(file('a', 'x') + file('b', 'y'), 1000, true).truncated).toBe(true);
  });
});

describe('diffFiles', () => {
  it('joins the name-status and numstat listings by path, renames by their new path', () => {
    const nameStatus = ['M', 'a.md', 'R087', 'old.md', 'new.md', 'A', 'pic.png', 'D', 'gone.md', ''].join('\0');
    const numstat = ['3\t1\ta.md', '1\t1\t', 'old.md', 'new.md', '-\t-\tpic.png', '0\t4\tgone.md', ''].join('\0');
    expect(diffFiles(nameStatus, numstat)).toEqual([
      { path: 'a.md', oldPath: null, status: 'modified', additions: 3, deletions: 1, binary: false },
      { path: 'new.md', oldPath: 'old.md', status: 'renamed', additions: 1, deletions: 1, binary: false },
      { path: 'pic.png', oldPath: null, status: 'added', additions: 0, deletions: 0, binary: true },
      { path: 'gone.md', oldPath: null, status: 'deleted', additions: 0, deletions: 4, binary: false },
    ]);
  });
});
