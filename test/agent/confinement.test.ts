// Confinement under concurrency and hostile repository contents: tool calls racing each other (the
// attack of issue 13: a symlink moved while another call writes through it) and an adversary that keeps
// swapping a directory for a symlink out of the worktree while the tools work. Whatever the
// interleaving, nothing outside the worktree is read, written, moved or deleted, and nothing in `.git`.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfinedTree, followLink, readAll, setProcFdUsableForTesting, TooLargeError } from '../../src/agent/confined-fs.ts';
import { createToolImplementations } from '../../src/agent/tools.ts';
import { tempDir } from '../helpers/git.ts';

let base: string;
let root: string;
let outside: string;

/** Every file and link under `dir` with its content or target (what "unchanged" is checked against). */
function snapshot(dir: string, skip?: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (p === skip) continue;
      if (e.isSymbolicLink()) out[path.relative(dir, p)] = `-> ${fs.readlinkSync(p)}`;
      else if (e.isDirectory()) {
        out[`${path.relative(dir, p)}/`] = 'dir';
        visit(p);
      } else out[path.relative(dir, p)] = fs.readFileSync(p, 'utf8');
    }
  };
  visit(dir);
  return out;
}

beforeEach(() => {
  // base/outside.txt, base/data/mirror/config, base/data/worktrees/job/<repo>: the layout of the data
  // directory, with the worktree two levels below what an escape would overwrite.
  base = tempDir('inkwell-confine-');
  outside = path.join(base, 'data');
  root = path.join(outside, 'worktrees', 'job');
  fs.mkdirSync(path.join(outside, 'mirror'), { recursive: true });
  fs.writeFileSync(path.join(outside, 'mirror', 'config'), '[core]\n\tbare = true\n');
  fs.writeFileSync(path.join(base, 'outside.txt'), 'outside secret\n');
  fs.mkdirSync(path.join(root, 'docs', 'deep'), { recursive: true });
  fs.mkdirSync(path.join(root, '.git'));
  fs.writeFileSync(path.join(root, '.git', 'config'), '[core]\n');
  fs.writeFileSync(path.join(root, 'docs', 'a.md'), 'alpha\n');
  fs.symlinkSync('..', path.join(root, 'docs', 'up'));
  fs.symlinkSync('../..', path.join(root, 'docs', 'deep', 'up2'));
});

afterEach(() => {
  setProcFdUsableForTesting(undefined);
  fs.rmSync(base, { recursive: true, force: true });
});

const outsideState = () => snapshot(base, root);

describe('readAll: the size cap holds for a file that grows during the read', () => {
  // The file really grows on disk between the size check (stat) and the read: the stat below appends to it
  // before it answers, as a parallel write in the same step could.
  async function readGrowing(initial: number, grow: number, cap: number): Promise<Buffer> {
    const file = path.join(tempDir(), 'page.md');
    fs.writeFileSync(file, 'a'.repeat(initial));
    const fh = await fs.promises.open(file, 'r');
    try {
      const growing = {
        stat: async () => {
          const st = await fh.stat();
          fs.appendFileSync(file, 'b'.repeat(grow));
          return st;
        },
        read: (buffer: Buffer, offset: number, length: number, position: number) => fh.read(buffer, offset, length, position),
      };
      return await readAll(growing, 'page.md', cap);
    } finally {
      await fh.close();
    }
  }

  it('refuses a file that grows past the cap after its size was checked, having read at most cap + 1 bytes', async () => {
    const err = await readGrowing(10, 5_000, 100).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TooLargeError);
    expect((err as TooLargeError).message).toBe('"page.md" grew past 100 bytes while it was being read; files over 100 bytes cannot be read');
    expect((err as TooLargeError).size).toBe(101);
  });

  it('reads the whole file when it grows but stays within the cap', async () => {
    const content = await readGrowing(10, 50, 100);
    expect(content.toString()).toBe(`${'a'.repeat(10)}${'b'.repeat(50)}`);
  });

  it('reads a file of exactly the cap, and an empty file', async () => {
    expect((await readGrowing(100, 0, 100)).length).toBe(100);
    expect((await readGrowing(0, 0, 100)).length).toBe(0);
  });
});

