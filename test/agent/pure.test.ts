// Pure modules of the agent: path checks, system prompt, change text, model registry, retry delays.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CheckOutcome } from '../../src/agent/checks.ts';
import { checksSection, repairMessage } from '../../src/agent/checks.ts';
import { retryDelayMs } from '../../src/agent/loop.ts';
import { modelConfigError, parseModelId } from '../../src/agent/models.ts';
import { checkToolPath, isInside } from '../../src/agent/paths.ts';
import { buildSystemPrompt, compactTree, detectDocsFramework, PROMPT_LIMITS } from '../../src/agent/prompt.ts';
import { checksResult, commitMessage, commitTurn, describeChange } from '../../src/agent/summary.ts';
import { testConfig } from '../../src/config.ts';

describe('checkToolPath', () => {
  it('normalizes relative paths', () => {
    expect(checkToolPath('docs/a.md')).toEqual({ ok: true, rel: 'docs/a.md' });
    expect(checkToolPath('./docs//b/../a.md')).toEqual({ ok: true, rel: 'docs/a.md' });
    expect(checkToolPath('docs\\a.md')).toEqual({ ok: true, rel: 'docs/a.md' });
    expect(checkToolPath('docs/')).toEqual({ ok: true, rel: 'docs' });
    expect(checkToolPath('..hidden.md')).toEqual({ ok: true, rel: '..hidden.md' });
    expect(checkToolPath('.', { allowRoot: true })).toEqual({ ok: true, rel: '' });
    expect(checkToolPath('.').ok).toBe(false);
  });

  it('refuses escapes, absolute paths, .git and junk with readable messages', () => {
    const cases: Array<[unknown, RegExp]> = [
      ['../x', /outside the repository/],
      ['a/../../x', /outside the repository/],
      ['/etc/passwd', /absolute paths/],
      ['C:/x', /absolute paths/],
      ['~/x', /absolute paths/],
      ['.git', /inside \.git/],
      ['.git/config', /inside \.git/],
      ['sub/.Git/HEAD', /inside \.git/],
      ['a\0b', /NUL/],
      [42, /must be a string/],
      ['', /must name a file/],
    ];
    for (const [input, msg] of cases) {
      const r = checkToolPath(input);
      expect(r.ok, String(input)).toBe(false);
      if (!r.ok) expect(r.error).toMatch(msg);
    }
  });

  it('property: an accepted path always resolves inside the root and never into .git', () => {
    const segment = fc.constantFrom('a', 'b', '..', '.', '.git', '', 'docs', '...', '.GIT', 'x.md');
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 8 }), fc.boolean(), (parts, lead) => {
        const input = (lead ? '/' : '') + parts.join('/');
        const r = checkToolPath(input);
        if (!r.ok) return;
        const root = '/repo/root';
        expect(isInside(root, `${root}/${r.rel}`)).toBe(true);
        expect(r.rel.split('/').some((c) => c.toLowerCase() === '.git')).toBe(false);
        expect(r.rel.startsWith('/')).toBe(false);
      }),
    );
  });

  it('isInside', () => {
    expect(isInside('/a/b', '/a/b')).toBe(true);
    expect(isInside('/a/b', '/a/b/c')).toBe(true);
    expect(isInside('/a/b', '/a/bc')).toBe(false);
    expect(isInside('/a/b', '/a')).toBe(false);
    expect(isInside('/a/b', '/a/b/..foo')).toBe(true);
  });
});

describe('system prompt', () => {
  it('detects docs frameworks from well-known files', () => {
    expect(detectDocsFramework(['docs.json', 'index.mdx'])?.name).toBe('Mintlify');
    expect(detectDocsFramework(['mint.json'])?.name).toBe('Mintlify');
    expect(detectDocsFramework(['mkdocs.yml', 'docs/index.md'])?.name).toBe('MkDocs');
    expect(detectDocsFramework(['docusaurus.config.ts'])?.name).toBe('Docusaurus');
    expect(detectDocsFramework(['docs/.vitepress/config.mts'])?.name).toBe('VitePress');
    expect(detectDocsFramework(['docs/conf.py', 'docs/index.rst'])?.name).toBe('Sphinx');
    expect(detectDocsFramework(['README.md', 'src/main.ts'])).toBeNull();
  });

  it('compacts a large tree into directory counts, bounded', () => {
    const small = ['b.md', 'a.md'];
    expect(compactTree(small)).toBe('a.md\nb.md');
    const many = Array.from({ length: 5000 }, (_, i) => `docs/section${i % 400}/page${i}.md`).concat(['README.md']);
    const tree = compactTree(many);
    expect(tree.split('\n').length).toBeLessThanOrEqual(PROMPT_LIMITS.treeLines + 2);
    expect(tree).toContain('README.md');
    expect(tree).toContain('docs/ (5000 files)');
    expect(tree).toContain('(5001 files in total');
  });

  it('carries repository instructions (truncated), the tree and the framework', () => {
    const prompt = buildSystemPrompt({
      ref: 'main',
      branch: 'inkwell/x',
      context: {
        files: ['AGENTS.md', 'CONTRIBUTING.md', 'mkdocs.yml', 'docs/index.md'],
        instructions: [
          { path: 'AGENTS.md', content: 'Use British spelling.' },
          { path: 'CONTRIBUTING.md', content: `Start.${'x'.repeat(50_000)}END-MARKER` },
        ],
      },
    });
    expect(prompt).toContain('Use British spelling.');
    expect(prompt).toContain('## Repository instructions: CONTRIBUTING.md');
    expect(prompt).toContain('truncated');
    expect(prompt).not.toContain('END-MARKER');
    expect(prompt).toContain('MkDocs (detected from mkdocs.yml)');
    expect(prompt).toContain('docs/index.md');
    expect(prompt).toContain('inkwell/x');
    expect(prompt.length).toBeLessThan(PROMPT_LIMITS.instructionsTotalChars + 5_000);
  });
});

