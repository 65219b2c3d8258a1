// The tools on a real directory: results, every error the model can read, and confinement
// (`../`, absolute paths, `.git`, symlinks out) with nothing written outside the worktree.
import fs from 'node:fs';
import path from 'node:path';
import { asSchema, type JSONSchema7 } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { searchFiles } from '../../src/agent/search.ts';
import { createTools, LIMITS, TOOL_NAMES, type ToolName } from '../../src/agent/tools.ts';
import { tempDir } from '../helpers/git.ts';
import { requestText } from '../helpers/model-server.ts';
import { type Harness, startHarness } from './harness.ts';

let base: string;
let root: string;
let outside: string;
type Call = { id: string; tool: ToolName; ok?: boolean; summary?: string; args?: Record<string, unknown> };
let calls: Call[];
let tools: ReturnType<typeof createTools>;

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) visit(p);
      else if (e.isSymbolicLink()) out[path.relative(dir, p)] = `-> ${fs.readlinkSync(p)}`;
      else out[path.relative(dir, p)] = fs.readFileSync(p, 'utf8');
    }
  };
  visit(dir);
  return out;
}

async function run(name: ToolName, args: Record<string, unknown>): Promise<string> {
  const t = tools[name] as any;
  return t.execute(args, { toolCallId: `c${calls.length}`, messages: [] });
}

beforeEach(() => {
  base = tempDir('inkwell-tools-');
  root = path.join(base, 'repo');
  outside = path.join(base, 'outside');
  fs.mkdirSync(path.join(root, 'docs', 'guides'), { recursive: true });
  fs.mkdirSync(path.join(root, '.git'), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside secret\n');
  fs.writeFileSync(path.join(root, '.git', 'config'), '[core]\n');
  fs.writeFileSync(path.join(root, 'README.md'), '# Title\n\nSome intro.\n');
  fs.writeFileSync(path.join(root, 'docs', 'a.md'), 'alpha\nbeta\ngamma\nbeta\n');
  fs.writeFileSync(path.join(root, 'docs', 'guides', 'b.md'), 'Configure the thing.\n');
  fs.writeFileSync(path.join(root, 'logo.png'), Buffer.from([0x89, 0x50, 0x00, 0x01]));
  fs.symlinkSync('../outside', path.join(root, 'escape'));
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'secret-link.md'));
  fs.symlinkSync('docs/a.md', path.join(root, 'alias.md'));
  fs.symlinkSync('.git', path.join(root, 'gitdir'));
  fs.symlinkSync('../outside/new.txt', path.join(root, 'dangling.md'));
  calls = [];
  tools = createTools(root, {
    toolCall: async (id, tool, args) => {
      calls.push({ id, tool, args });
    },
    toolResult: async (id, tool, ok, summary) => {
      const c = calls.find((x) => x.id === id);
      if (c) Object.assign(c, { ok, summary });
      else calls.push({ id, tool, ok, summary });
    },
  });
});

afterEach(() => {
  fs.rmSync(base, { recursive: true, force: true });
});

