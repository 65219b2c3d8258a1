// Plain Markdown, confinement (symlinks and ../ never read outside the worktree) and the budgets.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatReport } from '../../src/docs-checks/format.ts';
import { added, brief, check, cleanupSites, modified, writeSite } from './fixture.ts';

afterEach(cleanupSites);

describe('docs checks: plain Markdown', () => {
  it('checks relative links, anchors (GitHub slugs: punctuation, duplicates, HTML ids) and images; leaves site-absolute links', async () => {
    const root = writeSite({
      'README.md':
        '# Project\n\n[Guide](docs/guide.md#faq-what-is-it) [dup](docs/guide.md#usage-1) [html](docs/guide.md#legacy) [abs](/whatever) ![x](docs/a.png)\n',
      'docs/guide.md':
        '# Guide\n\n## FAQ: what is it?\n\n## Usage\n\n## Usage\n\n<a id="legacy"></a>\n\n| a | b |\n|---|---|\n| [up](../README.md#project) | c |\n',
      'docs/a.png': 'PNG',
    });
    const report = await check(root, modified('README.md', 'docs/guide.md'));
    expect(report.framework).toBe('markdown');
    expect(report.findings).toEqual([]);
    const bad = writeSite({ 'README.md': '# P\n\n[a](docs/guide.md#usage-2)\n[b](docs/guid.md)\n', 'docs/guide.md': '## Usage\n## Usage\n' });
    expect(brief(await check(bad, modified('README.md')))).toEqual(['README.md:3 anchor-missing', 'README.md:4 link-broken']);
  });
});

describe('docs checks: confinement', () => {
  it('a link through a symlink out of the worktree, or ../ past its root, is a finding and nothing outside is read', async () => {
    const outside = writeSite({ 'secret.md': '# Top secret heading\n\nSECRET-CONTENT\n' });
    const root = writeSite(
      {
        'README.md': '# P\n\n[a](docs/leak.md#top-secret-heading)\n\n[b](../../../../etc/passwd)\n\n[c](linked/secret.md#top-secret-heading)\n',
        'docs/ok.md': '# ok\n',
      },
      { 'docs/leak.md': path.join(outside, 'secret.md'), linked: outside },
    );
    const report = await check(root, modified('README.md'));
    expect(brief(report)).toEqual(['README.md:3 link-outside', 'README.md:5 link-outside', 'README.md:7 link-broken']);
    expect(JSON.stringify(report)).not.toContain('SECRET-CONTENT');
    expect(JSON.stringify(report)).not.toContain(outside);
    // A changed page that is itself a link out is not read either.
    const viaLink = await check(root, modified('docs/leak.md'));
    expect(viaLink.checkedFiles).not.toContain('docs/leak.md');
    expect(JSON.stringify(viaLink)).not.toContain('SECRET');
  });
});

describe('docs checks: budgets', () => {
  it('a page over the size limit is a finding, not a crash', async () => {
    const root = writeSite({ 'README.md': `# Big\n\n${'word '.repeat(5000)}\n` });
    const report = await check(root, modified('README.md'), { limits: { maxFileBytes: 1024 } });
    expect(brief(report)).toEqual(['README.md:0 file-too-large']);
  });

  it('an aborted signal ends the run with check-timeout', async () => {
    const root = writeSite({ 'README.md': '# P\n\n[a](b.md)\n' });
    const report = await check(root, modified('README.md'), { signal: AbortSignal.abort() });
    expect(report.findings.map((f) => f.rule)).toEqual(['check-timeout']);
  });

  it('the file budget bounds how many pages are read when looking for links to a changed page', async () => {
    const files: Record<string, string> = { 'docs/target.md': '# Target\n' };
    for (let i = 0; i < 30; i++) files[`docs/p${String(i).padStart(2, '0')}.md`] = `# P${i}\n\n[t](target.md#gone)\n`;
    const root = writeSite(files);
    const report = await check(root, modified('docs/target.md'), { limits: { maxFiles: 10 } });
    // Some of the 30 broken anchors are found; the run stops at its budget and says so.
    expect(report.findings.length).toBeGreaterThan(0);
    expect(report.findings.length).toBeLessThan(30);
    expect(report.findings.every((f) => f.rule === 'anchor-missing')).toBe(true);
    expect(report.notes.join('\n')).toContain('budget');
    expect(formatReport(report)).toMatch(/^Docs checks found \d+ problems/);
  });

  it('a new page on a site without navigation passes; the report reads as text', async () => {
    const root = writeSite({ 'notes/new.md': '# New\n' });
    const report = await check(root, added('notes/new.md'));
    expect(formatReport(report)).toMatch(/^Docs checks passed \(plain Markdown; 1 page checked/);
    expect(fs.existsSync(root)).toBe(true);
  });
});
