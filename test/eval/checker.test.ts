// The eval's pure parts: the checker on crafted outcomes, globs, the scripted responder, the report, the CLI
// arguments, and the task list's own invariants.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVAL_ROOT, parseEvalArgs, selectTasks, UsageError } from '../../eval/lib/cli.ts';
import { globToRegExp, matchesGlob } from '../../eval/lib/glob.ts';
import { navEntries } from '../../eval/lib/nav.ts';
import { listTree } from '../../eval/lib/repo.ts';
import { formatMarkdown, formatText, median, summarize } from '../../eval/lib/report.ts';
import type { TaskResult } from '../../eval/lib/runner.ts';
import { changedPaths, failedCriteria, patternOf, scoreTask } from '../../eval/lib/score.ts';
import { scriptedResponder } from '../../eval/lib/scripted.ts';
import { type EvalTask, type Outcome, TASK_KINDS } from '../../eval/lib/types.ts';
import { ALL_TASKS } from '../../eval/tasks/index.ts';
import type { CheckReport } from '../../src/docs-checks/types.ts';

const PASSING: CheckReport = { framework: 'mintlify', checkedFiles: ['a.mdx'], checks: ['pages parse'], findings: [], notes: [] };

function outcome(over: Partial<Outcome> = {}): Outcome {
  return {
    files: new Map([
      ['docs.json', '{}'],
      ['guides/a.mdx', '---\ntitle: A\n---\n\nSee [B](/guides/b).\n'],
    ]),
    changed: [{ path: 'guides/a.mdx', status: 'added', oldPath: null }],
    nav: ['index', '/guides/a'],
    checks: PASSING,
    reply: 'Add page A\n\nDone.',
    error: null,
    ...over,
  };
}

describe('scoreTask', () => {
  it('passes every criterion a good outcome meets, each named', () => {
    const results = scoreTask(
      {
        files: {
          'guides/a.mdx': { exists: true, contains: ['title: A'], matches: ['^title: A$'], notContains: ['TODO'], notMatches: ['/lorem/i'] },
          'old.mdx': { exists: false },
        },
        nav: { includes: ['guides/a'], excludes: ['guides/old'] },
        checks: {},
        changed: { allowed: ['guides/*.mdx', 'docs.json'] },
        reply: { matches: ['add page'] },
      },
      outcome(),
    );
    expect(results.map((r) => [r.criterion, r.ok])).toEqual([
      ['run completed', true],
      ['guides/a.mdx exists', true],
      ['guides/a.mdx contains "title: A"', true],
      ['guides/a.mdx matches ^title: A$', true],
      ['guides/a.mdx does not contain "TODO"', true],
      ['guides/a.mdx does not match /lorem/i', true],
      ['old.mdx does not exist', true],
      ['nav includes "guides/a"', true],
      ['nav excludes "guides/old"', true],
      ['docs checks pass', true],
      ['nothing else changed', true],
      ['reply matches add page', true],
    ]);
  });

  it('names what failed and why', () => {
    const results = scoreTask(
      {
        files: { 'guides/a.mdx': { contains: ['Acme-Signature'], notMatches: ['/\\[B\\]/'] }, 'guides/missing.mdx': { exists: true, contains: ['x'] } },
        nav: { includes: ['guides/missing'], excludes: ['guides/a'] },
        checks: {},
        changed: { allowed: ['guides/a.mdx'] },
        reply: { matches: ['turbo'] },
      },
      outcome({
        changed: [
          { path: 'guides/a.mdx', status: 'added', oldPath: null },
          { path: 'README.md', status: 'modified', oldPath: null },
          { path: 'new/place.mdx', status: 'renamed', oldPath: 'guides/a-old.mdx' },
        ],
        checks: { ...PASSING, findings: [{ file: 'guides/a.mdx', line: 5, column: 5, rule: 'link-broken', message: '"/guides/b": no page' }] },
        error: 'step_limit_exceeded: The agent reached the step limit (40) before finishing',
      }),
    );
    const failed = results.filter((r) => !r.ok);
    expect(failed).toEqual([
      { criterion: 'run completed', ok: false, detail: 'step_limit_exceeded: The agent reached the step limit (40) before finishing' },
      { criterion: 'guides/a.mdx contains "Acme-Signature"', ok: false },
      { criterion: 'guides/a.mdx does not match /\\[B\\]/', ok: false, detail: 'line 5: "[B]"' },
      { criterion: 'guides/missing.mdx exists', ok: false, detail: 'missing' },
      { criterion: 'guides/missing.mdx contains "x"', ok: false, detail: 'the file does not exist' },
      { criterion: 'nav includes "guides/missing"', ok: false, detail: 'not in the navigation' },
      { criterion: 'nav excludes "guides/a"', ok: false, detail: 'still in the navigation' },
      { criterion: 'docs checks pass', ok: false, detail: 'guides/a.mdx:5:5 link-broken: "/guides/b": no page' },
      { criterion: 'nothing else changed', ok: false, detail: 'also changed: README.md, guides/a-old.mdx, new/place.mdx' },
      { criterion: 'reply matches turbo', ok: false, detail: '"Add page A Done."' },
    ]);
    expect(failedCriteria(results)).toHaveLength(10);
  });

  it('checks "no change" tasks, a missing navigation and checks that did not run', () => {
    const none = scoreTask({ changed: 'none', nav: { includes: ['a'] }, checks: {} }, outcome({ nav: null, checks: null }));
    expect(none.filter((r) => !r.ok)).toEqual([
      { criterion: 'nav includes "a"', ok: false, detail: 'the site has no navigation' },
      { criterion: 'docs checks pass', ok: false, detail: 'the checks did not run' },
      { criterion: 'no files changed', ok: false, detail: 'guides/a.mdx' },
    ]);
    expect(scoreTask({ changed: 'none' }, outcome({ changed: [] })).every((r) => r.ok)).toBe(true);
    // Absent text is absent from a file that does not exist.
    expect(scoreTask({ files: { 'gone.md': { notContains: ['x'], notMatches: ['x'] } } }, outcome()).every((r) => r.ok)).toBe(true);
  });

  it('reads patterns as /source/flags or a bare source', () => {
    expect(patternOf('/a.b/i').test('AXB')).toBe(true);
    expect(patternOf('^b$').test('a\nb')).toBe(true);
    expect(patternOf('x', 'i').test('X')).toBe(true);
    expect(changedPaths({ changed: [{ path: 'b', status: 'renamed', oldPath: 'a' }] })).toEqual(['a', 'b']);
  });
});

