// A real HTTP server on a random port over a real database, with a seeded project and keys.
import type { AddressInfo } from 'node:net';
import type { DestinationStream } from 'pino';
import { type Config, testConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { type App, buildApp } from '../../src/http/app.ts';
import type { AppContext } from '../../src/http/context.ts';
import { createLogger } from '../../src/lib/logger.ts';
import type { Project } from '../../src/projects/service.ts';
import { contractViolation } from './contract.ts';
import { type DialectName, openTestDb, type TestDb } from './db.ts';

export interface Seeded {
  project: Project;
  adminKey: string;
  ingestKey: string;
  /** An ingest-secret key (ink_ing_…): may set `timestamp` and `visitorId` on ingest. */
  ingestSecretKey: string;
  adminKeyId: string;
}

export interface TestApp {
  app: App;
  ctx: AppContext;
  testDb: TestDb;
  baseUrl: string;
  /** Creates a project with an admin, a public ingest and an ingest-secret key. */
  seed(input?: { name?: string; repository?: string; ref?: string; model?: string }): Promise<Seeded>;
  /** Real HTTP request; JSON bodies are encoded unless `raw` is given. */
  request(method: string, path: string, opts?: RequestOpts): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface RequestOpts {
  key?: string;
  body?: unknown;
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface TestAppOptions {
  /** Extra (test-only) routes, registered in their own scope before the server listens. */
  routes?: (app: App, ctx: AppContext) => Promise<void>;
  /** Where logs go (e.g. a stream the test reads); combine with a `logLevel` override. */
  logDestination?: DestinationStream;
  /** The clock the context uses (rate-limit windows, key last-used times). */
  now?: () => number;
  /** Where the built dashboard is read from (default: dist/dashboard of this checkout). */
  dashboardDir?: string;
}

export async function startTestApp(
  dialect: DialectName,
  overrides: Partial<Config> = {},
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<TestApp> {
  const testDb = await openTestDb(dialect);
  const config = testConfig({ dataDir: testDb.env.INKWELL_DATA_DIR as string, ...overrides }, env);
  const ctx = createContext(config, testDb.db, createLogger(config, options.logDestination), options.now);
  const app = await buildApp(ctx, undefined, options.dashboardDir === undefined ? {} : { dashboardDir: options.dashboardDir });
  const extra = options.routes;
  if (extra) await app.register(async (scope) => extra(scope, ctx));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    app,
    ctx,
    testDb,
    baseUrl,
    async seed(input = {}) {
      const project = await ctx.projects.createProject({
        name: input.name ?? 'Docs',
        repository: input.repository ?? 'https://github.com/acme/docs',
        ...(input.ref ? { ref: input.ref } : {}),
        ...(input.model ? { model: input.model } : {}),
      });
      const admin = await ctx.projects.createKey({ projectId: project.id, kind: 'admin' });
      const ingest = await ctx.projects.createKey({ projectId: project.id, kind: 'ingest' });
      const ingestSecret = await ctx.projects.createKey({ projectId: project.id, kind: 'ingest-secret' });
      return { project, adminKey: admin.key, ingestKey: ingest.key, ingestSecretKey: ingestSecret.key, adminKeyId: admin.id };
    },
    request: (method, path, opts = {}) => httpRequest(baseUrl, method, path, opts),
    async close() {
      await app.close();
      await testDb.cleanup();
    },
  };
}

export async function httpRequest(baseUrl: string, method: string, path: string, opts: RequestOpts = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | Buffer | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(baseUrl + path, { method, headers, body: body as BodyInit | undefined });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: leave as text
  }
  // Every response a test sees keeps the contract of /openapi.json (see contract.ts).
  const violation = await contractViolation(baseUrl, method, path, {
    status: res.status,
    contentType: res.headers.get('content-type'),
    body: parsed,
    text,
    headers: res.headers,
  });
  if (violation) throw new Error(`API contract: ${violation}`);
  return { status: res.status, headers: res.headers, body: parsed, text };
}
