// The navigation's entries, as written in the site's config: docs.json/mint.json `pages`, mkdocs.yml `nav`
// paths, Docusaurus sidebars doc ids. Reuses the docs checks' readers; pure apart from esbuild's transform of a
// TypeScript sidebars file.
import { parse as parseYaml } from 'yaml';
import { mintlifyNavPages } from '../../src/docs-checks/mintlify.ts';
import { mkdocsNavPages } from '../../src/docs-checks/mkdocs.ts';
import { readSidebars, sidebarDocs } from '../../src/docs-checks/sidebars.ts';

const SIDEBARS = ['sidebars.js', 'sidebars.ts', 'sidebars.mjs', 'sidebars.cjs', 'sidebars.json'];

/** The navigation entries of the site in `files` (path → text); null when it has no navigation file. Throws on a config that does not parse. */
export async function navEntries(files: ReadonlyMap<string, string>): Promise<string[] | null> {
  for (const name of ['docs.json', 'mint.json']) {
    const text = files.get(name);
    if (text !== undefined) return mintlifyNavPages((JSON.parse(text) as { navigation?: unknown }).navigation);
  }
  for (const name of ['mkdocs.yml', 'mkdocs.yaml']) {
    const text = files.get(name);
    if (text !== undefined) {
      const config = parseYaml(text, { logLevel: 'silent' }) as { nav?: unknown } | null;
      return config?.nav === undefined ? null : mkdocsNavPages(config.nav);
    }
  }
  for (const name of SIDEBARS) {
    const text = files.get(name);
    if (text === undefined) continue;
    const value = name.endsWith('.json') ? JSON.parse(text) : await readSidebars(text, name.endsWith('.ts'));
    return sidebarDocs(value).ids.map((d) => d.id);
  }
  return null;
}
