// The fault drill (issue 22): a job load with follow-ups against `inkwell serve` in a child process, once without
// a fault (the baseline) and once with a fault once a share of the jobs has completed: `kill -9` of the process
// and a restart on the same data directory / database, or (PostgreSQL) the database cut off for a few seconds. Shared by bench/fault-drill.ts and test/ops/crash-drill.test.ts.
//
// Each job is created with a prompt naming a file unique to the job and turn; its follow-up message (sent right
// after the create answered, so while the job is queued or running) names the turn-2 file. The scripted model
// answers every turn with one write_file of that file and then a final text, so each turn must leave exactly one
// commit touching its own file on the job's branch, and each job exactly one pull request at the fake GitHub.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { type BareRepo, commitsBetween, createBareRepo, gitSync, insteadOfEnv, listBranchFiles } from '../../test/helpers/git.ts';
import { type GitHubServer, startGitHubServer } from '../../test/helpers/github-server.ts';
import { type ModelReply, type ModelServer, type RecordedModelRequest, startModelServer } from '../../test/helpers/model-server.ts';
import { startTcpProxy, type TcpProxy, viaProxy } from '../../test/helpers/tcp-proxy.ts';
import { freePort, inkwellBin } from './service.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin', 'inkwell.js');

/** The checkout whose `inkwell` a drill runs: this one (already built by whoever runs the drill) or another. */
interface Checkout {
  root: string;
  bin: string;
}
const checkoutOf = (dir: string | undefined): Checkout => (dir ? { root: dir, bin: inkwellBin(dir) } : { root: ROOT, bin: BIN });
const GITHUB_URL = 'https://github.com/acme/docs';
const TOKEN = `ghp_${'Dr1llT0kenValue'.repeat(3)}`;

export type DrillBackend = 'sqlite' | 'postgres';

export interface DrillDatabase {
  backend: DrillBackend;
  /**
   * What points the service and the CLI at a fresh database: INKWELL_DATA_DIR (which also holds the embedded
   * SQLite file and the git mirror), and for PostgreSQL DATABASE_URL (its own database or schema via search_path).
   */
  env: Record<string, string>;
}

export interface DrillOptions {
  db: DrillDatabase;
  /** Jobs created (each with one follow-up message: 2 turns per job). */
  jobs: number;
  /** INKWELL_WORKER_CONCURRENCY. */
  concurrency: number;
  /** INKWELL_LEASE_MS: how long a killed worker's running turn stays claimed before another worker may take it. */
  leaseMs: number;
  /** Inject the fault once this share of the jobs has completed (both turns); null: no fault (the baseline). */
  crashAt: number | null;
  /**
   * Which fault: `kill` (kill -9 of the service, then a restart on the same data) or `db-cut` (PostgreSQL only:
   * the service reaches the database through a TCP proxy that is cut for `cutMs`, open connections killed,
   * then restored; the service is not restarted). Default `kill`.
   */
  fault?: 'kill' | 'db-cut';
  /** How long the database stays cut off (`db-cut`). Default 8 s. */
  cutMs?: number;
  /** The whole run fails after this long. */
  timeoutMs: number;
  /** Requests in flight while creating the load. */
  clientConcurrency?: number;
  /** Model latency per reply (ms). */
  modelDelayMs?: number;
  /** Where each service process writes its log (one file per start); default: none kept. */
  logDir?: string;
  /** Run the `inkwell` of this checkout (another commit's, for a before/after comparison); default: this one. */
  checkout?: string;
  log?: (m: string) => void;
}