describe('tools', () => {
  it('are the seven file tools of the contract and check, with the contract argument names', () => {
    expect(Object.keys(tools).sort()).toEqual([...TOOL_NAMES].sort());
    const props = (n: ToolName) => Object.keys((asSchema(tools[n]!.inputSchema).jsonSchema as JSONSchema7).properties ?? {}).sort();
    expect(props('list_files')).toEqual(['path']);
    expect(props('read_file')).toEqual(['limit', 'offset', 'path']);
    expect(props('search')).toEqual(['path', 'query']);
    expect(props('write_file')).toEqual(['content', 'path']);
    expect(props('edit_file')).toEqual(['new_string', 'old_string', 'path']);
    expect(props('delete_file')).toEqual(['path']);
    expect(props('move_file')).toEqual(['from', 'to']);
    expect(props('check')).toEqual([]);
  });

  it('run the calls that change files one at a time, in the order sent: parallel edits of one file all land', async () => {
    // Models send several edits of one file in one step; the SDK runs a step's calls in parallel.
    const results = await Promise.all([
      run('edit_file', { path: 'docs/a.md', old_string: 'alpha', new_string: 'ALPHA' }),
      run('edit_file', { path: 'docs/a.md', old_string: 'gamma', new_string: 'GAMMA' }),
      run('write_file', { path: 'docs/c.md', content: 'one\n' }),
      run('edit_file', { path: 'docs/c.md', old_string: 'one', new_string: 'two' }),
      run('read_file', { path: 'README.md' }),
    ]);
    expect(results.slice(0, 4).map((r) => r.slice(0, 3))).toEqual(['OK:', 'OK:', 'OK:', 'OK:']);
    expect(fs.readFileSync(path.join(root, 'docs', 'a.md'), 'utf8')).toBe('ALPHA\nbeta\nGAMMA\nbeta\n');
    expect(fs.readFileSync(path.join(root, 'docs', 'c.md'), 'utf8')).toBe('two\n');
  });

  it('keep the order the calls were made in when recording the first call takes longer than the second', async () => {
    // The first call's event write is held until after the second call has been made: the second still waits.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let first = true;
    const slowFirst = createTools(root, {
      toolCall: async () => {
        if (first) {
          first = false;
          await held;
        }
      },
      toolResult: async () => {},
    });
    const call = (name: ToolName, args: Record<string, unknown>, id: string) =>
      (slowFirst[name]!.execute as (a: unknown, o: unknown) => Promise<string>)(args, { toolCallId: id, messages: [] });
    const write = call('write_file', { path: 'docs/d.md', content: 'one\n' }, 'w');
    const edit = call('edit_file', { path: 'docs/d.md', old_string: 'one', new_string: 'two' }, 'e');
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    expect((await write).slice(0, 3)).toBe('OK:');
    expect((await edit).slice(0, 3)).toBe('OK:');
    expect(fs.readFileSync(path.join(root, 'docs', 'd.md'), 'utf8')).toBe('two\n');
  });

  it('give the model a JSON Schema and tell it what is wrong with a malformed call', async () => {
    const schema = asSchema(tools.read_file!.inputSchema);
    expect(schema.jsonSchema).toMatchObject({
      type: 'object',
      required: ['path'],
      additionalProperties: false,
      properties: { offset: { type: 'integer', minimum: 1, description: 'First line to read, 1-based' } },
    });
    const check = async (name: ToolName, value: unknown) => {
      const r = await asSchema(tools[name]!.inputSchema).validate!(value);
      return r.success ? { value: r.value } : { error: r.error.message };
    };
    expect(await check('read_file', { path: 'a.md', offset: 2 })).toEqual({ value: { path: 'a.md', offset: 2 } });
    expect(await check('read_file', { path: 'a.md', offset: 0, limit: 1.5 })).toEqual({ error: 'offset must be >= 1; limit must be integer' });
    expect(await check('write_file', { path: 1, content: 'x' })).toEqual({ error: 'path must be string' });
    expect(await check('write_file', {})).toEqual({ error: 'arguments must have required properties path, content' });
    expect(await check('search', { query: '' })).toEqual({ error: 'query must not have fewer than 1 characters' });
    expect(await check('move_file', 'a.md')).toEqual({ error: 'arguments must be object' });
    // A stray argument is dropped, not refused.
    expect(await check('delete_file', { path: 'a.md', force: true })).toEqual({ value: { path: 'a.md' } });
    // So is one named like an Object.prototype member (the model's JSON may carry any key, __proto__ included).
    expect(await check('delete_file', JSON.parse('{"path": "a.md", "constructor": 1, "toString": "x", "__proto__": {"path": "b.md"}}'))).toEqual({
      value: { path: 'a.md' },
    });
  });

  it('list_files lists files (never .git), optionally under a directory', async () => {
    const all = await run('list_files', {});
    expect(all.split('\n')).toEqual(expect.arrayContaining(['README.md', 'docs/a.md', 'docs/guides/b.md', 'logo.png']));
    expect(all).not.toContain('.git/');
    expect(await run('list_files', { path: 'docs/guides' })).toBe('docs/guides/b.md');
    expect(await run('list_files', { path: 'nope' })).toMatch(/^Error: .*does not exist/);
    expect(calls.at(-1)).toMatchObject({ tool: 'list_files', ok: false });
  });

  it('read_file reads with offset and limit; errors for missing files, directories and binaries', async () => {
    expect(await run('read_file', { path: 'docs/a.md' })).toBe('alpha\nbeta\ngamma\nbeta');
    expect(await run('read_file', { path: 'docs/a.md', offset: 2, limit: 2 })).toBe('beta\ngamma\n[lines 2–3 of 4; read on with offset 4]');
    expect(await run('read_file', { path: 'docs/missing.md' })).toBe('Error: file "docs/missing.md" does not exist');
    expect(await run('read_file', { path: 'docs' })).toMatch(/^Error: "docs" is a directory/);
    expect(await run('read_file', { path: 'logo.png' })).toMatch(/^Error: .*binary/);
    expect(await run('read_file', { path: 'docs/a.md', offset: 99 })).toMatch(/^Error: offset 99 is past the end/);
    expect(await run('read_file', { path: 'alias.md' })).toBe('alpha\nbeta\ngamma\nbeta');
    // Events carry a summary, never the content.
    const ok = calls.find((c) => c.tool === 'read_file' && c.ok)!;
    expect(ok.summary).toBe('read "docs/a.md" lines 1–4 of 4');
  });

  it('search finds regex matches with path:line, honours path, and reports bad regexes', async () => {
    expect(await run('search', { query: 'be+ta' })).toBe('docs/a.md:2: beta\ndocs/a.md:4: beta');
    expect(await run('search', { query: '^Configure', path: 'docs/guides' })).toBe('docs/guides/b.md:1: Configure the thing.');
    expect(await run('search', { query: 'zzz' })).toBe('no matches for /zzz/');
    expect(await run('search', { query: '(' })).toMatch(/^Error: query is not a valid regular expression/);
    expect(await run('search', { query: 'core' })).not.toContain('.git');
    expect(await run('search', { query: 'outside secret' })).toBe('no matches for /outside secret/');
    expect(await run('search', { query: 'x', path: '../outside' })).toMatch(/^Error: .*outside the repository/);
  });

  it('search runs off the main thread: a catastrophic-backtracking pattern times out as a readable error', async () => {
    // 2^40 backtracking steps: the pattern never finishes, so only the time limit can end the search.
    fs.writeFileSync(path.join(root, 'evil.md'), `${'a'.repeat(40)}b\n`);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 20);
    const out = await searchFiles({ root, files: ['evil.md'], query: '^(a+)+$', maxMatches: 10, maxFileBytes: 1e6, maxLineChars: 1200 }, 300);
    clearInterval(ticker);
    expect(out).toEqual({ ok: false, error: expect.stringContaining('took longer than') });
    // The event loop kept running while the search was pending: the 20 ms timer, due before the 300 ms limit,
    // fired first (a pattern spinning on this thread would have blocked both, forever).
    expect(ticks).toBeGreaterThan(0);
  });

  it('search caps the number of matches', async () => {
    fs.writeFileSync(path.join(root, 'many.md'), 'hit\n'.repeat(LIMITS.searchMatches + 50));
    const out = await run('search', { query: 'hit' });
    expect(out.split('\n').filter((l) => l.startsWith('many.md:'))).toHaveLength(LIMITS.searchMatches);
    expect(out).toContain('more matches not shown');
  });

  it('write_file creates (with parents) and replaces files', async () => {
    expect(await run('write_file', { path: 'docs/new/page.md', content: 'x\ny\n' })).toBe('OK: created "docs/new/page.md" (2 lines, 4 bytes)');
    expect(fs.readFileSync(path.join(root, 'docs/new/page.md'), 'utf8')).toBe('x\ny\n');
    expect(await run('write_file', { path: 'README.md', content: 'new' })).toMatch(/^OK: updated "README.md"/);
    expect(await run('write_file', { path: 'docs', content: 'x' })).toMatch(/^Error: "docs" is a directory/);
    expect(await run('write_file', { path: 'docs/a.md/child', content: 'x' })).toMatch(/^Error: .*is a file, not a directory/);
    expect(calls.find((c) => c.tool === 'write_file')?.args).toEqual({ path: 'docs/new/page.md', contentLength: 4 });
  });

  it('edit_file replaces exactly one match; missing and ambiguous matches are readable errors', async () => {
    expect(await run('edit_file', { path: 'docs/a.md', old_string: 'gamma', new_string: 'GAMMA' })).toBe('OK: edited "docs/a.md" at line 3 (-1 +1 lines)');
    expect(fs.readFileSync(path.join(root, 'docs/a.md'), 'utf8')).toBe('alpha\nbeta\nGAMMA\nbeta\n');
    const ambiguous = await run('edit_file', { path: 'docs/a.md', old_string: 'beta', new_string: 'BETA' });
    expect(ambiguous).toBe('Error: old_string matches 2 places in "docs/a.md"; include more surrounding text so it matches exactly one');
    expect(await run('edit_file', { path: 'docs/a.md', old_string: 'delta', new_string: 'x' })).toMatch(/^Error: old_string was not found in "docs\/a.md"/);
    expect(await run('edit_file', { path: 'docs/missing.md', old_string: 'a', new_string: 'b' })).toBe('Error: file "docs/missing.md" does not exist');
    expect(await run('edit_file', { path: 'docs/a.md', old_string: '', new_string: 'b' })).toMatch(/^Error: old_string must not be empty/);
    expect(fs.readFileSync(path.join(root, 'docs/a.md'), 'utf8')).toBe('alpha\nbeta\nGAMMA\nbeta\n');
    // `$&` in the replacement is literal text, not a regex back-reference.
    await run('edit_file', { path: 'README.md', old_string: 'Some intro.', new_string: 'Costs $& more' });
    expect(fs.readFileSync(path.join(root, 'README.md'), 'utf8')).toContain('Costs $& more');
  });

  it('delete_file deletes files (a symlink itself, not its target); errors otherwise', async () => {
    expect(await run('delete_file', { path: 'docs/guides/b.md' })).toBe('OK: deleted "docs/guides/b.md"');
    expect(fs.existsSync(path.join(root, 'docs/guides/b.md'))).toBe(false);
    expect(await run('delete_file', { path: 'docs/guides/b.md' })).toBe('Error: file "docs/guides/b.md" does not exist');
    expect(await run('delete_file', { path: 'docs' })).toMatch(/^Error: "docs" is a directory/);
    expect(await run('delete_file', { path: 'secret-link.md' })).toBe('OK: deleted "secret-link.md"');
    expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('outside secret\n');
  });

  it('move_file renames, creating parents; refuses existing destinations and missing sources', async () => {
    expect(await run('move_file', { from: 'docs/a.md', to: 'archive/2024/a.md' })).toBe('OK: moved "docs/a.md" to "archive/2024/a.md"');
    expect(fs.readFileSync(path.join(root, 'archive/2024/a.md'), 'utf8')).toContain('alpha');
    expect(await run('move_file', { from: 'docs/a.md', to: 'x.md' })).toBe('Error: file "docs/a.md" does not exist');
    expect(await run('move_file', { from: 'README.md', to: 'docs/guides/b.md' })).toMatch(/^Error: "docs\/guides\/b.md" already exists/);
  });

  describe('confinement: refused with a readable error, nothing written outside the worktree', () => {
    const attempts: Array<[ToolName, Record<string, unknown>, RegExp]> = [
      ['write_file', { path: '../outside/pwn.txt', content: 'x' }, /outside the repository/],
      ['write_file', { path: 'docs/../../outside/pwn.txt', content: 'x' }, /outside the repository/],
      ['write_file', { path: '/tmp/pwn.txt', content: 'x' }, /absolute paths are not allowed/],
      ['write_file', { path: 'C:\\pwn.txt', content: 'x' }, /absolute paths are not allowed/],
      ['write_file', { path: '.git/config', content: 'x' }, /inside \.git/],
      ['write_file', { path: '.GIT/hooks/pre-commit', content: 'x' }, /inside \.git/],
      ['write_file', { path: 'docs/.git/x', content: 'x' }, /inside \.git/],
      ['write_file', { path: 'escape/pwn.txt', content: 'x' }, /symlink "escape".*outside the repository/],
      ['write_file', { path: 'secret-link.md', content: 'x' }, /symlink "secret-link.md".*outside/],
      ['write_file', { path: 'dangling.md', content: 'x' }, /symlink "dangling.md".*outside/],
      ['write_file', { path: 'gitdir/config', content: 'x' }, /points into \.git/],
      ['read_file', { path: '../outside/secret.txt' }, /outside the repository/],
      ['read_file', { path: 'secret-link.md' }, /outside the repository/],
      ['read_file', { path: 'escape/secret.txt' }, /outside the repository/],
      ['read_file', { path: '.git/config' }, /inside \.git/],
      ['read_file', { path: '/etc/passwd' }, /absolute paths are not allowed/],
      ['edit_file', { path: 'secret-link.md', old_string: 'outside', new_string: 'pwned' }, /outside the repository/],
      ['edit_file', { path: '.git/config', old_string: 'core', new_string: 'x' }, /inside \.git/],
      ['delete_file', { path: '../outside/secret.txt' }, /outside the repository/],
      ['delete_file', { path: 'escape/secret.txt' }, /outside the repository/],
      ['delete_file', { path: '.git/config' }, /inside \.git/],
      ['move_file', { from: 'README.md', to: '../outside/README.md' }, /outside the repository/],
      ['move_file', { from: 'README.md', to: 'escape/README.md' }, /outside the repository/],
      ['move_file', { from: '../outside/secret.txt', to: 'stolen.md' }, /outside the repository/],
      ['move_file', { from: 'README.md', to: '.git/README.md' }, /inside \.git/],
      ['list_files', { path: '..' }, /outside the repository/],
      ['list_files', { path: 'escape' }, /outside the repository/],
      ['list_files', { path: '.git' }, /inside \.git/],
      ['search', { query: 'secret', path: 'escape' }, /outside the repository/],
      ['search', { query: 'core', path: '.git' }, /inside \.git/],
    ];
    for (const [tool, args, expected] of attempts) {
      it(`${tool} ${JSON.stringify(args)}`, async () => {
        const beforeOutside = snapshot(outside);
        const beforeGit = snapshot(path.join(root, '.git'));
        const out = await run(tool, args);
        expect(out).toMatch(/^Error: /);
        expect(out).toMatch(expected);
        expect(snapshot(outside)).toEqual(beforeOutside);
        expect(snapshot(path.join(root, '.git'))).toEqual(beforeGit);
        expect(fs.existsSync('/tmp/pwn.txt')).toBe(false);
        expect(fs.existsSync(path.join(root, 'stolen.md'))).toBe(false);
        expect(calls.at(-1)).toMatchObject({ tool, ok: false });
        // The error never reveals the absolute location of the worktree.
        expect(out).not.toContain(base);
      });
    }
  });
});