describe('describeChange and commitMessage', () => {
  it('takes the title from the first line and the body from the rest', () => {
    const c = describeChange('## Fix the install guide\n\nCorrected the npm command.', 'fix it');
    expect(c).toEqual({ title: 'Fix the install guide', body: 'Corrected the npm command.', explicitTitle: false });
  });

  it('a first line saying Title: is an explicit title (a follow-up renames the pull request with it)', () => {
    expect(describeChange('Title: Add an FAQ page\n\nNew page.', 'p')).toEqual({ title: 'Add an FAQ page', body: 'New page.', explicitTitle: true });
    expect(describeChange('## **Title:** Add an FAQ page', 'p')).toMatchObject({ title: 'Add an FAQ page', explicitTitle: true });
    expect(describeChange('\nTitle:\nFix typo', 'p')).toMatchObject({ explicitTitle: false });
    expect(describeChange('Fix the title: it was wrong', 'p')).toMatchObject({ title: 'Fix the title: it was wrong', explicitTitle: false });
  });

  it('clips long titles and falls back to the prompt; no control characters', () => {
    const long = describeChange(`${'word '.repeat(40)}`, 'p');
    expect(long.title.length).toBeLessThanOrEqual(72);
    expect(long.title.endsWith('…')).toBe(true);
    expect(describeChange('', 'Add a FAQ page\nwith details').title).toBe('Add a FAQ page');
    expect(describeChange('   ', '').title).toBe('Update documentation');
    expect(describeChange('Fix\u0007 the\u202e guide\r\n\r\nBody\u001b[31m', 'p')).toMatchObject({ title: 'Fix the guide', body: 'Body[31m' });
  });

  const passed: CheckOutcome = {
    status: 'passed',
    repairs: 0,
    report: { framework: 'mintlify', checks: ['pages parse', 'links, images and anchors'], checkedFiles: ['a.mdx', 'b.mdx'], findings: [], notes: [] },
  };

  it('one turn: the subject, what changed, the request quoted, the checks, and the job and turn trailers', () => {
    const change = describeChange('Fix the install guide\n\nCorrected the npm command.\nCo-authored-by: Mallory <m@evil.example>', 'p');
    const message = commitMessage({ change, request: 'Fix #12 for @octocat\nCloses !3\nSigned-off-by: x', checks: passed, jobId: 'job_1', turn: 2 });
    expect(message).toBe(
      [
        'Fix the install guide',
        '',
        'Corrected the npm command.',
        ' Co-authored-by: Mallory <m@\u200bevil.example>',
        '',
        'Request:',
        '> Fix #\u200b12 for @\u200boctocat',
        '> Closes !\u200b3',
        '> Signed-off-by: x',
        '',
        'Checks: passed (pages parse, links, images and anchors; 2 pages)',
        '',
        'Inkwell-Job: job_1',
        'Inkwell-Turn: 2',
        '',
      ].join('\n'),
    );
    expect(commitTurn(message)).toEqual({ jobId: 'job_1', turn: 2 });
    expect(commitTurn('Add a\n\nInkwell-Job: job_1\n')).toBeNull();
    const failed: CheckOutcome = {
      ...passed,
      status: 'failed',
      repairs: 2,
      report: { ...passed.report, findings: [{ file: 'a.mdx', line: 1, column: 1, rule: 'link-broken', message: 'x' }] },
    };
    expect(checksResult(failed)).toBe('failed (1 finding on 2 pages after 2 repair rounds)');
    // The repair message names what failed: the docs checks, the scope, or both.
    const withFindings = (rules: string[]) =>
      ({ ...passed.report, findings: rules.map((rule) => ({ file: 'a.mdx', line: 1, column: 1, rule, message: 'x' })) }) as CheckOutcome['report'];
    expect(repairMessage(withFindings(['link-broken']), 1, 2)).toMatch(/^Inkwell checked your changes: the docs checks failed \(repair round 1 of 2\)/);
    expect(repairMessage(withFindings(['out-of-scope', 'changed-files-budget']), 2, 2)).toMatch(
      /^Inkwell checked your changes: some changes are out of scope \(repair round 2 of 2\)/,
    );
    expect(repairMessage(withFindings(['link-broken', 'out-of-scope']), 1, 1)).toMatch(
      /^Inkwell checked your changes: the docs checks failed and some changes are out of scope/,
    );
    expect(checksResult(null)).toBe('not run');
    const bare = commitMessage({ change: describeChange('Tidy', 'p'), request: 'x'.repeat(5000), checks: null, jobId: 'j', turn: 1 });
    expect(bare.split('\n')[0]).toBe('Tidy');
    expect(bare.length).toBeLessThan(1200);
  });
});

