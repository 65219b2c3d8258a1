import { afterEach, describe, expect, it } from 'vitest';
import { added, brief, check, cleanupSites, modified, renamed, writeSite } from './fixture.ts';

afterEach(cleanupSites);

const DOCS_JSON = JSON.stringify(
  {
    name: 'Acme',
    navigation: {
      tabs: [
        {
          tab: 'Guides',
          groups: [{ group: 'Start', pages: ['index', 'guides/setup', { group: 'More', pages: ['guides/index'] }] }],
        },
      ],
      anchors: [{ anchor: 'API', pages: ['api/overview'] }],
    },
  },
  null,
  2,
);

const GOOD = {
  'docs.json': DOCS_JSON,
  'index.mdx': '---\ntitle: Home\n---\n\nStart with [setup](/guides/setup#install-the-cli) or [the guides](/guides/).\n',
  'guides/index.mdx': '---\ntitle: Guides\n---\n\n# Guides\n\nSee [setup](./setup) and [setup again](setup.mdx#step-2-configure).\n',
  'guides/setup.mdx':
    '---\ntitle: Setup\n---\nimport Note from "/snippets/note.mdx";\n\n## Install the CLI\n\n<Note />\n\n## Step 2: configure\n\n<Card title="API" href="/api/overview">Read on</Card>\n\n![Logo](/images/logo.png)\n',
  'api/overview.mdx': '---\ntitle: API\n---\n\n## Overview\n\nBack [home](/).\n',
  'snippets/note.mdx': 'A reusable note.\n',
  'images/logo.png': 'PNG',
};

describe('docs checks: Mintlify', () => {
  it('passes a site whose links, anchors, index pages, trailing slashes, components, imports and images resolve', async () => {
    const root = writeSite(GOOD);
    const report = await check(root, modified('index.mdx', 'guides/index.mdx', 'guides/setup.mdx', 'api/overview.mdx'));
    expect(report.framework).toBe('mintlify');
    expect(report.findings).toEqual([]);
    expect(report.checkedFiles).toEqual(['api/overview.mdx', 'guides/index.mdx', 'guides/setup.mdx', 'index.mdx']);
  });

  it('reports MDX that does not compile with its line and column, and what the front matter lacks', async () => {
    const root = writeSite({
      ...GOOD,
      'guides/setup.mdx': '---\ntitle: Setup\n---\n\n## Install the CLI\n\n<Card title="x">\nnever closed\n',
      'guides/index.mdx': '---\ndescription: no title\n---\n\n# Guides\n',
      'api/overview.mdx': '---\ntitle: [unclosed\n---\n\nText\n',
    });
    const report = await check(root, modified('guides/setup.mdx', 'guides/index.mdx', 'api/overview.mdx'));
    expect(brief(report)).toEqual(['api/overview.mdx:2 frontmatter-invalid', 'guides/index.mdx:1 frontmatter-field', 'guides/setup.mdx:7 parse-error']);
    const parse = report.findings.find((f) => f.rule === 'parse-error')!;
    expect(parse.column).toBeGreaterThan(0);
    expect(parse.message).toMatch(/^MDX: .*Card/);
    expect(report.findings.find((f) => f.rule === 'frontmatter-field')!.message).toContain('"title"');
  });

  it('reports broken links, missing anchors, images and snippets, each at its line', async () => {
    const root = writeSite({
      ...GOOD,
      'guides/setup.mdx':
        '---\ntitle: Setup\n---\nimport Gone from "/snippets/gone.mdx";\n\n## Install the CLI\n\n[x](/guides/nowhere)\n\n[y](/guides/setup#install)\n\n![z](/images/missing.png)\n\n<Card href="/api/overviews">c</Card>\n',
    });
    const report = await check(root, modified('guides/setup.mdx'));
    expect(brief(report)).toEqual([
      'guides/setup.mdx:4 import-missing',
      'guides/setup.mdx:8 link-broken',
      'guides/setup.mdx:10 anchor-missing',
      'guides/setup.mdx:12 image-missing',
      'guides/setup.mdx:14 link-broken',
      // What the change affects: guides/index.mdx links to the "Step 2: configure" heading it removed.
      'guides/index.mdx:7 anchor-missing',
    ]);
    expect(report.findings[2]!.message).toContain('install-the-cli');
  });

  it('a new page must be in the navigation', async () => {
    const root = writeSite({ ...GOOD, 'guides/faq.mdx': '---\ntitle: FAQ\n---\n\nQuestions.\n' });
    expect(brief(await check(root, added('guides/faq.mdx')))).toEqual(['guides/faq.mdx:1 nav-missing-page']);
    const wired = writeSite({
      ...GOOD,
      'docs.json': DOCS_JSON.replace('"guides/setup"', '"guides/setup", "guides/faq"'),
      'guides/faq.mdx': '---\ntitle: FAQ\n---\n\nQuestions.\n',
    });
    expect((await check(wired, [...added('guides/faq.mdx'), ...modified('docs.json')])).findings).toEqual([]);
  });

  it('a moved page leaves neither a navigation entry nor a link to its old place', async () => {
    const { 'guides/setup.mdx': setup, ...rest } = GOOD;
    const root = writeSite({ ...rest, 'guides/install.mdx': setup });
    const report = await check(root, renamed('guides/setup.mdx', 'guides/install.mdx'));
    expect(brief(report)).toEqual([
      'guides/install.mdx:1 nav-missing-page',
      'docs.json:12 nav-dangling',
      'guides/index.mdx:7 link-broken',
      'guides/index.mdx:7 link-broken',
      'index.mdx:5 link-broken',
    ]);
    expect(report.findings[1]!.message).toContain('"guides/setup"');
  });

  it('invalid docs.json is a finding', async () => {
    const root = writeSite({ ...GOOD, 'docs.json': '{ "navigation": [ }' });
    expect(brief(await check(root, modified('docs.json')))).toEqual(['docs.json:1 config-invalid']);
  });
});
