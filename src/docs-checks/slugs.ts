// Heading anchors as each framework makes them. Pure.
import GithubSlugger from 'github-slugger';
import type { ParsedPage } from './page.ts';
import type { FrameworkId } from './types.ts';

/**
 * Python-Markdown's `toc` slugify (MkDocs' default): NFKD, ASCII only, drop what is not a word character,
 * space or hyphen, lower case, runs of spaces and hyphens become one `-`; a repeat gets `_1`, `_2`, ….
 */
export function mkdocsSlugger(): (text: string) => string {
  const seen = new Set<string>();
  return (text) => {
    const base = text
      .normalize('NFKD')
      .replace(/[^\p{ASCII}]/gu, '')
      .replace(/[^\w\s-]/g, '')
      .trim()
      .toLowerCase()
      .replace(/[-\s]+/g, '-');
    let slug = base;
    for (let n = 1; seen.has(slug); n++) slug = `${base}_${n}`;
    seen.add(slug);
    return slug;
  };
}

/** GitHub's slugs (github-slugger): Docusaurus, Mintlify and plain Markdown as GitHub renders it. */
export function githubSlugger(): (text: string) => string {
  const slugger = new GithubSlugger();
  return (text) => slugger.slug(text);
}

/** Every anchor a page offers: its headings' slugs (or explicit ids) and the ids its HTML/JSX gives. */
export function pageAnchors(page: ParsedPage, framework: FrameworkId): Set<string> {
  const slug = framework === 'mkdocs' ? mkdocsSlugger() : githubSlugger();
  const anchors = new Set(page.ids);
  for (const h of page.headings) anchors.add(h.explicitId ?? slug(h.text));
  return anchors;
}