describe('globs', () => {
  it('match within and across path segments', () => {
    expect(matchesGlob('mintlify/add-page-webhooks', 'mintlify/*')).toBe(true);
    expect(matchesGlob('mintlify/add-page-webhooks', '*/add-page-*')).toBe(true);
    expect(matchesGlob('docs/guide/a.md', 'docs/*.md')).toBe(false);
    expect(matchesGlob('docs/guide/a.md', 'docs/**/*.md')).toBe(true);
    expect(matchesGlob('docs/a.md', 'docs/**/*.md')).toBe(true);
    expect(matchesGlob('docs/a.mdx', 'docs/a.{md,mdx}')).toBe(true);
    expect(matchesGlob('docsXa.md', 'docs?a.md')).toBe(true);
    expect(matchesGlob('a+b(c).md', 'a+b(c).md')).toBe(true);
    expect(globToRegExp('a.b').test('axb')).toBe(false);
  });
});

describe('navEntries', () => {
  it('reads docs.json pages, the mkdocs.yml nav and Docusaurus sidebars', async () => {
    expect(
      await navEntries(
        new Map([['docs.json', JSON.stringify({ navigation: { groups: [{ group: 'A', pages: ['index', { group: 'B', pages: ['b/c'] }] }] } })]]),
      ),
    ).toEqual(['index', 'b/c']);
    expect(await navEntries(new Map([['mkdocs.yml', 'nav:\n  - Home: index.md\n  - Guide:\n      - guide/a.md\n  - Site: https://example.com/\n']]))).toEqual([
      'index.md',
      'guide/a.md',
    ]);
    expect(await navEntries(new Map([['mkdocs.yml', 'site_name: x\n']]))).toBeNull();
    expect(
      await navEntries(new Map([['sidebars.ts', "export default { docs: ['intro', { type: 'category', label: 'G', items: ['g/a'] }] } as const;\n"]])),
    ).toEqual(['intro', 'g/a']);
    expect(await navEntries(new Map([['README.md', '# x\n']]))).toBeNull();
  });
});

const task = (name: string, prompts: string[]): EvalTask => ({
  name,
  kind: 'follow-up',
  fixture: 'x',
  turns: prompts.map((prompt, i) => ({
    prompt,
    reference: [{ toolCalls: [{ name: 'read_file', args: { path: `${name}-${i}` } }] }, { text: `${name} done ${i}` }],
  })),
  expect: {},
});

