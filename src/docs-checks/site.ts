// What a check needs to know of a docs site: where its pages live, how a site-absolute URL maps to a page
// (its routing), and its navigation. One builder per framework (mintlify.ts, mkdocs.ts, docusaurus.ts); this
// file holds the shared parts. Pure apart from reading config files through the DocsReader.
import path from 'node:path';
import type { OutlineItem } from './outline.ts';
import type { Finding, FrameworkId } from './types.ts';

export interface NavEntry {
  /** The entry as written. */
  raw: string;
  /** The page file it names, or null when it names none that exists. */
  file: string | null;
  line: number;
  column: number;
}

export interface Navigation {
  /** The config file that holds it. */
  file: string;
  entries: NavEntry[];
  /** Resolves entries that need more reading (Docusaurus ids given in front matter) before they are judged. */
  resolve?(): Promise<void>;
  /** Whether a page is reachable from it; 'unknown' when part of it could not be read statically. */
  covers(file: string): boolean | 'unknown';
  /** Its labels and pages as an outline (the agent's system prompt shows it, outline.ts). */
  outline?: OutlineItem[];
}

export interface Site {
  framework: FrameworkId;
  /** Folder the pages live under ('' = the repository root). */
  docsRoot: string;
  /** Config files whose change makes every navigation entry worth checking. */
  configFiles: string[];
  /** Whether the framework compiles `.md` pages as MDX too. */
  mdAsMdx: boolean;
  /** Front matter fields every page must have (pages under `exempt` need none). */
  requiredFields: { fields: string[]; exempt: (file: string) => boolean };
  /** The page or file a site-absolute URL path names; null: none; 'unchecked': the framework maps none. */
  resolveAbsolute(urlPath: string): string | null | 'unchecked';
  /** The URL path a page is served at (for links relative to it), or null. */
  routeOf(file: string): string | null;
  /** Learns what a page's front matter says of its route (Docusaurus `slug`, `id`). */
  learn?(file: string, frontMatter: Record<string, unknown>): void;
  /** Reads every page's front matter (once) to learn the routes and ids it gives, before a link is called broken. */
  learnAll?(): Promise<void>;
  /** null: no navigation to check (the framework lists every page, or has none). */
  navigation: Navigation | null;
  findings: Finding[];
  notes: string[];
}

export const PAGE_EXTENSIONS = ['.mdx', '.md'];

/** The page file a path names, the way doc sites resolve it: as is, with an extension, or its folder's index/README. */
export function pageFile(rel: string, files: ReadonlySet<string>): string | null {
  const base = rel.replace(/\/+$/, '');
  const candidates = [
    ...(rel.endsWith('/') ? [] : [base, ...PAGE_EXTENSIONS.map((e) => base + e)]),
    ...['index', 'README'].flatMap((n) => PAGE_EXTENSIONS.map((e) => (base === '' ? `${n}${e}` : `${base}/${n}${e}`))),
  ];
  return candidates.find((c) => files.has(c)) ?? null;
}

/** `a/b` joined under the docs root, normalised; null when it leaves the repository. */
export function underRoot(root: string, rel: string): string | null {
  const joined = path.posix.normalize(path.posix.join(root || '.', rel));
  if (joined === '..' || joined.startsWith('../')) return null;
  return joined === '.' ? '' : joined;
}

/** The 1-based line and column where `needle` first occurs in `text` (1:1 when it does not). */
export function positionOf(text: string, needle: string): { line: number; column: number } {
  const i = text.indexOf(needle);
  if (i < 0) return { line: 1, column: 1 };
  const before = text.slice(0, i).split('\n');
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

/** A map from route keys (no trailing slash, '' for the root) to page files; lookups ignore a trailing slash. */
export class Routes {
  private readonly map = new Map<string, string>();
  set(route: string, file: string): void {
    this.map.set(Routes.key(route), file);
  }
  get(route: string): string | null {
    return this.map.get(Routes.key(route)) ?? null;
  }
  static key(route: string): string {
    return route.replace(/^\/+/, '').replace(/\/+$/, '');
  }
}

/** A site with no routes, navigation or required fields: what each framework's builder starts from. */
export function baseSite(framework: FrameworkId, configFiles: string[] = []): Site {
  return {
    framework,
    docsRoot: '',
    configFiles,
    mdAsMdx: false,
    requiredFields: { fields: [], exempt: () => true },
    resolveAbsolute: () => 'unchecked',
    routeOf: () => null,
    navigation: null,
    findings: [],
    notes: [],
  };
}

/** Plain Markdown: relative links only; no routes, no navigation. */
export function plainSite(): Site {
  const site = baseSite('markdown');
  site.notes.push('plain Markdown: site-absolute links (starting with "/") are not checked, and there is no navigation to check');
  return site;
}