export interface DrillRun {
  backend: DrillBackend;
  kind: 'baseline' | 'crash' | 'db-cut';
  jobs: number;
  workerConcurrency: number;
  leaseMs: number;
  /** kill -9 of the service. */
  faultsInjected: number;
  /** Requests answered 201 (job created) / 200 (message accepted). */
  acknowledged: { jobs: number; messages: number; total: number };
  /** Acknowledged turns that completed with their file on the job's branch. */
  stored: number;
  /** Acknowledged turns that did not (turn not done, job not completed, or file missing). */
  lost: number;
  /** Pull requests beyond one per job; commits beyond one per turn. */
  duplicated: { pullRequests: number; commits: number };
  /** Longest time with no turn completing, from the first request to the last turn done. */
  longestStallMs: number;
  /** Where that stall was, relative to the first request (ms). */
  longestStallAt: { fromMs: number; toMs: number };
  /**
   * The queue's time: `inkwell serve` launched → last turn completed. Both runs pay one start of the service
   * (3–7 s on a loaded 2-core machine, mostly loading the TypeScript sources); the crash run a second one.
   */
  queueMs: number;
  /** First start of the service: launch → /readyz 200. */
  startupMs: number;
  /** First request → last turn completed. */
  loadToDoneMs: number;
  jobsCompleted: number;
  /** Turns started more than once (a killed run resumed by the next process). */
  turnsRetried: number;
  modelRequests: number;
  /** Client retries of a create/message request (connection refused or 503 while the service was down). */
  clientRetries: number;
  crash?: {
    /** When the kill happened, relative to the first request (ms). */
    atMs: number;
    jobsCompletedAtKill: number;
    /** Turns done at the kill (turn 1 of every job is queued before any follow-up, so most first turns are). */
    turnsDoneAtKill: number;
    turnsRunningAtKill: number;
    /** kill → the restarted service answering /readyz 200. */
    restartReadyMs: number;
    /** kill → the first turn completed by the restarted service. */
    firstTurnAfterKillMs: number | null;
    /** kill → the last of the turns that were running at the kill completed. */
    interruptedResumedMs: number | null;
  };
  dbCut?: {
    /** When the cut began, relative to the first request (ms). */
    atMs: number;
    durationMs: number;
    /** The service process was still running when the database came back (it must not exit). */
    serviceAlive: boolean;
    /** restore → the first turn completed. */
    firstTurnAfterRestoreMs: number | null;
  };
  /** What went wrong, per job (first 20). */
  problems: string[];
}

export const turnFile = (job: number, turn: number) => `drill/job-${job}-turn-${turn}.md`;
const promptOf = (job: number, turn: number) => `drill job ${job} turn ${turn}: add the page ${turnFile(job, turn)}`;

/** The job and turn named by a chat request's last user message, and whether a tool already answered after it. */
function turnOf(req: RecordedModelRequest): { job: number; turn: number; toolAnswered: boolean } | null {
  const msgs = (req.body?.messages ?? []) as { role: string; content: unknown }[];
  let i = msgs.length - 1;
  while (i >= 0 && msgs[i]?.role !== 'user') i--;
  const m = /drill job (\d+) turn (\d+)/.exec(JSON.stringify(msgs[i]?.content ?? ''));
  if (!m) return null;
  return { job: Number(m[1]), turn: Number(m[2]), toolAnswered: msgs.slice(i + 1).some((x) => x.role === 'tool') };
}

function drillModel(delayMs: number): Promise<ModelServer> {
  return startModelServer([], {
    fallback: (req): ModelReply => {
      const t = turnOf(req);
      let reply: ModelReply;
      if (!t) reply = { text: 'Nothing to do\n\nThe prompt named no drill turn.' };
      else if (!t.toolAnswered) {
        reply = { toolCalls: [{ name: 'write_file', args: { path: turnFile(t.job, t.turn), content: `# Drill job ${t.job}, turn ${t.turn}\n` } }] };
      } else reply = { text: `Add ${turnFile(t.job, t.turn)}\n\nDrill turn ${t.turn} of job ${t.job}.` };
      return delayMs > 0 ? { delayMs, reply } : reply;
    },
  });
}

function runCli(at: Checkout, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [at.bin, ...args], { cwd: at.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`inkwell ${args.join(' ')} exited ${code}: ${err}`))));
  });
}

interface Service {
  child: ChildProcess;
  baseUrl: string;
  exited: Promise<void>;
  tail(): string;
}

