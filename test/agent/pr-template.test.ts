// Inkwell's sections fitted into a repository's pull-request template, on templates shaped like real ones and on
// hostile ones; the bodies are parsed as GitHub-flavoured Markdown by remark.
import type { Heading, Root, RootContent } from 'mdast';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { describe, expect, it } from 'vitest';
import { pullRequestBody } from '../../src/agent/pr-body.ts';
import { headingKind, inertInline, MAX_TEMPLATE_CHARS } from '../../src/agent/pr-template.ts';
import type { DiffFile } from '../../src/git/diff.ts';

const parse = (md: string): Root => unified().use(remarkParse).use(remarkGfm).parse(md);
function nodes(tree: Root): RootContent[] {
  const out: RootContent[] = [];
  const walk = (n: { children?: RootContent[] }) => {
    for (const c of n.children ?? []) {
      out.push(c);
      walk(c as { children?: RootContent[] });
    }
  };
  walk(tree);
  return out;
}
const textOf = (n: RootContent): string => ('value' in n ? String(n.value) : 'children' in n ? (n.children as RootContent[]).map(textOf).join('') : '');
const headings = (md: string) =>
  nodes(parse(md))
    .filter((n): n is Heading => n.type === 'heading')
    .map((h) => `${'#'.repeat(h.depth)} ${textOf(h)}`);

const files: DiffFile[] = [{ path: 'docs/intro.md', oldPath: null, status: 'modified', additions: 3, deletions: 1, binary: false }];
const CHECKS = '### Docs checks\n\nPassed (1 page checked):\n- ✅ pages parse';
const body = (template: string | null, over: Partial<Parameters<typeof pullRequestBody>[0]> = {}) =>
  pullRequestBody({
    summary: 'The intro now welcomes readers.',
    firstRequest: null,
    request: 'Reword the intro',
    files,
    checks: CHECKS,
    template,
    jobId: 'job_1',
    ...over,
  });

