// Docusaurus with its defaults (docusaurus.config is code and is not run): docs under `docs/` served at
// `/docs/<id>`, pages under `src/pages/` at their path, files under `static/` at the root. A doc's id is its
// path under docs/ without the extension and without number prefixes (`01-intro` → `intro`); front matter
// `id` replaces the last part and `slug` the route. Sidebars: sidebars.{js,ts,mjs,cjs}, read statically; with
// none, Docusaurus generates one listing every doc.
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { sidebarsOutline } from './outline.ts';
import type { DocsReader } from './reader.ts';
import { readSidebars, sidebarDocs } from './sidebars.ts';
import { type NavEntry, pageFile, positionOf, Routes, type Site, underRoot } from './site.ts';

const DOCS = 'docs/';
const ROUTE_BASE = '/docs';
const SIDEBARS = ['sidebars.js', 'sidebars.ts', 'sidebars.mjs', 'sidebars.cjs', 'sidebars.json'];

const stripNumber = (part: string) => part.replace(/^\d+\s*[-_.]\s*/, '');

/** A doc's default id: its path under docs/ without extension and number prefixes. Pure. */
export function docusaurusDocId(rel: string): string {
  return rel
    .slice(DOCS.length)
    .replace(/\.mdx?$/, '')
    .split('/')
    .map(stripNumber)
    .join('/');
}

/** A doc's default route: `/docs/<id>`, an index/README (or a doc named like its folder) serving its folder. Pure. */
export function docusaurusRoute(id: string): string {
  const parts = id.split('/');
  const last = parts.at(-1)!;
  if (/^(index|readme)$/i.test(last) || (parts.length > 1 && last === parts.at(-2))) parts.pop();
  return `${ROUTE_BASE}/${parts.join('/')}`.replace(/\/$/, '');
}

function buildRoutes(files: ReadonlySet<string>): Routes {
  const routes = new Routes();
  for (const f of files) {
    if (f.startsWith(DOCS) && /\.mdx?$/.test(f)) routes.set(docusaurusRoute(docusaurusDocId(f)), f);
    else if (f.startsWith('src/pages/') && /\.(mdx?|jsx?|tsx?)$/.test(f))
      routes.set(
        f
          .slice('src/pages/'.length)
          .replace(/\.\w+$/, '')
          .replace(/(^|\/)index$/, ''),
        f,
      );
  }
  return routes;
}

/** The front matter of a page as fields, from its first 4 KB; null when it has none or it is not YAML. Pure. */
export function frontMatterFields(text: string): Record<string, unknown> | null {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n/.exec(text.slice(0, 4096));
  if (!m) return null;
  try {
    const value = parseYaml(m[1]!, { maxAliasCount: 100 }) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export async function docusaurusSite(reader: DocsReader, files: ReadonlySet<string>, configFile: string): Promise<Site> {
  const routes = buildRoutes(files);
  const ids = new Map<string, string>();
  for (const f of files) if (f.startsWith(DOCS) && /\.mdx?$/.test(f)) ids.set(docusaurusDocId(f), f);
  let learnedAll = false;
  const site: Site = {
    framework: 'docusaurus',
    docsRoot: 'docs',
    configFiles: [configFile, ...SIDEBARS.filter((s) => files.has(s))],
    mdAsMdx: true,
    requiredFields: { fields: [], exempt: () => true },
    resolveAbsolute: (p) => {
      const rel = underRoot('', p.replace(/^\/+/, ''));
      if (rel === null) return null;
      return routes.get(`/${rel}`) ?? (files.has(`static/${rel}`) ? `static/${rel}` : null);
    },
    routeOf: (f) => (f.startsWith(DOCS) ? docusaurusRoute(docusaurusDocId(f)) : null),
    learn: (f, fm) => {
      if (!f.startsWith(DOCS)) return;
      const dir = path.posix.dirname(docusaurusDocId(f));
      if (typeof fm.id === 'string') {
        const id = dir === '.' ? fm.id : `${dir}/${fm.id}`;
        ids.set(id, f);
        for (const e of site.navigation?.entries ?? []) if (e.raw === id) e.file = f;
      }
      if (typeof fm.slug === 'string')
        routes.set(fm.slug.startsWith('/') ? `${ROUTE_BASE}${fm.slug}` : `${ROUTE_BASE}/${dir === '.' ? '' : `${dir}/`}${fm.slug}`, f);
    },
    learnAll: async () => {
      if (learnedAll) return;
      learnedAll = true;
      for (const f of [...files].sort()) {
        if (!f.startsWith(DOCS) || !/\.mdx?$/.test(f)) continue;
        const page = await reader.read(f);
        const fm = page.ok ? frontMatterFields(page.text) : null;
        if (fm) site.learn?.(f, fm);
      }
    },
    navigation: null,
    findings: [],
    notes: [`${configFile} is code and is not run: docs are assumed under docs/ and served at /docs`],
  };
  const sidebarsFile = SIDEBARS.find((s) => files.has(s));
  if (!sidebarsFile) {
    site.notes.push('no sidebars file: Docusaurus lists every doc, so every doc is reachable');
    return site;
  }
  const read = await reader.read(sidebarsFile);
  if (!read.ok) {
    site.notes.push(`${sidebarsFile} could not be read (${read.message}); navigation not checked`);
    return site;
  }
  let docs: ReturnType<typeof sidebarDocs>;
  let outline: ReturnType<typeof sidebarsOutline>;
  try {
    const value = sidebarsFile.endsWith('.json') ? JSON.parse(read.text) : await readSidebars(read.text, sidebarsFile.endsWith('.ts'));
    docs = sidebarDocs(value);
    outline = sidebarsOutline(value);
  } catch (err) {
    site.findings.push({
      file: sidebarsFile,
      line: 1,
      column: 1,
      rule: 'config-invalid',
      message: `${sidebarsFile} does not parse: ${(err as Error).message.split('\n')[0]}`,
    });
    return site;
  }
  if (docs.partial) site.notes.push(`${sidebarsFile} is partly computed (not literal values); only its literal entries were checked`);
  const entries: NavEntry[] = docs.ids.map(({ id }) => ({ raw: id, file: ids.get(id) ?? pageFile(`${DOCS}${id}`, files), ...positionOf(read.text, id) }));
  site.navigation = {
    file: sidebarsFile,
    entries,
    outline,
    // An entry may name a doc by the `id` in its front matter.
    resolve: () => site.learnAll?.() ?? Promise.resolve(),
    covers: (f) => {
      const listed = entries.some((e) => e.file === f) || [...ids.entries()].some(([id, file]) => file === f && docs.ids.some((d) => d.id === id));
      if (listed) return true;
      const under = f.slice(DOCS.length);
      if (f.startsWith(DOCS) && docs.autogenerated.some((d) => d === '.' || d === '' || under.startsWith(`${d.replace(/\/+$/, '')}/`))) return true;
      return docs.partial ? 'unknown' : false;
    },
  };
  return site;
}
