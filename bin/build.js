// Bundles src/ into dist/ (what bin/inkwell.js runs) with esbuild: the CLI (dist/main.js) and the ingest
// worker thread's, the import threads' and segment merge thread's entries (dist/ingest-worker.js, dist/import-worker.js, dist/merge-worker.js), code shared between them and each command's lazily imported
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
//
// The web dashboard (src/dashboard, Preact + uPlot) is bundled for browsers into dist/dashboard/: index.html
// and hashed, minified assets (with .gz copies), which the server serves at / (src/http/routes/dashboard.ts).
// Its JavaScript must stay under DASHBOARD_JS_BUDGET gzipped; the build fails above it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
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
 * copied next to it: the ingest worker's bootstrap (src/analytics/ingest/writer/ingest-worker-client.ts), which
 * imports ./ingest-worker.js, and the segment merge thread's (src/analytics/segments/merge-worker-client.ts).
 */
const COPIED = [
  'analytics/ingest/writer/ingest-worker-boot.cjs',
  'analytics/import/import-worker-boot.cjs',
  'analytics/segments/merge-worker-boot.cjs',
  'analytics/export/count-worker-boot.cjs',
];

/** The most JavaScript the dashboard may ship, gzipped (issue 15). */
export const DASHBOARD_JS_BUDGET = 250 * 1024;

/** The dashboard's page: no inline script or style (the Content-Security-Policy allows neither). */
const indexHtml = (js, css) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Inkwell</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/${css}">
<script type="module" src="/assets/${js}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Inkwell dashboard needs JavaScript. The API works without it: <a href="/docs">/docs</a>.</noscript>
</body>
</html>
`;

/**
 * Bundles src/dashboard into `out` (index.html, assets/app-<hash>.js and .css, each with a .gz copy);
 * returns the gzipped size of its JavaScript in bytes.
 */
export async function buildDashboard(root, out) {
  const assets = path.join(out, 'assets');
  const result = await build({
    entryPoints: [{ in: path.join(root, 'src/dashboard/main.tsx'), out: 'app' }],
    absWorkingDir: root,
    outdir: assets,
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome111', 'firefox111', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    metafile: true,
    logLevel: 'error',
  });
  const names = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
  const js = names.find((n) => n.endsWith('.js'));
  const css = names.find((n) => n.endsWith('.css'));
  fs.writeFileSync(path.join(out, 'index.html'), indexHtml(js, css));
  let jsGzip = 0;
  for (const name of names) {
    const gz = zlib.gzipSync(fs.readFileSync(path.join(assets, name)), { level: 9 });
    fs.writeFileSync(path.join(assets, `${name}.gz`), gz);
    if (name.endsWith('.js')) jsGzip += gz.length;
  }
  if (jsGzip > DASHBOARD_JS_BUDGET) throw new Error(`the dashboard's JavaScript is ${kb(jsGzip)} gzipped, over its budget of ${kb(DASHBOARD_JS_BUDGET)}`);
  return jsGzip;
}

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

/**
 * Builds `<root>/src` into `<root>/dist` (the dashboard into dist/dashboard); returns the number of files
 * written at the top level and the dashboard's gzipped JavaScript size.
 */
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
        { in: path.join(root, 'src/analytics/ingest/writer/ingest-worker.ts'), out: 'ingest-worker' },
        { in: path.join(root, 'src/analytics/import/import-worker.ts'), out: 'import-worker' },
        { in: path.join(root, 'src/analytics/segments/merge-worker.ts'), out: 'merge-worker' },
        { in: path.join(root, 'src/analytics/export/count-worker.ts'), out: 'count-worker' },
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
    const dashboardJsGzip = await buildDashboard(root, path.join(next, 'dashboard'));
    swapIn(next, path.join(root, 'dist'));
    return { written, dashboardJsGzip };
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
  const { written, dashboardJsGzip } = await buildDist();
  if (!process.argv.includes('--quiet')) {
    const ms = Math.round(performance.now() - started);
    process.stderr.write(`built dist/ (${written} files, ${ms} ms); dashboard JavaScript ${kb(dashboardJsGzip)} gzipped (budget ${kb(DASHBOARD_JS_BUDGET)})\n`);
  }
}
