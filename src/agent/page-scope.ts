// Unrelated pages (src/agent/scope.ts): a docs page the branch changes (modified, deleted or renamed — never an
// added one) that the job's requests do not name and that does not link to a page the branch adds, moves or
// deletes. A request that names none of the changed pages (a sweep: "fix typos everywhere") makes no page unrelated. Pure:
// the caller reads the pages (bounded) and hands their text in.
import path from 'node:path';
import { splitUrl } from '../docs-checks/links.ts';
import { isPagePath, parsePage } from '../docs-checks/page.ts';

/** Pages whose changes the rule looks at (by extension). */
const DOCS_PAGE = /\.(md|mdx|markdown|rst|adoc)$/i;
/** Characters of the requests looked at (the newest last; older text is dropped first). */
export const MAX_REQUEST_CHARS = 20_000;
/** Bytes of a page read for its title, slug and links. */
export const MAX_PAGE_BYTES = 256 * 1024;
/** Changed pages the rule reads; beyond: a note, and those pages are not called unrelated. */
export const MAX_PAGES = 200;
/**
 * Characters of pages parsed for links in one check, all pages together (a 256 KiB page of 20,000 links takes
 * about 2 s to parse on a loaded machine); pages past it are not called unrelated, and a note says so.
 */
export const MAX_LINK_CHARS = 2 * 1024 * 1024;
/** Links of one page followed. */
const MAX_REFS = 2000;
/** Shortest and longest name (in normalised characters) matched against the requests. */
const MIN_NAME = 3;
const MAX_NAME = 200;

export function isDocsPage(rel: string): boolean {
  return DOCS_PAGE.test(rel);
}

/** Lower case, every run of characters other than letters and digits one space, padded: whole-word matching. Pure. */
export function normalise(text: string): string {
  return ` ${text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()} `;
}

const stripExt = (p: string) => p.replace(/\.[^./]+$/, '');

/**
 * The names a page goes by from its path: the path, with and without extension, every tail of its folders
 * (`guides/setup`, `setup`: its routes and slug), the file name, and a folder's name for an `index`/`README` page. Pure.
 */
export function pathNames(rel: string): string[] {
  const names = new Set<string>([rel, path.posix.basename(rel)]);
  const segments = stripExt(rel).split('/');
  for (let i = 0; i < segments.length; i++) names.add(segments.slice(i).join('/'));
  const last = segments.at(-1)?.toLowerCase();
  if ((last === 'index' || last === 'readme') && segments.length > 1) {
    for (let i = 0; i < segments.length - 1; i++) names.add(segments.slice(i, -1).join('/'));
  }
  return [...names];
}

/** Longest line looked at for a title (longer names are never matched anyway). */
const MAX_TITLE_LINE = 4 * MAX_NAME;

/**
 * The page's names from its text: front matter `title:`, `slug:` and `sidebar_label:`, and its first `# `
 * heading, in the first 400 lines. Lines are cut with string operations only (no backtracking on hostile text). Pure.
 */