describe('model registry', () => {
  it('parses <provider>/<model> ids', () => {
    expect(parseModelId('anthropic/claude-sonnet-4-5')).toEqual({ provider: 'anthropic', model: 'claude-sonnet-4-5' });
    expect(parseModelId('openai-compatible/qwen/qwen3:8b')).toEqual({ provider: 'openai-compatible', model: 'qwen/qwen3:8b' });
    expect(parseModelId('mystery/x')).toBeNull();
    expect(parseModelId('anthropic/')).toBeNull();
  });

  it('modelConfigError: null when configured, else names the variable (never a value)', () => {
    const none = testConfig();
    expect(modelConfigError('anthropic/claude', none)).toContain('ANTHROPIC_API_KEY');
    expect(modelConfigError('openai/gpt-4.1', none)).toContain('OPENAI_API_KEY');
    expect(modelConfigError('openai-compatible/llama', none)).toContain('OPENAI_COMPATIBLE_BASE_URL');
    expect(modelConfigError('mystery/x', none)).toContain('Unknown model provider "mystery"');
    expect(modelConfigError('nonsense', none)).toContain('<provider>/<model>');
    const all = testConfig(
      {},
      { ANTHROPIC_API_KEY: 'sk-ant-secret', OPENAI_BASE_URL: 'http://localhost:1/v1', OPENAI_COMPATIBLE_BASE_URL: 'http://localhost:2/v1' },
    );
    expect(modelConfigError('anthropic/claude', all)).toBeNull();
    expect(modelConfigError('openai/gpt-4.1', all)).toBeNull();
    expect(modelConfigError('openai-compatible/llama', all)).toBeNull();
    expect(modelConfigError('openai-compatible/llama', testConfig({}, { OPENAI_COMPATIBLE_API_KEY: 'k' }))).toContain('OPENAI_COMPATIBLE_BASE_URL');
  });
});

describe('retryDelayMs', () => {
  it('doubles per attempt with bounded jitter', () => {
    expect(retryDelayMs(1, 100, undefined, 0.5)).toBe(100);
    expect(retryDelayMs(2, 100, undefined, 0.5)).toBe(200);
    expect(retryDelayMs(3, 100, undefined, 0)).toBe(300);
    expect(retryDelayMs(3, 100, undefined, 1)).toBe(500);
  });

  it('honours a larger Retry-After, capped at 60 s', () => {
    expect(retryDelayMs(1, 10, { 'retry-after': '2' }, 0.5)).toBe(2000);
    expect(retryDelayMs(1, 10, { 'retry-after-ms': '150' }, 0.5)).toBe(150);
    expect(retryDelayMs(1, 10, { 'retry-after': '3600' }, 0.5)).toBe(60_000);
    expect(retryDelayMs(1, 1000, { 'retry-after': '0' }, 0.5)).toBe(1000);
  });
});

describe('checksSection', () => {
  it('puts what a hostile repository wrote into code spans: no @mention, no link, image or HTML in the body', () => {
    const body = checksSection({
      status: 'failed',
      repairs: 2,
      report: {
        framework: 'mintlify',
        checkedFiles: ['a`b.mdx'],
        checks: ['links, images and anchors'],
        notes: [],
        findings: [
          { file: 'a`b.mdx', line: 3, column: 1, rule: 'link-broken', message: '"x": ![](https://evil.example/t.png) @maintainers <img src=x>\nsecond line' },
        ],
      },
    });
    const line = body.split('\n').find((l) => l.startsWith('- ')) as string;
    expect(line).toBe('- `a\'b.mdx:3:1` link-broken: `"x": ![](https://evil.example/t.png) @\u200bmaintainers <img src=x> second line`');
    // Exactly two code spans: nothing of the message outside them.
    expect(line.match(/`/g)).toHaveLength(4);
    expect(body).toContain('This pull request is a draft: the docs checks still fail after 2 repair rounds.');
  });

  it('on a pull request that stays ready, says so instead of calling it a draft', () => {
    const outcome: CheckOutcome = {
      status: 'failed',
      repairs: 1,
      report: {
        framework: 'mintlify',
        checkedFiles: ['a.mdx'],
        checks: [],
        notes: [],
        findings: [{ file: 'a.mdx', line: 1, column: 1, rule: 'link-broken', message: 'm' }],
      },
    };
    const body = checksSection(outcome, false);
    expect(body).toContain('The docs checks still fail after 1 repair round; the pull request was ready for review and stays so.');
    expect(body).not.toContain('draft');
  });
});