describe('pull request template', () => {
  it('a common GitHub template: description ← summary, tested ← checks; its other headings and items stay, unchecked', () => {
    const template = [
      '## Description',
      '',
      '<!-- Please include a summary of the change and which issue is fixed. -->',
      'Please describe your change.',
      '',
      '## Type of change',
      '',
      '- [ ] Bug fix',
      '- [x] New feature',
      '',
      '## How Has This Been Tested?',
      '',
      'Describe the tests that you ran.',
      '- [ ] Previewed the site',
      '',
      '## Checklist:',
      '',
      '- [x] My change follows the style guide',
      '',
    ].join('\n');
    const b = body(template);
    expect(headings(b)).toEqual([
      '## Description',
      '## Type of change',
      '## How Has This Been Tested?',
      '### Docs checks',
      '## Checklist:',
      '### Request',
      '### Files changed (1)',
    ]);
    expect(b).toContain('## Description\n\nThe intro now welcomes readers.\n\n## Type of change\n\n- [ ] Bug fix\n- [ ] New feature');
    expect(b).toContain('## How Has This Been Tested?\n\n### Docs checks\n\nPassed (1 page checked):\n- ✅ pages parse\n\n- [ ] Previewed the site');
    expect(b).toContain('## Checklist:\n\n- [ ] My change follows the style guide');
    // The template's instructions under a heading Inkwell fills give way to its section.
    expect(b).not.toContain('Please describe your change.');
    expect(b).not.toContain('Describe the tests');
    expect(b).not.toContain('<!--');
    expect(b.endsWith('Reply to the job to update this pull request.')).toBe(true);
  });

  it('"Motivation and Context" and "Related issues" take the request; a follow-up adds its request below the first', () => {
    const template = '# Summary\n\n## Motivation and Context\n\nWhy is this change required?\n\n## Screenshots (if appropriate):\n';
    const b = body(template, { firstRequest: 'Reword the intro', request: 'Also fix the typo @octocat' });
    expect(headings(b)).toEqual([
      '# Summary',
      '## Motivation and Context',
      '### Request',
      '### Latest follow-up',
      '## Screenshots (if appropriate):',
      '### Files changed (1)',
      '### Docs checks',
    ]);
    expect(
      nodes(parse(b))
        .filter((n) => n.type === 'code')
        .map((n) => (n as { value: string }).value),
    ).toEqual(['Reword the intro', 'Also fix the typo @octocat']);
    expect(b).not.toContain('Why is this change required?');
    const related = body('## What changed\n\n## Related issues\n\nFixes #\n');
    expect(headings(related)).toEqual(['## What changed', '## Related issues', '### Request', '### Files changed (1)', '### Docs checks']);
  });

  it("a GitLab merge-request template: quick actions and headings kept inert, 'validate locally' ← checks", () => {
    const template = [
      '## What does this MR do and why?',
      '',
      '_Describe in detail what your merge request does and why._',
      '',
      '## How to set up and validate locally',
      '',
      '1. Run `make docs`',
      '',
      '## MR acceptance checklist',
      '',
      '- [ ] I have evaluated the [MR acceptance checklist](https://docs.gitlab.com/checklist)',
      '',
      '/label ~documentation',
      '/assign me',
    ].join('\n');
    const b = body(template);
    expect(headings(b)).toEqual([
      '## What does this MR do and why?',
      '## How to set up and validate locally',
      '### Docs checks',
      '## MR acceptance checklist',
      '### Request',
      '### Files changed (1)',
    ]);
    expect(b).toContain(
      '- [ ] I have evaluated the \\[MR acceptance checklist\\](https:/\u200b/docs.gitlab.com/checklist)\n\n\\/label ~documentation\n\\/assign me',
    );
    expect(nodes(parse(b)).filter((n) => n.type === 'link')).toEqual([]);
  });

  it('a template without a heading for the summary: what changed comes first, the template after it', () => {
    const b = body('## Checklist\n\n- [x] Spell-checked\n- [ ] Previewed\n');
    expect(headings(b)).toEqual(['### Request', '### Files changed (1)', '### Docs checks', '## Checklist']);
    expect(b.startsWith('The intro now welcomes readers.\n\n### Request')).toBe(true);
    expect(b).toContain('## Checklist\n\n- [ ] Spell-checked\n- [ ] Previewed\n\n---\nOpened by Inkwell');
    // A template of plain text only.
    expect(body('Thanks for contributing!\n').startsWith('The intro now welcomes readers.')).toBe(true);
    expect(body('Thanks for contributing!\n')).toContain('### Docs checks\n\nPassed (1 page checked):\n- ✅ pages parse\n\nThanks for contributing!');
  });

  it('matches headings by what they ask for, not by chance words', () => {
    const kinds = Object.fromEntries(
      [
        'Summary',
        'Description',
        'What changed',
        '📝 Description',
        'Proposed changes',
        'Why?',
        'Testing',
        'Checks',
        'How has this been tested?',
        'Test plan',
        'Related issues',
        'Context',
        'Linked tickets',
        'Files changed',
        'Types of changes',
        'Breaking changes',
        'Checklist',
        'Screenshots',
        'Notes for reviewers',
        'Other information',
      ].map((h) => [h, headingKind(h)]),
    );
    expect(kinds).toEqual({
      Summary: 'summary',
      Description: 'summary',
      'What changed': 'summary',
      '📝 Description': 'summary',
      'Proposed changes': 'summary',
      'Why?': 'summary',
      Testing: 'checks',
      Checks: 'checks',
      'How has this been tested?': 'checks',
      'Test plan': 'checks',
      'Related issues': 'request',
      Context: 'request',
      'Linked tickets': 'request',
      'Files changed': 'files',
      'Types of changes': null,
      'Breaking changes': null,
      Checklist: null,
      Screenshots: null,
      'Notes for reviewers': null,
      'Other information': null,
    });
    // Each section fills one heading: a second "Summary" keeps the template's own text.
    const b = body('## Summary\n\n## Summary\n\nKeep me.\n');
    expect(b).toContain('## Summary\n\nThe intro now welcomes readers.\n\n## Summary\n\nKeep me.');
  });
});

