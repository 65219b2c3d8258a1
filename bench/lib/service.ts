// Runs the real Inkwell service (`node bin/inkwell.js serve`) as a child process for the benchmarks, so its
// memory (VmHWM) is measured apart from the load generator's.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { BENCH_DIR } from './dataset.ts';
import { peakRssMb } from './results.ts';

const execFileP = promisify(execFile);
export const REPO_DIR = path.resolve(BENCH_DIR, '..');

export type Backend = 'sqlite' | 'postgres';

export interface ServiceEnv {
  backend: Backend;
  dataDir: string;
  databaseUrl?: string;
  extraEnv?: Record<string, string>;
  /** The checkout whose `inkwell` runs (default: this one); another commit's, to compare in the same run. */
  repoDir?: string;
  /** Node options for this service only (before BENCH_SERVICE_NODE_ARGS'). */
  nodeArgs?: string[];
}

const binOf = (s: ServiceEnv) => inkwellBin(s.repoDir);

/** The `inkwell` command of a checkout (default: this one), its dist/ built first. */
export function inkwellBin(repoDir = REPO_DIR): string {
  ensureBuilt(repoDir);
  return path.join(repoDir, 'bin', 'inkwell.js');
}

const built = new Set<string>();
/** Rebuilds a checkout's dist/ once per run, so `inkwell` runs its current sources (older checkouts have no build). */
function ensureBuilt(dir: string): void {
  if (built.has(dir)) return;
  built.add(dir);
  const build = path.join(dir, 'bin', 'build.js');
  if (fs.existsSync(build)) execFileSync(process.execPath, [build, '--quiet'], { stdio: 'inherit' });
}

/** Limits raised so the benchmark measures the service, not its rate limiter. */
export const BENCH_LIMITS_ENV: Record<string, string> = {
  INKWELL_RATE_LIMIT_INGEST: '1000000000/1m',
  INKWELL_RATE_LIMIT_ANALYTICS_READ: '1000000000/1h',
  INKWELL_RATE_LIMIT_JOBS: '1000000000/1h',
};

export function serviceEnv(s: ServiceEnv, port?: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...BENCH_LIMITS_ENV, ...(s.extraEnv ?? {}) };
  env.INKWELL_DATA_DIR = s.dataDir;
  env.LOG_LEVEL = env.BENCH_LOG_LEVEL ?? 'warn';
  env.INKWELL_LOG_PRETTY = '0';
  if (s.backend === 'postgres') env.DATABASE_URL = s.databaseUrl;
  else delete env.DATABASE_URL;
  if (port !== undefined) {
    env.PORT = String(port);
    env.HOST = '127.0.0.1';
  }
  return env;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Runs an `inkwell` CLI command against the service's database and returns its stdout. */
export async function cli(s: ServiceEnv, args: string[]): Promise<string> {
  const { stdout } = await execFileP(process.execPath, [binOf(s), ...args], { env: serviceEnv(s), cwd: s.repoDir ?? REPO_DIR, maxBuffer: 64 << 20 });
  return stdout;
}

export interface BenchProject {
  projectId: string;
  adminKey: string;
  ingestKey: string;
}

export async function createProject(s: ServiceEnv): Promise<BenchProject> {
  const p = JSON.parse(await cli(s, ['project', 'create', '--name', 'Bench', '--repository', 'https://github.com/acme/docs', '--json'])) as { id: string };
  const admin = JSON.parse(await cli(s, ['key', 'create', '--project', p.id, '--kind', 'admin', '--name', 'bench', '--json'])) as { key: string };
  // The bench replays history (its own timestamps and visitor ids): that needs an ingest-secret key.
  const ingest = JSON.parse(await cli(s, ['key', 'create', '--project', p.id, '--kind', 'ingest-secret', '--name', 'bench', '--json'])) as { key: string };
  return { projectId: p.id, adminKey: admin.key, ingestKey: ingest.key };
}

export interface RunningService {
  baseUrl: string;
  pid: number;
  child: ChildProcess;
  /** Peak RSS so far (VmHWM), MB. */
  peakRssMb(): number | null;
  /** SIGTERM, wait for exit; returns the peak RSS read just before. */
  stop(): Promise<number | null>;
}

export async function startService(s: ServiceEnv, role: 'all' | 'api' = 'api'): Promise<RunningService> {
  const port = await freePort();
  // BENCH_SERVICE_NODE_ARGS: Node options for the service only, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (every
  // thread writes its profile when the service exits).
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...(s.nodeArgs ?? []), ...nodeArgs, binOf(s), 'serve', '--role', role], {
    env: serviceEnv(s, port),
    cwd: s.repoDir ?? REPO_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // BENCH_SERVICE_LOG=<file>: the service's whole log is appended there too (with BENCH_LOG_LEVEL=info, for profiling).
  const logFile = process.env.BENCH_SERVICE_LOG;
  const warnings = serviceWarnings(child.pid ?? 0);
  const keep = (b: Buffer) => {
    output = (output + b.toString()).slice(-20_000);
    if (logFile) fs.appendFileSync(logFile, b);
    warnings(b);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const baseUrl = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`inkwell serve exited with ${child.exitCode}:\n${output}`);
    try {
      const r = await fetch(`${baseUrl}/readyz`);
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`inkwell serve not ready after 120 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const pid = child.pid as number;
  return {
    baseUrl,
    pid,
    child,
    peakRssMb: () => peakRssMb(pid),
    async stop() {
      const peak = peakRssMb(pid);
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await exited;
      clearTimeout(timer);
      return peak;
    },
  };
}

/**
 * The service's warnings and errors (pino level 40 and up: a 5xx's "request failed" and "unhandled error" with
 * its stack), echoed to the benchmark's stderr as they come, one line each. Why: a benchmark that got a 5xx threw
 * with the response's body only (the request id), and the service's log, kept in memory, went with it: one 500
 * seen during a 10M-event ingest (session 14) could not be explained afterwards.
 */
export function serviceWarnings(pid: number, write: (line: string) => void = (l) => process.stderr.write(l)): (b: Buffer) => void {
  let partial = '';
  return (b) => {
    const lines = (partial + b.toString()).split('\n');
    partial = (lines.pop() ?? '').slice(-100_000);
    for (const line of lines) {
      const level = /^\{"level":(\d+)/.exec(line)?.[1];
      if (level !== undefined && Number(level) >= 40) write(`[inkwell ${pid}] ${line.slice(0, 4000)}\n`);
    }
  };
}

/** A fresh PostgreSQL database for Inkwell (dropped and recreated). */
export async function freshPgDatabase(unprefixed: string, adminUrl: string): Promise<string> {
  // BENCH_PG_DB_PREFIX: so that benchmarks run at once by different people on one server use different databases.
  const name = `${process.env.BENCH_PG_DB_PREFIX ?? ''}${unprefixed}`;
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${name}"`);
  } finally {
    await c.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

export function tempDir(prefix: string): string {
  const base = path.join(BENCH_DIR, '.data', 'tmp');
  fs.mkdirSync(base, { recursive: true });
  return fs.mkdtempSync(path.join(base, `${prefix}-`));
}

/** Size of a directory tree in MB (the embedded database's footprint). */
export function dirSizeMb(dir: string): number {
  let total = 0;
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else total += fs.statSync(p).size;
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return Math.round(total / 2 ** 20);
}
