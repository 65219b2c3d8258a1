// The unrelated-page rule (pure): which changed pages the job's requests name, which link to a page the branch
// adds, moves or deletes, and sweeps that name no page. Hostile titles and links stay bounded.
import { describe, expect, it } from 'vitest';
import { namedBy, normalise, type PageFacts, pageTitles, pathNames, requestText, unrelatedPages } from '../../src/agent/page-scope.ts';
import { requestsFrom } from '../../src/agent/scope.ts';

const modified = (p: string, text = 'Body.\n', baseText = text): PageFacts => ({ path: p, oldPath: null, status: 'modified', text, baseText });

describe('unrelated pages (pure)', () => {
  it('a page is named by its path, file name, stem, route or slug (whole words, any case)', async () => {
    const pages = [modified('docs/guides/getting-started.md'), modified('docs/billing/index.mdx'), modified('docs/api/webhooks.mdx'), modified('docs/faq.md')];
    const verdict = (request: string) => unrelatedPages([request], pages).then((v) => v.unrelated);
    expect(await verdict('Fix docs/faq.md and the Getting Started guide')).toEqual(['docs/billing/index.mdx', 'docs/api/webhooks.mdx']);
    expect(await verdict('Update the BILLING page and api/webhooks')).toEqual(['docs/guides/getting-started.md', 'docs/faq.md']);
    expect(await verdict('In faq.md fix the typo')).toEqual(['docs/guides/getting-started.md', 'docs/billing/index.mdx', 'docs/api/webhooks.mdx']);
    // Whole words: "webhooksy" and "faqs" do not name "webhooks" or "faq".
    expect(await verdict('Edit guides/getting-started; mention webhooksy and faqs')).toEqual([
      'docs/billing/index.mdx',
      'docs/api/webhooks.mdx',
      'docs/faq.md',
    ]);
    expect(pathNames('docs/guides/setup.md')).toEqual(expect.arrayContaining(['docs/guides/setup.md', 'setup.md', 'guides/setup', 'setup']));
  });

  it('a page is named by its front matter title or slug, or its first # heading, as it is or as it was', async () => {
    const a = modified('docs/a.md', '---\ntitle: "Rate limits"\nslug: /limits-and-quotas\n---\n\nBody.\n');
    const b = modified('docs/b.md', 'Intro line\n\n# Single sign-on (SSO)\n\n# Later heading\n');
    const c = modified('docs/c.md', '# New title\n', '# Old Setup Title\n');
    const d = modified('docs/d.md');
    const v = await unrelatedPages(['Document the new rate LIMITS in the single sign on (sso) page; also old setup title', 'unrelated words'], [a, b, c, d]);
    expect(v).toEqual({ unrelated: ['docs/d.md'], named: ['docs/a.md', 'docs/b.md', 'docs/c.md'], sweep: false, notes: [] });
    expect(namedBy(requestText(['see limits and quotas']), a)).toBe(true);
    expect(namedBy(requestText(['later heading']), b)).toBe(false);
    expect(pageTitles('---\ntitle: X\n---\n# Heading ##\n')).toEqual(['X', 'Heading']);
    // A heading line built to make a pattern backtrack is too long to be a name, and costs one pass.
    expect(pageTitles(`# a${' #'.repeat(100_000)}x\n# Next\n`)).toEqual([]);
  });

  it('a request that names none of the changed pages is a sweep: no page is unrelated', async () => {
    const pages = [modified('docs/a.md'), modified('docs/b.md')];
    expect(await unrelatedPages(['Apply the style rule across the docs: sentence-case headings'], pages)).toEqual({
      unrelated: [],
      named: [],
      sweep: true,
      notes: [],
    });
    expect(await unrelatedPages(['fix typos everywhere'], pages)).toMatchObject({ sweep: true });
    // A file named for its rules (AGENTS.md) is not a changed page: still a sweep.
    expect(await unrelatedPages(['Fix every violation of the AGENTS.md rule on "simply"'], pages)).toMatchObject({ unrelated: [], sweep: true });
  });

  it('a page that links (or linked) to a page the branch adds, moves or deletes is related', async () => {
    const moved: PageFacts = {
      path: 'docs/guides/start.md',
      oldPath: 'docs/guides/quickstart.md',
      status: 'renamed',
      text: '# Start\n',
      baseText: '# Start\n',
    };
    const added: PageFacts = { path: 'docs/webhooks.mdx', oldPath: null, status: 'added', text: '# Webhooks\n', baseText: null };
    const gone: PageFacts = { path: 'docs/legacy/index.md', oldPath: null, status: 'deleted', text: null, baseText: '# Legacy\n' };
    const pages = [
      moved,
      added,
      gone,
      // The old version linked to the old path; the new one links to the new path.
      modified('docs/intro.md', 'See [start](guides/start.md#run).\n', 'See [start](./guides/quickstart.md#run).\n'),
      // A site-absolute route to the moved page.
      modified('docs/api/overview.mdx', 'Read [it](/guides/quickstart/).\n', 'Read [it](/guides/quickstart/).\n'),
      // Links to the added page.
      modified('docs/events.md', 'New: [webhooks](../docs/webhooks).\n', 'Old.\n'),
      // Linked to the deleted folder page.
      modified('docs/history.md', 'Gone.\n', 'See [legacy](legacy/).\n'),
      // Links elsewhere only (external, an image of the moved name, the moved name in text).
      modified('docs/other.md', '[x](https://example.com/guides/quickstart) ![i](guides/quickstart.md) guides/quickstart.md\n', 'Old.\n'),
    ];
    const v = await unrelatedPages(['Rename the quickstart to start; add a webhooks page; remove legacy'], pages);
    expect(v.unrelated).toEqual(['docs/other.md']);
  });

  it('hostile pages and requests stay bounded: a huge title, thousands of links, a page that does not parse', async () => {
    const hugeTitle = `# ${'word '.repeat(200_000)}\n`;
    const manyLinks = Array.from({ length: 20_000 }, (_, i) => `[l${i}](p${i}.md)`).join(' ');
    const pages = [
      modified('docs/huge.md', hugeTitle),
      modified('docs/links.md', manyLinks),
      modified('docs/broken.mdx', '<div>\n{ unclosed\n'),
      { path: 'docs/new.md', oldPath: null, status: 'added' as const, text: '# New\n', baseText: null },
    ];
    const request = `${'word '.repeat(10_000)} new page`;
    const v = await unrelatedPages([request], pages);
    // The huge title is longer than any name matched; the request names the added page.
    expect(v.unrelated).toEqual(['docs/huge.md', 'docs/links.md', 'docs/broken.mdx']);
    expect(v.notes).toEqual([]);
    // Past the characters parsed for links in one check, pages are not called unrelated, and a note says so.
    const big = Array.from({ length: 12 }, (_, i) => modified(`docs/big-${i}.md`, 'x'.repeat(250_000)));
    const over = await unrelatedPages(['new page'], [...big, pages[3]!]);
    expect(over.unrelated).toEqual(big.slice(0, 8).map((p) => p.path));
    expect(over.notes).toEqual(['4 changed pages were not read for links (over 2097152 characters): not called unrelated']);
    expect(requestText(['x'.repeat(50_000)]).length).toBeLessThanOrEqual(20_002);
    expect(normalise('A--b__C')).toBe(' a b c ');
  });

  it('the requests of a job are its user messages without the checks’ repair messages', () => {
    expect(
      requestsFrom([
        { role: 'user', content: 'Update the intro' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'Inkwell checked your changes: some changes are out of scope (repair round 1 of 2).\ndocs/faq.md ...' },
        { role: 'user', content: [{ type: 'text', text: 'Now the FAQ' }] },
      ]),
    ).toEqual(['Update the intro', 'Now the FAQ']);
  });
});