describe('followLink (pure)', () => {
  it('resolves relative targets against the link’s directory and refuses escapes, absolute targets and .git', () => {
    expect(followLink('x', 'docs/up', '..')).toBe('');
    expect(followLink('x', 'docs/up', '..', ['docs', 'a.md'])).toBe('docs/a.md');
    expect(followLink('x', 'a/b/link', '../c/./d/')).toBe('a/c/d');
    expect(() => followLink('x', 'docs/deep/up2', '../../..')).toThrow(/points outside the repository/);
    expect(() => followLink('x', 'd', '../..')).toThrow(/points outside the repository/);
    expect(() => followLink('x', 'link', '/etc/passwd')).toThrow(/points outside the repository/);
    expect(() => followLink('x', 'link', 'C:\\Windows')).toThrow(/points outside the repository/);
    expect(() => followLink('x', 'docs/g', '../.git')).toThrow(/points into \.git/);
    expect(() => followLink('x', 'docs/g', '../.GIT/hooks')).toThrow(/points into \.git/);
  });
});

for (const mode of ['descriptors (/proc/self/fd)', 'paths, one operation at a time'] as const) {
  describe(`confinement with ${mode}`, () => {
    beforeEach(() => {
      setProcFdUsableForTesting(mode.startsWith('paths') ? false : undefined);
    });

    it('the parallel move_file + write_file of issue 13 never writes outside the worktree', async () => {
      const tools = createToolImplementations(root);
      const before = outsideState();
      const outcomes: Array<PromiseSettledResult<unknown>> = [];
      for (let round = 0; round < 25; round++) {
        // Put the link back where the attack expects it (a refused move leaves it in place).
        if (!fs.existsSync(path.join(root, 'docs', 'deep', 'up2'))) fs.symlinkSync('../..', path.join(root, 'docs', 'deep', 'up2'));
        fs.rmSync(path.join(root, 'd'), { recursive: true, force: true });
        const calls = [
          tools.move_file({ from: 'docs/deep/up2', to: 'd' }),
          tools.write_file({ path: 'docs/up/docs/up/d/X', content: 'pwned\n' }),
          tools.write_file({ path: 'docs/up/docs/up/d/mirror/config', content: '[core]\n\tfsmonitor = touch /tmp/pwned\n' }),
          tools.write_file({ path: 'docs/up/d/worktrees/job/escaped.md', content: 'pwned\n' }),
          tools.move_file({ from: 'docs/a.md', to: 'docs/up/docs/up/d/stolen.md' }),
          tools.delete_file({ path: 'docs/up/docs/up/d/mirror/config' }),
          tools.read_file({ path: 'd/mirror/config' }),
        ];
        outcomes.push(...(await Promise.allSettled(calls)));
        if (fs.existsSync(path.join(root, 'd', 'stolen.md'))) fs.renameSync(path.join(root, 'd', 'stolen.md'), path.join(root, 'docs', 'a.md'));
        expect(outsideState()).toEqual(before);
      }
      // The link is never moved to where it would point out of the worktree.
      expect(fs.lstatSync(path.join(root, 'docs', 'deep', 'up2')).isSymbolicLink()).toBe(true);
      const refusals = outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason.message));
      expect(refusals.some((m) => /symlink "docs\/deep\/up2" cannot be moved to "d"/.test(m))).toBe(true);
      // Nothing read leaked the mirror's config.
      for (const o of outcomes) if (o.status === 'fulfilled') expect(JSON.stringify(o.value)).not.toContain('bare = true');
    });

    // Only descriptors hold against a writer other than the tools themselves; the fallback serialises the
    // tools' own operations (the only writers during a run) and is not claimed to.
    it.skipIf(mode.startsWith('paths'))('an adversary swapping a directory for a link out of the worktree never gets a tool outside it', async () => {
      const tree = new ConfinedTree(root);
      fs.writeFileSync(path.join(outside, 'target.md'), 'outside content\n');
      const before = outsideState();
      const sub = path.join(root, 'docs', 'sub');
      let stop = false;
      let swaps = 0;
      // The adversary: `docs/sub` flips between a real directory and a link to ../../.. (the data dir).
      const adversary = (async () => {
        while (!stop) {
          // The tools create `docs/sub` too (write_file makes parents): the adversary tolerates losing a race.
          try {
            fs.rmSync(sub, { recursive: true, force: true });
            if (swaps % 2 === 0) fs.symlinkSync('../../..', sub);
            else {
              fs.mkdirSync(sub);
              fs.writeFileSync(path.join(sub, 'target.md'), 'inside content\n');
            }
            swaps++;
          } catch {}
          await new Promise((r) => setImmediate(r));
        }
      })();
      const reads: string[] = [];
      try {
        for (let i = 0; i < 50; i++) {
          const results = await Promise.allSettled([
            tree.write('docs/sub/target.md', 'written\n'),
            tree.write('docs/sub/new/file.md', 'written\n'),
            tree.read('docs/sub/target.md').then((r) => reads.push(r.content.toString('utf8'))),
            tree.update('docs/sub/target.md', (t) => `${t.toString('utf8')}edited\n`),
            tree.remove('docs/sub/target.md'),
            tree.move('docs/sub/target.md', `docs/moved-${i}.md`),
            tree.move('docs/a.md', 'docs/sub/a.md').then(() => tree.move('docs/sub/a.md', 'docs/a.md')),
            tree.list('docs/sub', 100),
          ]);
          for (const r of results) {
            if (r.status === 'rejected') expect(r.reason?.constructor?.name, String(r.reason?.stack)).toMatch(/ConfinedError|Error/);
          }
        }
      } finally {
        stop = true;
        await adversary;
      }
      expect(swaps).toBeGreaterThan(10);
      expect(outsideState()).toEqual(before);
      expect(reads.every((r) => !r.includes('outside content'))).toBe(true);
    });

    it('refuses .git and links into it, also when the link is made meanwhile', async () => {
      const tools = createToolImplementations(root);
      fs.symlinkSync('../.git', path.join(root, 'docs', 'g'));
      await expect(tools.write_file({ path: 'docs/g/config', content: 'x' })).rejects.toThrow(/points into \.git/);
      await expect(tools.read_file({ path: 'docs/g/config' })).rejects.toThrow(/points into \.git/);
      await expect(tools.move_file({ from: 'docs/g', to: 'docs/deep/g' })).rejects.toThrow(/cannot be moved/);
      await expect(tools.move_file({ from: 'docs/a.md', to: 'docs/g/hooks/pre-commit' })).rejects.toThrow(/points into \.git/);
      expect(fs.readFileSync(path.join(root, '.git', 'config'), 'utf8')).toBe('[core]\n');
      expect(fs.readdirSync(path.join(root, '.git'))).toEqual(['config']);
    });

    it('moves a link that still points inside from its new place, and deletes links themselves', async () => {
      const tools = createToolImplementations(root);
      fs.symlinkSync('a.md', path.join(root, 'docs', 'alias.md'));
      // From the root, `a.md` would name a file at the root: still inside, so allowed.
      await tools.move_file({ from: 'docs/alias.md', to: 'alias.md' });
      expect(fs.readlinkSync(path.join(root, 'alias.md'))).toBe('a.md');
      await tools.delete_file({ path: 'docs/deep/up2' });
      expect(fs.existsSync(path.join(root, 'docs', 'deep', 'up2'))).toBe(false);
      expect(fs.existsSync(path.join(outside, 'mirror', 'config'))).toBe(true);
    });
  });
}
