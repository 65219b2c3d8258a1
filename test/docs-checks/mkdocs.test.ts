import { afterEach, describe, expect, it } from 'vitest';
import { mkdocsRoute } from '../../src/docs-checks/mkdocs.ts';
import { added, brief, check, cleanupSites, deleted, modified, writeSite } from './fixture.ts';

afterEach(cleanupSites);

const MKDOCS = `site_name: Acme
docs_dir: site
markdown_extensions:
  - toc:
      slugify: !!python/name:pymdownx.slugs.uslugify
nav:
  - Home: index.md
  - Guide:
      - guide/index.md
      - Setup: guide/setup.md
  - External: https://example.com/
`;

const GOOD = {
  'mkdocs.yml': MKDOCS,
  'site/index.md': '# Acme\n\nRead [the guide](guide/) and [setup](guide/setup.md#whats-new), [again](/guide/setup/#setup_1).\n',
  'site/guide/index.md': '# Guide\n\n[Setup](setup.md#step-2-configure-the-cli) · [home](../index.md) · [by URL](../guide/setup/)\n',
  'site/guide/setup.md':
    "# Setup\n\n## What's new?\n\n## Setup\n\n## Setup\n\n## Step 2: configure (the CLI)\n\n## Custom { #my-id .wide }\n\n[here](#my-id) ![shot](img/shot.png)\n",
  'site/guide/img/shot.png': 'PNG',
};

describe('docs checks: MkDocs', () => {
  it('routes pages as MkDocs does (directory URLs, index pages)', () => {
    expect(mkdocsRoute('guide/setup.md', true)).toBe('/guide/setup/');
    expect(mkdocsRoute('guide/index.md', true)).toBe('/guide/');
    expect(mkdocsRoute('README.md', true)).toBe('/');
    expect(mkdocsRoute('guide/setup.md', false)).toBe('/guide/setup.html');
  });

  it('passes relative, directory and site-absolute links with anchors slugged like Python-Markdown (punctuation, duplicates, attr_list ids)', async () => {
    const root = writeSite(GOOD);
    const report = await check(root, modified('site/index.md', 'site/guide/index.md', 'site/guide/setup.md', 'mkdocs.yml'));
    expect(report.framework).toBe('mkdocs');
    expect(report.findings).toEqual([]);
  });

  it('reports anchors slugged the GitHub way (wrong for MkDocs), missing pages and images', async () => {
    const root = writeSite({
      ...GOOD,
      'site/index.md': '# Acme\n\n[a](guide/setup.md#step-2-configure-the-cli-)\n\n[b](guide/nope.md)\n\n![c](guide/img/none.png)\n\n[d](/guide/nope/)\n',
    });
    expect(brief(await check(root, modified('site/index.md')))).toEqual([
      'site/index.md:3 anchor-missing',
      'site/index.md:5 link-broken',
      'site/index.md:7 image-missing',
      'site/index.md:9 link-broken',
    ]);
  });

  it('a new page must be in nav; a deleted one leaves no nav entry or link', async () => {
    const root = writeSite({ ...GOOD, 'site/guide/faq.md': '# FAQ\n' });
    expect(brief(await check(root, added('site/guide/faq.md')))).toEqual(['site/guide/faq.md:1 nav-missing-page']);
    const { 'site/guide/setup.md': _gone, ...rest } = GOOD;
    const after = writeSite(rest);
    expect(brief(await check(after, deleted('site/guide/setup.md')))).toEqual([
      'mkdocs.yml:10 nav-dangling',
      'site/guide/index.md:3 link-broken',
      'site/guide/index.md:3 link-broken',
      'site/index.md:3 link-broken',
      'site/index.md:3 link-broken',
    ]);
  });

  it('without nav every page is reachable; invalid YAML in mkdocs.yml is a finding', async () => {
    const root = writeSite({ 'mkdocs.yml': 'site_name: x\n', 'docs/index.md': '# Home\n', 'docs/new.md': '# New\n' });
    const report = await check(root, added('docs/new.md'));
    expect(report.findings).toEqual([]);
    expect(report.notes.join('\n')).toContain('no nav');
    const bad = writeSite({ 'mkdocs.yml': 'nav:\n  - a: [b\n', 'docs/index.md': '# Home\n' });
    expect(brief(await check(bad, modified('mkdocs.yml')))[0]).toMatch(/^mkdocs\.yml:\d+ config-invalid$/);
  });

  it('front matter must be valid YAML', async () => {
    const root = writeSite({ ...GOOD, 'site/guide/setup.md': `---\ntitle: a: b\n---\n${GOOD['site/guide/setup.md']}` });
    expect(brief(await check(root, modified('site/guide/setup.md')))).toEqual(['site/guide/setup.md:2 frontmatter-invalid']);
  });
});