describe('scriptedResponder', () => {
  const tasks = [task('one', ['first request']), task('two', ['second request', 'and a follow-up'])];
  const respond = scriptedResponder(tasks, { one: [[{ text: 'wrong' }]] });
  const sys = { role: 'system', content: 'You are Inkwell' };
  const user = (content: unknown) => ({ role: 'user', content });
  const assistant = { role: 'assistant', content: null, tool_calls: [] };
  const tool = { role: 'tool', content: 'ok' };

  it('finds the task by its first prompt, the turn by its latest prompt and the step by the replies since', () => {
    expect(respond([sys, user('second request')])).toEqual({ toolCalls: [{ name: 'read_file', args: { path: 'two-0' } }] });
    expect(respond([sys, user([{ type: 'text', text: 'second request' }]), assistant, tool])).toEqual({ text: 'two done 0' });
    const turn2 = [sys, user('second request'), assistant, tool, { role: 'assistant', content: 'two done 0' }, user('and a follow-up')];
    expect(respond(turn2)).toEqual({ toolCalls: [{ name: 'read_file', args: { path: 'two-1' } }] });
    // A repair round (a user message that is no prompt) past the script's end: the last step again.
    expect(respond([...turn2, assistant, tool, { role: 'assistant', content: 'x' }, user('Inkwell ran the docs checks…')])).toEqual({ text: 'two done 1' });
  });

  it('replays a replacement script, and says so for an unknown conversation', () => {
    expect(respond([sys, user('first request')])).toEqual({ text: 'wrong' });
    expect(respond([sys, user('something else')])).toMatchObject({ text: expect.stringContaining('no task') });
    expect(respond('not an array')).toMatchObject({ text: expect.stringContaining('no task') });
  });
});

const result = (over: Partial<TaskResult>): TaskResult => ({
  model: 'm/a',
  task: 't',
  kind: 'add-page',
  fixture: 'x',
  success: true,
  failed: [],
  criteria: [{ criterion: 'run completed', ok: true }],
  steps: 3,
  inputTokens: 1000,
  outputTokens: 100,
  costUsd: 0.01,
  wallMs: 2000,
  summary: 'Title\n\nBody',
  error: null,
  toolCalls: 2,
  failedCheckRounds: 0,
  ...over,
});

describe('report', () => {
  const results = [
    result({ task: 'a' }),
    result({
      task: 'b',
      kind: 'refuse',
      success: false,
      failed: ['nav includes "x"'],
      criteria: [{ criterion: 'nav includes "x"', ok: false, detail: 'not in | the navigation' }],
      steps: 5,
      wallMs: 4000,
    }),
    result({ task: 'c', steps: null, wallMs: 9000, costUsd: 0.02 }),
    result({ model: 'm/b', task: 'a', costUsd: null, steps: 2 }),
  ];

  it('summarises per model: success rate, median steps and wall time, tokens and cost (unknown when a price is)', () => {
    expect(summarize(results)).toEqual([
      { model: 'm/a', tasks: 3, passed: 2, successRate: 2 / 3, medianSteps: 4, inputTokens: 3000, outputTokens: 300, medianWallMs: 4000, costUsd: 0.04 },
      { model: 'm/b', tasks: 1, passed: 1, successRate: 1, medianSteps: 2, inputTokens: 1000, outputTokens: 100, medianWallMs: 2000, costUsd: null },
    ]);
    expect(median([])).toBeNull();
    expect(median([3, 1, 2])).toBe(2);
  });

  it('prints aligned tables and writes Markdown with the failures', () => {
    const text = formatText(results);
    expect(text).toMatch(
      /^model\s+passed\s+success\s+median steps\s+input tokens\s+output tokens\s+median wall\s+cost\nm\/a\s+2\/3\s+66\.7%\s+4\s+3,000\s+300\s+4\.0 s\s+\$0\.0400\n/,
    );
    expect(text).toMatch(/\nkind\s+m\/a\s+m\/b\nadd-page\s+2\/2\s+1\/1\nrefuse\s+0\/1\s+0\/0\n/);
    expect(text).toMatch(/\nm\/a\s+b\s+FAIL\s+5\s+1,000\/100\s+4\.0 s\s+\$0\.0100\s+nav includes "x"\n/);
    const md = formatMarkdown(results, { startedAt: 'S', finishedAt: 'F', concurrency: 2, commit: 'abc123', node: '24' });
    expect(md).toContain('| m/b | 1/1 | 100% | 2 | 1,000 | 100 | 2.0 s | n/a |');
    expect(md).toContain('### b (m/a)\n\n- nav includes "x": not in | the navigation\n\nFinal reply:\n\n> Title\n> \n> Body');
    expect(md).toContain('| m/a | b | FAIL |');
    expect(md).toContain('## By kind\n\n| kind | m/a | m/b |\n| --- | --- | --- |\n| add-page | 2/2 | 1/1 |\n| refuse | 0/1 | 0/0 |');
  });
});

