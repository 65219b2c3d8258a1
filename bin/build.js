// Compiles src/ to dist/ (what bin/inkwell.js runs): one JavaScript file per source file, same layout, relative
// imports rewritten from ./x.ts to ./x.js. Type checking is `npm run typecheck`; this only strips types
// (esbuild, about a second), so it can run before every `npm start` and test run.
//
// Not an installed command: `npm run build`, and `npm install` (prepare), `npm start` (prestart) and the test
// setup (test/cli/build-setup.ts) run it. The new tree is written next to dist/ and swapped in with renames,
// so a process starting meanwhile finds the old tree, the new one, or none (and then runs the sources).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Packages the compiled code loads from dist/vendor (bundled: a few files) instead of node_modules (hundreds
 * of module files each). Resolving and reading those files, not running them, was most of a command's
 * start-up: Kysely is ~260 files (130 ms of the 280 ms `project list` took from dist/ on the development
 * machine; bundled, 35 ms), TypeBox ~680 (loaded by the configuration). Only pure JavaScript that opens no
 * files of its own at run time: native addons (better-sqlite3), packages that start workers or serve assets
 * by path (pino's transports, fastify's plugins) and pg (src/db/pg-lookup.ts requires one of its files by
 * path) stay in node_modules. No package left in node_modules may load a vendored one at run time (two
 * copies would not share their state): @fastify/type-provider-typebox is imported for its types only.
 */
const VENDORED = ['kysely', 'prom-client', 'commander', 'typebox'];
const VENDORED_SPEC = new RegExp(`^(${VENDORED.join('|')})(/[\\w./-]+)?$`);

/** Builds `<root>/src` into `<root>/dist`; returns the number of source files compiled. */
export async function buildDist(root = ROOT) {
  const src = path.join(root, 'src');
  const files = fs.readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => /\.(ts|cjs)$/.test(f) && !f.endsWith('.d.ts'));
  const next = path.join(root, `.dist-${process.pid}`);
  const vendorDir = path.join(next, 'vendor');
  fs.rmSync(next, { recursive: true, force: true });
  /** The vendored import specifiers the sources use (e.g. typebox/value): the vendor bundle's entry points. */
  const vendored = new Set();
  const rewriteImports = {
    name: 'rewrite-imports',
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, (args) => (args.kind === 'entry-point' ? undefined : { path: args.path.replace(/\.ts$/, '.js'), external: true }));
      b.onResolve({ filter: VENDORED_SPEC }, (args) => {
        vendored.add(args.path);
        const compiledDir = path.dirname(path.join(next, path.relative(src, args.importer)));
        const rel = path
          .relative(compiledDir, path.join(vendorDir, `${args.path}.js`))
          .split(path.sep)
          .join('/');
        return { path: rel.startsWith('.') ? rel : `./${rel}`, external: true };
      });
    },
  };
  const common = {
    absWorkingDir: root,
    outdir: next,
    outbase: src,
    // bundle (of one file each: every import is external) is what lets the plugin rewrite the import paths.
    bundle: true,
    packages: 'external',
    platform: 'node',
    target: 'node22',
    sourcemap: true,
    logLevel: 'error',
    plugins: [rewriteImports],
  };
  const entries = (ext) => files.filter((f) => f.endsWith(ext)).map((f) => path.join(src, f));
  try {
    await Promise.all([
      build({ ...common, entryPoints: entries('.ts'), format: 'esm' }),
      build({ ...common, entryPoints: entries('.cjs'), format: 'cjs', outExtension: { '.js': '.cjs' } }),
    ]);
    await buildVendor(root, [...vendored].sort(), vendorDir, path.join(root, 'dist', 'vendor'));
    swapIn(next, path.join(root, 'dist'));
  } finally {
    fs.rmSync(next, { recursive: true, force: true });
  }
  return files.length;
}

/**
 * dist/vendor/<specifier>.js for each specifier: an ES module with the exports Node gives an `import` of it
 * (for CommonJS: module.exports as default plus the names Node detects), one bundle for all of them, code
 * shared between entries in chunks (one copy of each package). CommonJS code inside gets a real `require`
 * for Node's built-in modules. Reused from the previous build while the installed packages are the same.
 */
async function buildVendor(root, specs, outdir, previous) {
  const lock = path.join(root, 'node_modules', '.package-lock.json');
  const stamp = createHash('sha256')
    .update(JSON.stringify(specs))
    .update(fs.existsSync(lock) ? fs.readFileSync(lock) : String(Date.now()))
    .update(fs.readFileSync(fileURLToPath(import.meta.url)))
    .digest('hex');
  const stampFile = (dir) => path.join(dir, '.stamp');
  try {
    if (fs.readFileSync(stampFile(previous), 'utf8') === stamp) {
      fs.cpSync(previous, outdir, { recursive: true });
      return;
    }
  } catch {
    // no previous bundle: build it
  }
  const contents = new Map(await Promise.all(specs.map(async (spec) => [spec, await reexport(spec)])));
  await build({
    entryPoints: specs.map((spec) => ({ in: `vendor:${spec}`, out: spec })),
    absWorkingDir: root,
    outdir,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node22',
    minifyWhitespace: true,
    logLevel: 'error',
    banner: { js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);" },
    plugins: [
      {
        name: 'vendor-entries',
        setup(b) {
          b.onResolve({ filter: /^vendor:/ }, (args) => ({ path: args.path.slice('vendor:'.length), namespace: 'vendor' }));
          b.onLoad({ filter: /.*/, namespace: 'vendor' }, (args) => ({ contents: contents.get(args.path), resolveDir: root, loader: 'js' }));
        },
      },
    ],
  });
  fs.writeFileSync(stampFile(outdir), stamp);
}

/** The source of a module that re-exports `spec` as Node's `import` sees it (resolved from this checkout). */
async function reexport(spec) {
  const url = import.meta.resolve(spec);
  const ns = await import(url);
  if (isEsm(fileURLToPath(url))) return `export * from '${spec}';${'default' in ns ? `\nexport { default } from '${spec}';` : ''}`;
  const named = Object.keys(ns).filter((k) => k !== 'default' && /^[A-Za-z_$][\w$]*$/.test(k));
  return `import m from '${spec}';\nexport default m;\nexport const { ${named.join(', ')} } = m;`;
}

function isEsm(file) {
  if (file.endsWith('.mjs')) return true;
  if (file.endsWith('.cjs')) return false;
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg)) return JSON.parse(fs.readFileSync(pkg, 'utf8')).type === 'module';
  }
  return false;
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