export function pageTitles(text: string): string[] {
  const out: string[] = [];
  const lines = text.slice(0, MAX_PAGE_BYTES).split('\n', 400);
  let i = 0;
  if (lines[0]?.trim() === '---') {
    for (i = 1; i < lines.length && lines[i]!.trim() !== '---'; i++) {
      const line = lines[i]!.slice(0, MAX_TITLE_LINE);
      const m = /^(title|slug|sidebar_label):/.exec(line);
      if (m)
        out.push(
          line
            .slice(m[0].length)
            .trim()
            .replace(/^(["'])(.*)\1$/, '$2'),
        );
    }
    i++;
  }
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (!/^#[ \t]/.test(line)) continue;
    if (line.length <= MAX_TITLE_LINE)
      out.push(
        line
          .slice(1)
          .replace(/(^|\s)#+\s*$/, '')
          .trim(),
      );
    break;
  }
  return out;
}

/** Whether the normalised requests name `name` as whole words (names too short or too long are not matched). Pure. */
function names(requests: string, name: string): boolean {
  const n = normalise(name);
  const len = n.length - 2;
  return len >= MIN_NAME && len <= MAX_NAME && requests.includes(n);
}

/** The requests as matched: newest last, clipped to MAX_REQUEST_CHARS from the end, normalised. Pure. */
export function requestText(requests: readonly string[]): string {
  const joined = requests.join('\n');
  return normalise(joined.length > MAX_REQUEST_CHARS ? joined.slice(-MAX_REQUEST_CHARS) : joined);
}

export interface PageFacts {
  path: string;
  oldPath: string | null;
  status: 'added' | 'modified' | 'deleted' | 'renamed';
  /** The page as staged (null: deleted or unread). */
  text: string | null;
  /** The page at the base (null: added or unread). */
  baseText: string | null;
}

/** Whether the requests name the page: by a name of its path (old or new) or a title of either version. Pure. */
export function namedBy(requests: string, page: PageFacts): boolean {
  const candidates = [...pathNames(page.path), ...(page.oldPath ? pathNames(page.oldPath) : [])];
  for (const text of [page.text, page.baseText]) if (text !== null) candidates.push(...pageTitles(text));
  return candidates.some((c) => names(requests, c));
}

/** A page's link targets as repository paths without extension (relative ones resolved; site-absolute ones as given). */
async function linkTargets(rel: string, text: string): Promise<{ relative: string[]; absolute: string[] }> {
  const out = { relative: [] as string[], absolute: [] as string[] };
  if (!isPagePath(rel)) return out;
  // Links are what the docs checks parse (remark / the MDX compiler); a page that does not parse links to nothing.
  const parsed = await parsePage(text.slice(0, MAX_PAGE_BYTES), /\.mdx$/i.test(rel));
  for (const ref of parsed.refs.slice(0, MAX_REFS)) {
    if (ref.kind !== 'link') continue;
    const split = splitUrl(ref.url);
    if (!split || split.path === '') continue;
    const p = split.path.replace(/\/+$/, '');
    if (p.startsWith('/')) out.absolute.push(stripExt(p.slice(1)));
    else out.relative.push(stripExt(path.posix.normalize(path.posix.join(path.posix.dirname(rel), p))));
  }
  return out;
}

/**
 * Whether the page (as it is or as it was) links to one of `moved`: the paths (without extension) of pages the
 * branch adds, moves or deletes. A relative link matches the path it resolves to (a folder matches its `index`
 * or `README`); a site-absolute link (a route) matches a moved path that ends with it.
 */
export async function linksToMoved(page: PageFacts, moved: ReadonlySet<string>): Promise<boolean> {
  if (moved.size === 0) return false;
  const versions: Array<[string, string | null]> = [
    [page.path, page.text],
    // The base version only when it differs (a page as it was, at the same path, links to the same pages).
    [page.oldPath ?? page.path, page.baseText === page.text && !page.oldPath ? null : page.baseText],
  ];
  for (const [rel, text] of versions) {
    if (text === null) continue;
    const { relative, absolute } = await linkTargets(rel, text);
    for (const t of relative) if (moved.has(t) || moved.has(`${t}/index`) || moved.has(`${t}/README`)) return true;
    for (const a of absolute) {
      if (a === '') continue;
      for (const m of moved) {
        const route = m.replace(/\/(index|README)$/, '');
        if (route === a || route.endsWith(`/${a}`)) return true;
      }
    }
  }
  return false;
}

export interface UnrelatedVerdict {
  /** Changed pages neither named nor linking to a moved page (the sweep rule applied). */
  unrelated: string[];
  /** What was not looked at. */
  notes: string[];
  /** Changed pages (added ones included) the requests name. */
  named: string[];
  /** The requests name no page: nothing is unrelated. */
  sweep: boolean;
}

/**
 * The unrelated pages among `pages` (every changed docs page, added ones included: they can be what the request
 * names). The requests are the job's, the newest last.
 */
export async function unrelatedPages(requests: readonly string[], pages: readonly PageFacts[]): Promise<UnrelatedVerdict> {
  const text = requestText(requests);
  const named = pages.filter((p) => namedBy(text, p)).map((p) => p.path);
  // A request that names none of the changed pages is a sweep (or names only files that are not changed pages,
  // such as AGENTS.md for its rules): every page it changes may belong to it.
  if (named.length === 0) return { unrelated: [], named, sweep: true, notes: [] };
  const moved = new Set<string>();
  for (const p of pages) {
    if (p.status === 'modified') continue;
    moved.add(stripExt(p.path));
    if (p.oldPath) moved.add(stripExt(p.oldPath));
  }
  const unrelated: string[] = [];
  let parsed = 0;
  let skipped = 0;
  for (const p of pages) {
    if (p.status === 'added' || named.includes(p.path)) continue;
    if (moved.size > 0) {
      const size = (p.text?.length ?? 0) + (p.baseText === p.text && !p.oldPath ? 0 : (p.baseText?.length ?? 0));
      if (parsed + size > MAX_LINK_CHARS) {
        skipped++;
        continue;
      }
      parsed += size;
      if (await linksToMoved(p, moved)) continue;
    }
    unrelated.push(p.path);
  }
  const notes = skipped > 0 ? [`${skipped} changed pages were not read for links (over ${MAX_LINK_CHARS} characters): not called unrelated`] : [];
  return { unrelated, named, sweep: false, notes };
}
