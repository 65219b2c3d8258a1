// The web dashboard's files (built by bin/build.js into dist/dashboard): every dashboard page answers with
// index.html (the browser picks the page), the hashed assets are cached for a year. Nothing here is in the
// OpenAPI document. Without a build (the sources run directly), a page says how to make one: 503, not a 500.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ASSETS_PREFIX, DASHBOARD_PATHS } from '../../dashboard/paths.ts';
import { AppError } from '../../errors.ts';
import type { App } from '../app.ts';

/** The checkout's (or installation's) root: the nearest directory above this module with a package.json. */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return from;
  }
}

/** Where bin/build.js puts the dashboard (the same place from src/http/routes and from dist/). */
export const DEFAULT_DASHBOARD_DIR = path.join(packageRoot(import.meta.dirname), 'dist', 'dashboard');

/**
 * The page's policy: its own scripts, styles and API only (no inline script, no other origin); it may not be
 * framed. The one-time link's token is in the URL fragment, which no Referer carries; no-referrer all the same.
 */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

interface Asset {
  body: Buffer;
  gzip: Buffer | null;
  type: string;
}

interface Built {
  index: Buffer;
  assets: Map<string, Asset>;
}

/** The built dashboard in memory (a few hundred KB), or null when there is no build. */
function load(dir: string): Built | null {
  let index: Buffer;
  let names: string[];
  try {
    index = fs.readFileSync(path.join(dir, 'index.html'));
    names = fs.readdirSync(path.join(dir, 'assets'));
  } catch {
    return null;
  }
  const assets = new Map<string, Asset>();
  for (const name of names) {
    const type = TYPES[path.extname(name)];
    if (!type) continue;
    const file = path.join(dir, 'assets', name);
    assets.set(name, { body: fs.readFileSync(file), gzip: names.includes(`${name}.gz`) ? fs.readFileSync(`${file}.gz`) : null, type });
  }
  return { index, assets };
}

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Inkwell: dashboard not built</title></head>
<body><h1>The dashboard is not built</h1>
<p>Build it with <code>npm run build</code> in Inkwell's directory (<code>npm install</code> and <code>npm start</code> do it too), then reload this page.</p>
<p>The API works without it: <a href="/docs">/docs</a>.</p></body></html>
`;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers errors with its own page for people (not the API's JSON error shape). */
    ownErrorPage?: boolean;
  }
}

export async function dashboardRoutes(app: App, dir: string = DEFAULT_DASHBOARD_DIR): Promise<void> {
  let built = load(dir);
  // A build made after the server started is picked up on the next request.
  const current = () => {
    built ??= load(dir);
    return built;
  };

  const page = async (_request: FastifyRequest, reply: FastifyReply) => {
    const b = current();
    reply.headers(PAGE_HEADERS).header('cache-control', 'no-cache').type('text/html; charset=utf-8');
    if (!b) return reply.status(503).header('retry-after', '60').send(NOT_BUILT);
    return reply.send(b.index);
  };
  for (const url of DASHBOARD_PATHS) app.get(url, { schema: { hide: true }, config: { ownErrorPage: true } }, page);

  app.get<{ Params: { file: string } }>(`${ASSETS_PREFIX}:file`, { schema: { hide: true } }, async (request, reply) => {
    const asset = current()?.assets.get(request.params.file);
    if (!asset) throw new AppError('not_found', 'No dashboard asset by this name');
    reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .header('vary', 'accept-encoding')
      .type(asset.type);
    if (asset.gzip && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.header('content-encoding', 'gzip').send(asset.gzip);
    return reply.send(asset.body);
  });
}
