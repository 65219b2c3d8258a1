// MkDocs: mkdocs.yml names the pages folder (`docs_dir`, default `docs`) and the navigation (`nav`: page
// paths relative to docs_dir, nested under titles); without `nav` every page is listed. With
// `use_directory_urls` (the default) `a/b.md` is served at `/a/b/`, else at `/a/b.html`; `index.md` and
// `README.md` are their folder's page.
import { parseDocument } from 'yaml';
import { mkdocsOutline } from './outline.ts';
import type { DocsReader } from './reader.ts';
import { baseSite, type NavEntry, pageFile, positionOf, Routes, type Site, underRoot } from './site.ts';

/** Every page path in an MkDocs `nav` value (external URLs left out). Pure. */
export function mkdocsNavPages(value: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 64) return out;
  if (typeof value === 'string') {
    if (!/^[a-z][a-z0-9+.-]*:/i.test(value) && !value.startsWith('/')) out.push(value);
  } else if (Array.isArray(value)) {
    for (const v of value) mkdocsNavPages(v, out, depth + 1);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) mkdocsNavPages(v, out, depth + 1);
  }
  return out;
}

/** The URL path MkDocs serves a page (relative to docs_dir) at. Pure. */
export function mkdocsRoute(rel: string, directoryUrls: boolean): string {
  const stem = rel.replace(/\.(md|markdown)$/i, '');
  const dir = /(^|\/)(index|README)$/.test(stem);
  const folder = stem.replace(/(^|\/)(index|README)$/, '');
  if (dir) return `/${folder}${folder ? '/' : ''}`;
  return directoryUrls ? `/${stem}/` : `/${stem}.html`;
}

export async function mkdocsSite(reader: DocsReader, files: ReadonlySet<string>, configFile: string): Promise<Site> {
  const site = baseSite('mkdocs', [configFile]);
  const read = await reader.read(configFile);
  let config: Record<string, unknown> = {};
  if (!read.ok) site.notes.push(`${configFile} could not be read (${read.message}); defaults assumed`);
  else {
    // Tags such as !ENV or !!python/name are MkDocs' own: kept as plain values, never resolved.
    const doc = parseDocument(read.text, { logLevel: 'silent' });
    const error = doc.errors[0];
    if (error) {
      const pos = error.linePos?.[0];
      site.findings.push({
        file: configFile,
        line: pos?.line ?? 1,
        column: pos?.col ?? 1,
        rule: 'config-invalid',
        message: `${configFile} is not valid YAML: ${error.message.split('\n')[0]}`,
      });
    } else {
      const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) config = value as Record<string, unknown>;
    }
  }
  const docsDir = typeof config.docs_dir === 'string' ? (underRoot('', config.docs_dir) ?? 'docs') : 'docs';
  const directoryUrls = config.use_directory_urls !== false;
  site.docsRoot = docsDir;
  const prefix = docsDir ? `${docsDir}/` : '';
  const routes = new Routes();
  for (const f of files) if (f.startsWith(prefix) && /\.(md|markdown)$/i.test(f)) routes.set(mkdocsRoute(f.slice(prefix.length), directoryUrls), f);
  site.resolveAbsolute = (p) => {
    const rel = underRoot('', p.replace(/^\/+/, ''));
    if (rel === null) return null;
    const page = routes.get(rel) ?? routes.get(rel.replace(/(^|\/)index\.html$/, ''));
    return page ?? (files.has(prefix + rel) ? prefix + rel : null);
  };
  site.routeOf = (f) => (f.startsWith(prefix) ? mkdocsRoute(f.slice(prefix.length), directoryUrls) : null);
  if (config.nav === undefined) {
    site.notes.push(`${configFile} has no nav: MkDocs lists every page, so every page is reachable`);
    return site;
  }
  const text = read.ok ? read.text : '';
  const entries: NavEntry[] = mkdocsNavPages(config.nav).map((r) => ({
    raw: r,
    file: files.has(prefix + r) ? prefix + r : pageFile(prefix + r, files),
    ...positionOf(text, r),
  }));
  const listed = new Set(entries.map((e) => e.file).filter((f) => f !== null));
  site.navigation = { file: configFile, entries, covers: (f) => listed.has(f), outline: mkdocsOutline(config.nav) };
  return site;
}