async function startServe(at: Checkout, env: Record<string, string>, logFile: string | null): Promise<Service> {
  const port = await freePort();
  const child = spawn(process.execPath, [at.bin, 'serve', '--role', 'all'], {
    cwd: at.root,
    env: { ...env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (b: Buffer) => {
    tail = (tail + b.toString()).slice(-20_000);
    if (logFile) fs.appendFileSync(logFile, b);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`inkwell serve exited with ${child.exitCode}:\n${tail}`);
    try {
      if ((await fetch(`${baseUrl}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`inkwell serve not ready after 120 s:\n${tail}`);
    }
    await sleep(50);
  }
  return { child, baseUrl, exited, tail: () => tail };
}

async function stopServe(s: Service): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  s.child.kill('SIGTERM');
  const timer = setTimeout(() => s.child.kill('SIGKILL'), 20_000);
  await s.exited;
  clearTimeout(timer);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface TurnRow {
  job_id: string;
  turn_no: number;
  status: string;
  attempts: number;
  finished_at: number | null;
}

/** Reads job_turns straight from the service's database (the drill's clock for "a turn completed"). */
interface TurnReader {
  turns(): Promise<TurnRow[]>;
  close(): Promise<void>;
}

async function turnReader(db: DrillDatabase): Promise<TurnReader> {
  const sql = 'select job_id, turn_no, status, attempts, finished_at from job_turns';
  const norm = (r: TurnRow): TurnRow => ({
    ...r,
    turn_no: Number(r.turn_no),
    attempts: Number(r.attempts),
    finished_at: r.finished_at === null ? null : Number(r.finished_at),
  });
  if (db.backend === 'sqlite') {
    const file = path.join(db.env.INKWELL_DATA_DIR as string, 'inkwell.db');
    const conn = new Database(file, { fileMustExist: true });
    conn.pragma('busy_timeout = 5000');
    const stmt = conn.prepare(sql);
    return {
      turns: async () => (stmt.all() as TurnRow[]).map(norm),
      close: async () => void conn.close(),
    };
  }
  const client = new pg.Client({ connectionString: db.env.DATABASE_URL });
  await client.connect();
  return {
    turns: async () => (await client.query<TurnRow>(sql)).rows.map(norm),
    close: () => client.end(),
  };
}

interface Created {
  n: number;
  id: string;
  acknowledged: { job: boolean; message: boolean };
}

/**
 * A POST retried like a careful client (same Idempotency-Key) while the service cannot answer: connection
 * refused/reset or 503. Returns the final status and body.
 */
async function post(
  base: () => string,
  key: string,
  p: string,
  body: unknown,
  idem: string,
  deadline: number,
  retried: () => void,
): Promise<{ status: number; body: any }> {
  for (;;) {
    try {
      const r = await fetch(`${base()}${p}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idem },
        body: JSON.stringify(body),
      });
      const text = await r.text();
      if (r.status !== 503 || Date.now() > deadline) return { status: r.status, body: text ? JSON.parse(text) : null };
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    retried();
    await sleep(200);
  }
}

async function getJob(baseUrl: string, key: string, projectId: string, id: string): Promise<any> {
  const r = await fetch(`${baseUrl}/v2/agent/${projectId}/job/${id}`, { headers: { authorization: `Bearer ${key}` } });
  return r.status === 200 ? r.json() : { status: `HTTP ${r.status}` };
}

export async function runDrill(o: DrillOptions): Promise<DrillRun> {
  const log = o.log ?? (() => {});
  const at = checkoutOf(o.checkout);
  const fault = o.crashAt === null ? null : (o.fault ?? 'kill');
  const kind = fault === null ? 'baseline' : fault === 'kill' ? 'crash' : 'db-cut';
  if (fault === 'db-cut' && o.db.backend !== 'postgres') throw new Error('the db-cut fault needs PostgreSQL');
  let proxy: TcpProxy | null = null;
  let repo: BareRepo | null = null;
  let model: ModelServer | null = null;
  let github: GitHubServer | null = null;
  let svc: Service | null = null;
  let reader: TurnReader | null = null;
  let starts = 0;
  const logFile = () => (o.logDir ? path.join(o.logDir, `${o.db.backend}-${kind}-serve-${++starts}.log`) : null);
  if (o.logDir) fs.mkdirSync(o.logDir, { recursive: true });
  try {
    repo = createBareRepo({ files: { 'README.md': '# Acme docs\n', 'docs/intro.md': '# Intro\n\nHello from Acme.\n' } });
    model = await drillModel(o.modelDelayMs ?? 0);
    github = await startGitHubServer({ token: TOKEN });
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ...o.db.env,
      INKWELL_MODEL: 'openai-compatible/drill',
      OPENAI_COMPATIBLE_BASE_URL: model.baseUrl,
      GITHUB_API_URL: github.apiUrl,
      GITHUB_TOKEN: TOKEN,
      INKWELL_LEASE_MS: String(o.leaseMs),
      INKWELL_WORKER_CONCURRENCY: String(o.concurrency),
      INKWELL_POLL_INTERVAL_MS: '100',
      INKWELL_RATE_LIMIT_JOBS: '1000000000/1h',
      LOG_LEVEL: 'info',
      INKWELL_LOG_PRETTY: '0',
      ...insteadOfEnv({ [GITHUB_URL]: repo.dir }, {}),
    };
    if (fault === 'db-cut') {
      // The service (not the CLI or the drill's own reader) reaches PostgreSQL through the proxy.
      const u = new URL(o.db.env.DATABASE_URL as string);
      proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port || 5432) });
    }
    const project = JSON.parse(await runCli(at, ['project', 'create', '--name', 'Drill', '--repository', GITHUB_URL, '--json'], env)) as { id: string };
    const adminKey = (
      JSON.parse(await runCli(at, ['key', 'create', '--project', project.id, '--kind', 'admin', '--name', 'drill', '--json'], env)) as { key: string }
    ).key;
    reader = await turnReader(o.db);
    const serveEnv = proxy ? { ...env, DATABASE_URL: viaProxy(env.DATABASE_URL as string, proxy) } : env;
    const launchedAt = Date.now();
    svc = await startServe(at, serveEnv, logFile());
    const startupMs = Date.now() - launchedAt;
    log(`${o.db.backend} ${kind}: serve pid ${svc.child.pid}; ${o.jobs} jobs with a follow-up each`);

    const t0 = Date.now();
    const deadline = t0 + o.timeoutMs;
    let clientRetries = 0;
    const current = () => (svc as Service).baseUrl;
    const jobPath = `/v2/agent/${project.id}/job`;
    const created: Created[] = [];
    const problems: string[] = [];
    const runId = `${kind}-${t0}`;

    // The load: create → follow-up right away, a few clients at a time.
    let next = 0;
    const client = async () => {
      while (next < o.jobs) {
        const n = next++;
        const c = await post(current, adminKey, jobPath, { prompt: promptOf(n, 1) }, `${runId}-job-${n}`, deadline, () => clientRetries++);
        if (c.status !== 201) {
          problems.push(`job ${n}: create answered ${c.status} ${JSON.stringify(c.body).slice(0, 200)}`);
          continue;
        }
        const entry: Created = { n, id: c.body.id, acknowledged: { job: true, message: false } };
        created.push(entry);
        const m = await post(
          current,
          adminKey,
          `${jobPath}/${entry.id}/message`,
          { prompt: promptOf(n, 2) },
          `${runId}-msg-${n}`,
          deadline,
          () => clientRetries++,
        );
        if (m.status === 200) entry.acknowledged.message = true;
        else problems.push(`job ${n}: message answered ${m.status} ${JSON.stringify(m.body).slice(0, 200)}`);
      }
    };
    const load = Promise.all(Array.from({ length: o.clientConcurrency ?? 4 }, client));
    let loadDone = false;
    void load.finally(() => {
      loadDone = true;
    });

    // Watch the turns; inject the fault once the share of completed jobs is reached.
    let crash: DrillRun['crash'];
    let dbCut: DrillRun['dbCut'];
    let restoredAt = 0;
    let killedAt = 0;
    let thresholdAt = 0;
    let interrupted: Array<{ job_id: string; turn_no: number }> = [];
    let lastProgress = 0;
    for (;;) {
      const rows = await reader.turns();
      const byJob = new Map<string, TurnRow[]>();
      for (const r of rows) byJob.set(r.job_id, [...(byJob.get(r.job_id) ?? []), r]);
      const completed = [...byJob.values()].filter((ts) => ts.length >= 2 && ts.every((x) => x.status === 'done')).length;
      const settled = rows.filter((r) => r.status !== 'queued' && r.status !== 'running').length;
      if (Date.now() - lastProgress > 5000) {
        lastProgress = Date.now();
        log(`${o.db.backend} ${kind}: ${Math.round((Date.now() - t0) / 1000)} s, ${completed}/${o.jobs} jobs completed, ${rows.length} turns acknowledged`);
      }
      const running = rows.filter((r) => r.status === 'running');
      if (o.crashAt !== null && !crash && !dbCut && completed >= Math.ceil(o.jobs * o.crashAt)) thresholdAt ||= Date.now();
      if (fault === 'db-cut' && thresholdAt && !dbCut && proxy) {
        const cutMs = o.cutMs ?? 8000;
        const cutAt = Date.now();
        await proxy.cut();
        log(`${o.db.backend} ${kind}: database cut off at ${cutAt - t0} ms (${completed} jobs completed, ${running.length} turns running)`);
        await sleep(cutMs);
        await proxy.restore();
        restoredAt = Date.now();
        dbCut = { atMs: cutAt - t0, durationMs: restoredAt - cutAt, serviceAlive: svc.child.exitCode === null, firstTurnAfterRestoreMs: null };
        log(`${o.db.backend} ${kind}: database back after ${dbCut.durationMs} ms; service ${dbCut.serviceAlive ? 'alive' : 'EXITED'}`);
        if (!dbCut.serviceAlive) problems.push(`the service exited during the database outage (code ${svc.child.exitCode})`);
        continue;
      }
      // The kill waits (up to 3 s) for a moment with turns running: the drill is about interrupted runs.
      if (fault === 'kill' && thresholdAt && !crash && (running.length > 0 || Date.now() - thresholdAt > 3000)) {
        interrupted = running.map((r) => ({ job_id: r.job_id, turn_no: r.turn_no }));
        killedAt = Date.now();
        const pid = svc.child.pid;
        svc.child.kill('SIGKILL');
        await svc.exited;
        log(`${o.db.backend} ${kind}: kill -9 ${pid} at ${killedAt - t0} ms (${completed} jobs completed, ${interrupted.length} turns running)`);
        svc = await startServe(at, serveEnv, logFile());
        crash = {
          atMs: killedAt - t0,
          jobsCompletedAtKill: completed,
          turnsDoneAtKill: rows.filter((r) => r.status === 'done').length,
          turnsRunningAtKill: interrupted.length,
          restartReadyMs: Date.now() - killedAt,
          firstTurnAfterKillMs: null,
          interruptedResumedMs: null,
        };
        log(`${o.db.backend} ${kind}: restarted as pid ${svc.child.pid}, ready ${crash.restartReadyMs} ms after the kill`);
        continue;
      }
      const acknowledged = created.length + created.filter((c) => c.acknowledged.message).length;
      if (loadDone && rows.length >= acknowledged && settled === rows.length) break;
      if (Date.now() > deadline) {
        problems.push(`timed out after ${o.timeoutMs} ms: ${completed}/${o.jobs} jobs completed, ${settled}/${rows.length} turns settled`);
        break;
      }
      await sleep(100);
    }
    await load;

    // What was stored: the API's view of each job, the branches at the origin, the pull requests at GitHub.
    const rows = await reader.turns();
    const finished = rows
      .filter((r) => r.status === 'done' && r.finished_at !== null)
      .map((r) => r.finished_at as number)
      .sort((a, b) => a - b);
    const times = [t0, ...finished];
    let longestStallMs = 0;
    let longestStallAt = { fromMs: 0, toMs: 0 };
    for (let i = 1; i < times.length; i++) {
      const gap = (times[i] as number) - (times[i - 1] as number);
      if (gap > longestStallMs) {
        longestStallMs = gap;
        longestStallAt = { fromMs: (times[i - 1] as number) - t0, toMs: (times[i] as number) - t0 };
      }
    }
    const lastDone = finished.at(-1) ?? Date.now();
    const queueMs = lastDone - launchedAt;
    if (dbCut) {
      const after = finished.filter((f) => f > restoredAt);
      dbCut.firstTurnAfterRestoreMs = after.length ? (after[0] as number) - restoredAt : null;
    }
    if (crash) {
      const after = finished.filter((f) => f > killedAt);
      crash.firstTurnAfterKillMs = after.length ? (after[0] as number) - killedAt : null;
      const resumed = interrupted.map((x) => rows.find((r) => r.job_id === x.job_id && r.turn_no === x.turn_no)?.finished_at ?? null);
      crash.interruptedResumedMs = resumed.length && resumed.every((f) => f !== null) ? Math.max(...(resumed as number[])) - killedAt : null;
    }

    let stored = 0;
    let jobsCompleted = 0;
    let dupPulls = 0;
    let dupCommits = 0;
    for (const c of created) {
      const job = await getJob(svc.baseUrl, adminKey, project.id, c.id);
      const acknowledgedTurns = [1, ...(c.acknowledged.message ? [2] : [])];
      const say = (m: string) => problems.push(`job ${c.n} (${c.id}): ${m}`);
      if (job.status === 'completed' && job.prLink) jobsCompleted++;
      else say(`status ${job.status}, prLink ${job.prLink}${job.error ? `, error ${job.error.code}: ${job.error.message}` : ''}`);
      const branch = job.branch as string | null;
      const pulls = branch ? github.pulls.filter((p) => p.head === branch).length : 0;
      if (pulls !== 1) say(`${pulls} pull requests for ${branch}`);
      dupPulls += Math.max(0, pulls - 1);
      const files = branch ? safe(() => listBranchFiles(repo as BareRepo, branch), []) : [];
      const commits = branch ? safe(() => commitsBetween(repo as BareRepo, 'main', branch), []) : [];
      if (commits.length !== acknowledgedTurns.length) say(`${commits.length} commits between main and ${branch}`);
      for (const turn of acknowledgedTurns) {
        const file = turnFile(c.n, turn);
        const row = rows.find((r) => r.job_id === c.id && r.turn_no === turn);
        const touching = branch
          ? safe(() => gitSync(['log', '--format=%H', `refs/heads/main..refs/heads/${branch}`, '--', file], (repo as BareRepo).dir), '')
              .split('\n')
              .filter(Boolean).length
          : 0;
        if (touching > 1) say(`${touching} commits touch ${file}`);
        dupCommits += Math.max(0, touching - 1);
        if (row?.status === 'done' && files.includes(file) && touching >= 1) stored++;
        else say(`turn ${turn}: ${row?.status ?? 'no turn row'}, file ${files.includes(file) ? 'present' : 'missing'}`);
      }
    }
    const extraHeads = github.pulls.length - new Set(github.pulls.map((p) => p.head)).size;
    dupPulls = Math.max(dupPulls, extraHeads);
    const jobsAck = created.length;
    const messagesAck = created.filter((c) => c.acknowledged.message).length;
    const run: DrillRun = {
      backend: o.db.backend,
      kind,
      jobs: o.jobs,
      workerConcurrency: o.concurrency,
      leaseMs: o.leaseMs,
      faultsInjected: crash || dbCut ? 1 : 0,
      acknowledged: { jobs: jobsAck, messages: messagesAck, total: jobsAck + messagesAck },
      stored,
      lost: jobsAck + messagesAck - stored,
      duplicated: { pullRequests: dupPulls, commits: dupCommits },
      longestStallMs,
      longestStallAt,
      queueMs,
      startupMs,
      loadToDoneMs: lastDone - t0,
      jobsCompleted,
      turnsRetried: rows.filter((r) => r.attempts > 1).length,
      modelRequests: model.requests.length,
      clientRetries,
      ...(crash ? { crash } : {}),
      ...(dbCut ? { dbCut } : {}),
      problems: problems.slice(0, 20),
    };
    log(
      `${o.db.backend} ${kind}: ${run.jobsCompleted}/${o.jobs} jobs completed, queue ${queueMs} ms from the launch of serve, longest stall ${longestStallMs} ms`,
    );
    return run;
  } catch (err) {
    if (svc) (err as Error).message += `\n--- service log tail ---\n${svc.tail().slice(-4000)}`;
    throw err;
  } finally {
    if (svc) await stopServe(svc);
    await proxy?.close();
    await reader?.close();
    await model?.close();
    await github?.close();
    repo?.cleanup();
  }
}

function safe<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The per-run table: faults injected, acknowledged, stored, lost, duplicated, longest stall, queue time. */
export function drillTable(runs: DrillRun[]): string {
  const header = ['run', 'faults', 'acknowledged', 'stored', 'lost', 'duplicated', 'longest stall', 'queue time'];
  const rows = runs.map((r) => [
    `${r.backend} ${r.kind === 'crash' ? 'kill -9 + restart' : r.kind === 'db-cut' ? `database cut ${secs(r.dbCut?.durationMs ?? 0)}` : 'baseline'}`,
    String(r.faultsInjected),
    `${r.acknowledged.total} (${r.acknowledged.jobs} jobs + ${r.acknowledged.messages} msgs)`,
    `${r.stored} turns`,
    String(r.lost),
    `${r.duplicated.pullRequests} PRs, ${r.duplicated.commits} commits`,
    secs(r.longestStallMs),
    secs(r.queueMs),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-+-'), ...rows.map(line)].join('\n');
}