describe('CLI arguments', () => {
  it('take repeatable models and task globs, a concurrency and an output folder', () => {
    const o = parseEvalArgs(['--model', 'a/x', '--model', 'b/y', '--task', 'mkdocs/*', '--concurrency', '3', '--out', '/tmp/r']);
    expect(o).toEqual({ models: ['a/x', 'b/y'], taskGlobs: ['mkdocs/*'], concurrency: 3, outDir: '/tmp/r' });
    expect(parseEvalArgs(['--model=a/x']).outDir).toMatch(/eval\/results$/);
    expect(() => parseEvalArgs([])).toThrow(UsageError);
    expect(() => parseEvalArgs(['--model', 'a/x', '--concurrency', '0'])).toThrow('--concurrency must be a whole number from 1 to 32');
    expect(() => parseEvalArgs(['--model', 'a/x', '--bogus'])).toThrow(UsageError);
    expect(() => parseEvalArgs(['--model', 'a/x', 'stray'])).toThrow(UsageError);
    expect(selectTasks(ALL_TASKS, ['*/refuse-*']).every((t) => t.kind === 'refuse')).toBe(true);
  });
});

describe('the tasks', () => {
  it('have unique names and first prompts (the scripted model finds a task by it), known kinds and fixtures', () => {
    expect(new Set(ALL_TASKS.map((t) => t.name)).size).toBe(ALL_TASKS.length);
    expect(new Set(ALL_TASKS.map((t) => t.turns[0]!.prompt)).size).toBe(ALL_TASKS.length);
    for (const t of ALL_TASKS) {
      expect(TASK_KINDS).toContain(t.kind);
      expect(t.name.startsWith(`${t.fixture}/`), t.name).toBe(true);
      expect(t.turns.length, t.name).toBe(t.kind === 'follow-up' ? 2 : 1);
      for (const turn of t.turns) expect('text' in turn.reference.at(-1)! && !('toolCalls' in turn.reference.at(-1)!), t.name).toBe(true);
      // Patterns compile.
      const patterns = [
        ...Object.values(t.expect.files ?? {}).flatMap((f) => [...(f.matches ?? []), ...(f.notMatches ?? [])]),
        ...(t.expect.reply?.matches ?? []),
      ];
      for (const p of patterns) expect(() => patternOf(p), `${t.name}: ${p}`).not.toThrow();
      // Every task checks the result: a refusal changes nothing; any other task checks files and what else changed.
      if (t.kind === 'refuse') expect(t.expect).toMatchObject({ changed: 'none', reply: { matches: expect.any(Array) } });
      else expect(t.expect.files && t.expect.checks && typeof t.expect.changed === 'object', t.name).toBeTruthy();
    }
  });

  it('are at least 20, at least three of each kind, over every fixture', () => {
    expect(ALL_TASKS.length).toBeGreaterThanOrEqual(20);
    for (const kind of TASK_KINDS) expect(ALL_TASKS.filter((t) => t.kind === kind).length, kind).toBeGreaterThanOrEqual(3);
    expect(new Set(ALL_TASKS.map((t) => t.fixture))).toEqual(new Set(fs.readdirSync(path.join(EVAL_ROOT, 'fixtures'))));
  });

  it('are not met by doing nothing: the repository as given fails a criterion of every task but the refusals', async () => {
    for (const t of ALL_TASKS) {
      const dir = path.join(EVAL_ROOT, 'fixtures', t.fixture);
      const files = new Map<string, string>();
      for (const f of await listTree(dir)) files.set(f, fs.readFileSync(path.join(dir, f), 'utf8'));
      for (const [f, text] of Object.entries(t.files ?? {})) files.set(f, text);
      const unchanged: Outcome = { files, changed: [], nav: await navEntries(files), checks: PASSING, reply: '', error: null };
      const failed = failedCriteria(scoreTask(t.expect, unchanged));
      // A refusal changes nothing: only its reply (none here) can fail it.
      if (t.kind === 'refuse') expect(failed.length > 0 && failed.every((c) => c.startsWith('reply matches')), t.name).toBe(true);
      else expect(failed.filter((c) => !c.startsWith('reply')).length, t.name).toBeGreaterThan(0);
    }
  });
});