describe('tool errors inside a real run', () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it('are returned to the model, the run goes on, and nothing is written outside the worktree', async () => {
    const outsideDir = tempDir('inkwell-outside-');
    fs.writeFileSync(path.join(outsideDir, 'keep.txt'), 'keep\n');
    h = await startHarness({
      files: { 'README.md': '# Docs\n', 'docs/a.md': 'one\none\n' },
      symlinks: { 'out-link': outsideDir },
      script: [
        {
          toolCalls: [
            { name: 'read_file', args: { path: 'docs/missing.md' } },
            { name: 'edit_file', args: { path: 'docs/a.md', old_string: 'one', new_string: 'two' } },
            { name: 'write_file', args: { path: '../escape.md', content: 'x' } },
            { name: 'write_file', args: { path: `${outsideDir}/abs.md`, content: 'x' } },
            { name: 'write_file', args: { path: '.git/HEAD', content: 'x' } },
            { name: 'write_file', args: { path: 'out-link/keep.txt', content: 'pwned' } },
            { name: 'read_file', args: { path: 'out-link/keep.txt' } },
          ],
        },
        { text: 'I could not make those changes.' },
      ],
    });
    const result = await h.execute();
    expect(result.commitSha).toBeNull();
    const results = h.events.filter((e) => e.type === 'tool_result');
    expect(results).toHaveLength(7);
    expect(results.every((e) => e.data.ok === false)).toBe(true);
    const second = requestText(h.model.requests[1]!);
    for (const fragment of [
      'file \\"docs/missing.md\\" does not exist',
      'old_string matches 2 places',
      'outside the repository',
      'absolute paths are not allowed',
      'inside .git',
      'symlink \\"out-link\\"',
    ]) {
      expect(second).toContain(fragment);
    }
    expect(fs.readFileSync(path.join(outsideDir, 'keep.txt'), 'utf8')).toBe('keep\n');
    expect(fs.readdirSync(outsideDir)).toEqual(['keep.txt']);
    expect(fs.existsSync(path.join(h.dataDir, 'worktrees', 'escape.md'))).toBe(false);
    fs.rmSync(outsideDir, { recursive: true, force: true });
  });
});

