// Mintlify: docs.json (or the older mint.json) next to the pages. A page's route is its path without the
// extension (`index` is its folder); navigation lists pages by that path in `pages` arrays, at any depth
// under groups, tabs, anchors, dropdowns, versions and languages.
import { mintlifyOutline } from './outline.ts';
import type { DocsReader } from './reader.ts';
import { type NavEntry, pageFile, positionOf, Routes, type Site, underRoot } from './site.ts';

/** Every string of every `pages` array under `value`, at any depth. Pure. */
export function mintlifyNavPages(value: unknown, key = '', out: string[] = [], depth = 0): string[] {
  if (depth > 64) return out;
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item === 'string' && key === 'pages') out.push(item);
      else mintlifyNavPages(item, key, out, depth + 1);
    }
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) mintlifyNavPages(v, k, out, depth + 1);
  }
  return out;
}

export async function mintlifySite(reader: DocsReader, files: ReadonlySet<string>, configFile: string): Promise<Site> {
  const routes = new Routes();
  for (const f of files) if (/\.mdx?$/.test(f)) routes.set(f.replace(/\.mdx?$/, '').replace(/(^|\/)index$/, ''), f);
  const site: Site = {
    framework: 'mintlify',
    docsRoot: '',
    configFiles: [configFile],
    mdAsMdx: false,
    requiredFields: { fields: ['title'], exempt: (f) => f.startsWith('snippets/') || /(^|\/)(README|CHANGELOG|AGENTS|CLAUDE|CONTRIBUTING)\.mdx?$/i.test(f) },
    resolveAbsolute: (p) => {
      const rel = underRoot('', p.replace(/^\/+/, ''));
      if (rel === null) return null;
      return routes.get(rel) ?? (files.has(rel) ? rel : pageFile(rel, files));
    },
    routeOf: (f) => `/${f.replace(/\.mdx?$/, '').replace(/(^|\/)index$/, '')}`,
    navigation: null,
    findings: [],
    notes: [],
  };
  const read = await reader.read(configFile);
  if (!read.ok) {
    site.notes.push(`${configFile} could not be read (${read.message}); navigation not checked`);
    return site;
  }
  let config: unknown;
  try {
    config = JSON.parse(read.text);
  } catch (err) {
    site.findings.push({ file: configFile, line: 1, column: 1, rule: 'config-invalid', message: `${configFile} is not valid JSON: ${(err as Error).message}` });
    return site;
  }
  const nav = (config as { navigation?: unknown })?.navigation;
  const raw = mintlifyNavPages(nav);
  const entries: NavEntry[] = raw
    .filter((r) => !/^[a-z][a-z0-9+.-]*:/i.test(r))
    .map((r) => ({ raw: r, file: pageFile(r.replace(/^\/+/, ''), files), ...positionOf(read.text, JSON.stringify(r)) }));
  const listed = new Set(entries.map((e) => e.file).filter((f) => f !== null));
  site.navigation = { file: configFile, entries, covers: (f) => listed.has(f), outline: mintlifyOutline(nav) };
  return site;
}
