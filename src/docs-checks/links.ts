// Where a page's link, image or import leads, and whether its #anchor exists there.
import path from 'node:path';
import { isPagePath, type PageRef, type ParsedPage } from './page.ts';
import type { DocsReader } from './reader.ts';
import { pageFile, type Site } from './site.ts';
import { pageAnchors } from './slugs.ts';
import type { Finding, RuleId } from './types.ts';

export interface LinkContext {
  site: Site;
  reader: DocsReader;
  files: ReadonlySet<string>;
  /** A page parsed once per run (anchors of link targets). */
  parsed(file: string): Promise<ParsedPage | null>;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** The part of a URL a check follows: path and anchor; null for external, mail, protocol-relative or templated URLs. Pure. */
export function splitUrl(url: string): { path: string; anchor: string | null } | null {
  const u = url.trim();
  if (u === '' || SCHEME.test(u) || u.startsWith('//') || /[{}<>]/.test(u)) return null;
  const hash = u.indexOf('#');
  const rawPath = (hash >= 0 ? u.slice(0, hash) : u).replace(/\?.*$/, '');
  const rawAnchor = hash >= 0 ? u.slice(hash + 1) : null;
  try {
    return { path: decodeURI(rawPath), anchor: rawAnchor === null ? null : decodeURIComponent(rawAnchor) };
  } catch {
    return { path: rawPath, anchor: rawAnchor };
  }
}

const missingRule = (kind: PageRef['kind']): RuleId => (kind === 'image' ? 'image-missing' : kind === 'import' ? 'import-missing' : 'link-broken');

type Target = { file: string } | { missing: string } | { outside: true } | { unchecked: true };

/** The file a link's path names, from the page `from`. */
async function target(ctx: LinkContext, from: string, ref: PageRef, p: string): Promise<Target> {
  const { site, files } = ctx;
  if (ref.kind === 'import' && !p.startsWith('.') && !p.startsWith('/') && !p.startsWith('@site/')) return { unchecked: true }; // a package
  const siteAbsolute = p.startsWith('/') || p.startsWith('@site/');
  if (siteAbsolute) {
    if (p.startsWith('@site/')) {
      const rel = path.posix.normalize(p.slice('@site/'.length));
      if (rel.startsWith('..')) return { outside: true };
      return files.has(rel) ? { file: rel } : { missing: rel };
    }
    let file = site.resolveAbsolute(p);
    if (file === null && site.learnAll) {
      await site.learnAll();
      file = site.resolveAbsolute(p);
    }
    if (file === 'unchecked') return { unchecked: true };
    return file === null ? { missing: p } : { file };
  }
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(from), p));
  if (joined === '..' || joined.startsWith('../')) return { outside: true };
  const rel = joined === '.' ? '' : joined;
  if (files.has(rel)) return { file: rel };
  const page = ref.kind === 'image' ? null : pageFile(p.endsWith('/') ? `${rel}/` : rel, files);
  if (page) return { file: page };
  // Relative to the page's URL rather than its file (`../other/` on a site with folder URLs).
  const route = site.routeOf(from);
  if (route !== null) {
    const viaRoute = path.posix.join(route.endsWith('/') ? route : path.posix.dirname(route), p);
    const file = viaRoute.startsWith('/') ? site.resolveAbsolute(viaRoute) : null;
    if (typeof file === 'string' && file !== 'unchecked') return { file };
  }
  return { missing: rel };
}

/** Findings for one reference of page `from`. */
export async function checkRef(ctx: LinkContext, from: string, page: ParsedPage, ref: PageRef): Promise<Finding | null> {
  const split = splitUrl(ref.url);
  if (!split) return null;
  const at = { file: from, line: ref.line, column: ref.column };
  const shown = ref.url.length > 200 ? `${ref.url.slice(0, 200)}…` : ref.url;
  let file = from;
  if (split.path !== '') {
    const t = await target(ctx, from, ref, split.path);
    if ('unchecked' in t) return null;
    if ('outside' in t) return { ...at, rule: 'link-outside', message: `"${shown}" leads outside the repository` };
    if ('missing' in t)
      return { ...at, rule: missingRule(ref.kind), message: `"${shown}": no ${ref.kind === 'image' ? 'file' : 'page or file'} at ${t.missing || '/'}` };
    file = t.file;
    // Confinement: a target that is a link leading out of the worktree is as good as missing.
    if ((await ctx.reader.exists(file)) === 'outside')
      return { ...at, rule: 'link-outside', message: `"${shown}": ${file} is a symbolic link that leads outside the repository` };
  }
  if (split.anchor === null || split.anchor === '' || ref.kind !== 'link' || !isPagePath(file)) return null;
  const targetPage = file === from ? page : await ctx.parsed(file);
  if (!targetPage || targetPage.parseError) return null; // its own parse error is what to fix
  const anchors = pageAnchors(targetPage, ctx.site.framework);
  if (anchors.has(split.anchor)) return null;
  const known = [...anchors].slice(0, 8).join(', ');
  return {
    ...at,
    rule: 'anchor-missing',
    message: `"${shown}": ${file} has no heading or id "${split.anchor}"${known ? ` (it has: ${known}${anchors.size > 8 ? ', …' : ''})` : ''}`,
  };
}