describe('malformed tool calls inside a real run', () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  for (const streaming of ['1', '0']) {
    it(`unknown tools, schema violations and broken JSON go back to the model and into events (streaming=${streaming})`, async () => {
      h = await startHarness({
        env: { INKWELL_MODEL_STREAMING: streaming },
        script: [
          {
            toolCalls: [
              { name: 'write_file', args: { path: 1, content: 'x'.repeat(5000) } },
              { name: 'run_shell', args: { cmd: 'rm -rf /' } },
              { name: 'read_file', args: '{not json' },
            ],
          },
          { text: 'Gave up.' },
        ],
      });
      const result = await h.execute();
      expect(result.commitSha).toBeNull();
      const toolMessages = h.model.requests[1]!.body.messages.filter((m: any) => m.role === 'tool').map((m: any) => String(m.content));
      expect(toolMessages).toHaveLength(3);
      expect(toolMessages[0]).toContain('Invalid input for tool write_file');
      expect(toolMessages[0]).toContain('Error message: path must be string');
      // The SDK quotes the whole malformed input; the model gets it clipped.
      expect(toolMessages[0].length).toBeLessThan(1500);
      expect(toolMessages[0]).toContain('characters left out');
      expect(toolMessages[1]).toContain("unavailable tool 'run_shell'");
      expect(toolMessages[2]).toContain('JSON');
      const results = h.events.filter((e) => e.type === 'tool_result');
      expect(results.map((e) => e.data.tool)).toEqual(['write_file', 'run_shell', 'read_file']);
      expect(results.every((e) => e.data.ok === false && String(e.data.summary).length <= 301)).toBe(true);
      expect(h.events.filter((e) => e.type === 'tool_call').every((e) => JSON.stringify(e.data).length < 200)).toBe(true);
    });
  }
});