describe('hostile templates', () => {
  const HOSTILE_TEMPLATES = [
    // Markup of every kind in the text, the headings and the checklist.
    '## Summary <img src=x onerror=alert(1)>\n\n<script>alert(1)</script>\n<details><summary>x</summary>\n[click](https://evil.example) ![t](https://evil.example/t.png) <https://evil.example>\n@org/team &#64;octocat &commat;admin\n- [x] Ping @everyone [here](https://evil.example)\n## Testing\n',
    // A comment that never closes would hide everything after it; a fence that never closes would swallow it.
    '## Description\n\n<!-- never closed\n\n## Testing\n',
    '## Context\n\n```\nunclosed fence\n\n## Testing\n',
    '## Notes\n\n~~~~\n',
    // Link definitions that would turn Inkwell's words into links, and a heading hidden in a comment.
    '[Request]: https://evil.example\n[intro]: https://evil.example "t"\n<!--\n## Summary\n-->\n## Checklist\n- [ ] ok\n',
    // HTML that opens a block, a table with markup.
    '<div>\n\n## Summary\n\n| a | b |\n| - | - |\n| <b>x</b> | [y](https://evil.example) |\n',
  ];

  it.each(HOSTILE_TEMPLATES)('renders no markup, pings nobody and cannot swallow the request (%#)', (template) => {
    const request = 'Reword [the intro] @octocat';
    const b = body(template, { request, summary: 'Reworded [the intro].' });
    const tree = parse(b);
    const all = nodes(tree);
    expect(all.filter((n) => ['html', 'link', 'image', 'definition', 'linkReference', 'imageReference'].includes(n.type))).toEqual([]);
    // The request is still one code block holding exactly its text, and the footer is still the end.
    expect(all.filter((n) => n.type === 'code' && (n as { value: string }).value === request)).toHaveLength(1);
    expect(b.endsWith('Reply to the job to update this pull request.')).toBe(true);
    expect(headings(b)).toContain('### Request');
    // No @mention outside code: every @ is followed by a zero-width space.
    const text = all
      .filter((n) => n.type === 'text')
      .map((n) => (n as { value: string }).value)
      .join('\n');
    expect(text).not.toMatch(/@(?!\u200b)/);
    expect(b).not.toMatch(/&(?!amp;|lt;)/);
  });

  it('keeps at most MAX_TEMPLATE_CHARS of a huge template, and a long line clipped', () => {
    const template = `## Summary\n\n## Notes\n\n${'word '.repeat(5000)}\n${'- [ ] item\n'.repeat(5000)}`;
    const b = body(template);
    expect(b.length).toBeLessThan(MAX_TEMPLATE_CHARS + 2000);
    expect(b).toContain('The intro now welcomes readers.');
    expect(inertInline('x'.repeat(5000)).length).toBeLessThanOrEqual(1001);
  });

  it('a template that escaping would blow up, with the longest summary: the body stays under what GitHub takes, the footer outside code', () => {
    const template = `## Summary\n\n## Notes\n\n${`${'&<['.repeat(300)}\n`.repeat(20)}\n\`\`\`\n${'x'.repeat(900)}\n`.repeat(3);
    const b = body(template, { summary: `Title\n\n\`\`\`\n${'y'.repeat(60_000)}`, checks: CHECKS });
    expect(b.length).toBeLessThan(65_536);
    expect(b).toContain('… (clipped: the rest is longer');
    const last = parse(b).children.at(-1)!;
    expect(last.type).toBe('paragraph');
    expect(b.endsWith('Reply to the job to update this pull request.')).toBe(true);
  });

  it('code spans stay as they are, the rest is escaped', () => {
    expect(inertInline('Run `a <b> [c] @d` then [e](f) <g> @h &i')).toBe('Run `a <b> [c] @d` then \\[e\\](f) &lt;g> @\u200bh &amp;i');
    expect(inertInline('  /merge')).toBe('  \\/merge');
  });
});
