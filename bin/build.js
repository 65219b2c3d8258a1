// Bundles src/ into dist/ (what bin/inkwell.js runs) with esbuild: the CLI (dist/main.js) and the ingest
// worker thread's entry (dist/ingest-worker.js), code shared between them and each command's lazily imported
// part in chunks next to them. Type checking is `npm run typecheck`; this only strips types and bundles
// (about a second), so it can run before every `npm start` and test run.
//
// Why a bundle: loading modules, not running them, was most of a command's start-up. Resolving and reading
// ~130 files (one per source file, plus the packages') cost more than `project list` does; a few bundled
// files with only the code a command reaches, tree-shaken, start in about half the time (bench/cli-startup.ts).
//
// Not an installed command: `npm run build`, and `npm install` (prepare), `npm start` (prestart) and the test
// setup (test/cli/build-setup.ts) run it. The new tree is written next to dist/ and swapped in with renames,
// so a process starting meanwhile finds the old tree, the new one, or none (and then runs the sources).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Packages bundled into dist/ (tree-shaken) instead of loaded from node_modules, where each is hundreds of
 * module files (Kysely ~260, TypeBox ~680). Only pure JavaScript that opens no files of its own at run time:
 * native addons (better-sqlite3), packages that start workers or serve assets by path (pino's transports,
 * fastify's plugins) and pg (src/db/pg-lookup.ts requires one of its files by path) stay in node_modules. No
 * package left in node_modules may load a bundled one at run time (two copies would not share their state):
 * @fastify/type-provider-typebox is imported for its types only.
 */
const BUNDLED = ['kysely', 'prom-client', 'commander', 'typebox'];

/**
 * Every entry and chunk is one flat directory, so a module's `new URL('./x', import.meta.url)` finds the files
 * copied next to it: the ingest worker's bootstrap (src/analytics/ingest/ingest-worker-client.ts), which
 * imports ./ingest-worker.js.
 */
const COPIED = ['analytics/ingest/ingest-worker-boot.cjs'];

/** Builds `<root>/src` into `<root>/dist`; returns the number of files written. */
export async function buildDist(root = ROOT) {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const external = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})]
    .filter((name) => !BUNDLED.includes(name))
    .flatMap((name) => [name, `${name}/*`]);
  const next = path.join(root, `.dist-${process.pid}`);
  fs.rmSync(next, { recursive: true, force: true });
  try {
    await build({
      entryPoints: [
        { in: path.join(root, 'src/cli/main.ts'), out: 'main' },
        { in: path.join(root, 'src/analytics/ingest/ingest-worker.ts'), out: 'ingest-worker' },
      ],
      absWorkingDir: root,
      outdir: next,
      bundle: true,
      splitting: true,
      chunkNames: '[name]-[hash]',
      external,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      sourcemap: true,
      logLevel: 'error',
      // CommonJS code inside the bundle (commander, prom-client) gets a real `require` for Node's modules.
      banner: { js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);" },
    });
    for (const file of COPIED) fs.copyFileSync(path.join(root, 'src', file), path.join(next, path.basename(file)));
    const written = fs.readdirSync(next).length;
    swapIn(next, path.join(root, 'dist'));
    return written;
  } finally {
    fs.rmSync(next, { recursive: true, force: true });
  }
}

/** Replaces `dist` by `next` (two renames; retried when another build swapped at the same moment). */
function swapIn(next, dist) {
  const old = `${next}-old`;
  for (let attempt = 0; ; attempt++) {
    try {
      fs.renameSync(dist, old);
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
    }
    try {
      fs.renameSync(next, dist);
      break;
    } catch (err) {
      if ((err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') || attempt >= 5) throw err;
    } finally {
      fs.rmSync(old, { recursive: true, force: true });
    }
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const n = await buildDist();
  if (!process.argv.includes('--quiet')) process.stderr.write(`built dist/ (${n} files, ${Math.round(performance.now() - started)} ms)\n`);
}
