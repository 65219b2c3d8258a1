// Real worker processes (`node bin/inkwell.js serve --role worker`) against one database: a worker
// killed with SIGKILL mid-run is replaced and the job completes with one pull request; two workers
// sharing PostgreSQL run each of several jobs exactly once (counted at the model server and at git pushes).
// Nothing here depends on how fast the machine is: every wait is for an event (a log line, a connection, a
// row), and the timeouts are safety nets for a starved machine.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { Seeded } from '../helpers/app.ts';
import { type DialectName, describeEachDialect, pgUrl } from '../helpers/db.ts';
import { type BareRepo, commitsBetween, createBareRepo, insteadOfEnv, readBranchFile, tempDir } from '../helpers/git.ts';
import { type GitHubServer, startGitHubServer } from '../helpers/github-server.ts';
import { type JobsTestApp, startJobsApp, waitFor, waitForStatus } from '../helpers/jobs.ts';
import { type ModelReply, type ModelServer, type RecordedModelRequest, startModelServer } from '../helpers/model-server.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/inkwell.js');
const GITHUB_URL = 'https://github.com/acme/docs';
const TOKEN = `ghp_${'Pr0cessT0ken'.repeat(3)}`;
/** A test's safety net: worker processes start, clone and push on a machine that may be starved. */
const PROCESS_TEST_TIMEOUT_MS = 300_000;
/** More jobs than the two workers' four slots, so they also race for queued jobs. */
const SHARED_JOBS = 8;

interface WorkerProcess {
  proc: ChildProcess;
  log(): string;
  exited: Promise<number | null>;
}

/** The user prompt of a chat request and whether a tool already answered in this turn. */
function turnOf(req: RecordedModelRequest): { prompt: string; toolAnswered: boolean } {
  const msgs = (req.body?.messages ?? []) as { role: string; content: unknown }[];
  let i = msgs.length - 1;
  while (i >= 0 && msgs[i]!.role !== 'user') i--;
  const c = msgs[i]?.content;
  const prompt = typeof c === 'string' ? c : JSON.stringify(c);
  return { prompt, toolAnswered: msgs.slice(i + 1).some((m) => m.role === 'tool') };
}

describeEachDialect('worker processes', (dialect: DialectName) => {
  let t: JobsTestApp | null = null;
  let repo: BareRepo;
  let model: ModelServer;
  let github: GitHubServer;
  let s: Seeded;
  const workers: WorkerProcess[] = [];
  const pushLog = () => path.join(repo.dir, 'pushes.log');

  async function setup(reply: (req: RecordedModelRequest, index: number) => ModelReply | Promise<ModelReply>) {
    repo = createBareRepo({ files: { 'README.md': '# Acme docs\n', 'docs/intro.mdx': '# Intro\n\nHello from Acme.\n' } });
    // Count pushes at the remote: one line per updated ref.
    fs.writeFileSync(path.join(repo.dir, 'hooks', 'post-receive'), `#!/bin/sh\nwhile read old new ref; do echo "$ref $new" >> "${pushLog()}"; done\n`, {
      mode: 0o755,
    });
    model = await startModelServer([], { fallback: reply });
    github = await startGitHubServer({ token: TOKEN });
    t = await startJobsApp(dialect, {}, { OPENAI_COMPATIBLE_BASE_URL: model.baseUrl });
    s = await t.seed({ repository: GITHUB_URL, ref: 'main' });
  }

  function startWorkerProcess(extra: Record<string, string> = {}): WorkerProcess {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ...t!.testDb.env,
      // Each worker its own data directory (as on another machine) — except that the embedded SQLite
      // database lives in the data directory, so SQLite workers share it.
      ...(t!.testDb.env.DATABASE_URL ? { INKWELL_DATA_DIR: tempDir('inkwell-worker-') } : {}),
      INKWELL_MODEL: 'openai-compatible/test-model',
      OPENAI_COMPATIBLE_BASE_URL: model.baseUrl,
      GITHUB_API_URL: github.apiUrl,
      GITHUB_TOKEN: TOKEN,
      INKWELL_LEASE_MS: '3000',
      INKWELL_POLL_INTERVAL_MS: '50',
      INKWELL_MODEL_MAX_RETRIES: '0',
      LOG_LEVEL: 'info',
      INKWELL_LOG_PRETTY: '0',
      ...insteadOfEnv({ [GITHUB_URL]: repo.dir }, {}),
      ...extra,
    };
    const proc = spawn(process.execPath, [BIN, 'serve', '--role', 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    proc.stderr!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
    const w = { proc, log: () => out, exited };
    workers.push(w);
    return w;
  }

  afterEach(async () => {
    for (const w of workers.splice(0)) {
      if (w.proc.exitCode === null && w.proc.signalCode === null) {
        w.proc.kill('SIGKILL');
        await w.exited;
      }
    }
    await t?.close();
    t = null;
    await model?.close();
    await github?.close();
    repo?.cleanup();
  });

  it(
    'kill -9 of a worker mid-run: a second worker waits for the lease, resumes the turn, one pull request',
    async () => {
      let hung = false;
      await setup((req) => {
        const { toolAnswered } = turnOf(req);
        if (!toolAnswered)
          return { toolCalls: [{ name: 'edit_file', args: { path: 'docs/intro.mdx', old_string: 'Hello from Acme.', new_string: 'Welcome to Acme.' } }] };
        if (!hung) {
          hung = true; // the first worker's second request never gets an answer
          return { hang: true };
        }
        return { text: 'Reword the intro greeting' };
      });
      // The lease is renewed every second; 10 s lets a renewal be late by 9 s on a starved machine before the
      // lease (rightly) lapses.
      const lease = { INKWELL_LEASE_MS: '10000' };
      const w1 = startWorkerProcess(lease);
      const c = await t!.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.adminKey, body: { prompt: 'Reword the intro' } });
      await waitFor(async () => model.openConnections() === 1);
      expect(model.requests).toHaveLength(2);
      const jobRow = () => t!.ctx.db.kysely.selectFrom('jobs').selectAll().where('id', '=', c.body.id).executeTakeFirstOrThrow();
      const held = await jobRow();

      // A second worker while the first is alive and renewing: it must not touch the job, also once the lease
      // first seen would have run out.
      const w2 = startWorkerProcess(lease);
      await waitFor(async () => w2.log().includes('inkwell started'), 90_000);
      const renewed = await waitFor(async () => {
        const row = await jobRow();
        return Date.now() > Number(held.lease_expires_at) && Number(row.lease_expires_at) > Number(held.lease_expires_at) && row;
      });
      expect(renewed.lease_owner).toBe(held.lease_owner);
      expect(model.requests).toHaveLength(2);

      w1.proc.kill('SIGKILL');
      expect(await w1.exited).toBeNull();
      const job = await waitForStatus(t!, s.adminKey, s.project.id, c.body.id, ['completed', 'failed']);
      expect(job.status).toBe('completed');
      expect(github.pulls).toHaveLength(1);
      expect(job.prLink).toBe(github.htmlUrl(github.pulls[0]!));
      expect(readBranchFile(repo, job.branch, 'docs/intro.mdx')).toBe('# Intro\n\nWelcome to Acme.\n');
      expect(commitsBetween(repo, 'main', job.branch)).toHaveLength(1);
      expect(model.requests).toHaveLength(4); // 2 by the killed worker, 2 by the one that resumed
      const turns = await t!.ctx.db.kysely.selectFrom('job_turns').selectAll().where('job_id', '=', c.body.id).execute();
      expect(turns.map((x) => [x.status, Number(x.attempts)])).toEqual([['done', 2]]);
      const events = (await t!.request('GET', `/v2/agent/${s.project.id}/job/${c.body.id}/events`, { key: s.adminKey })).body.events;
      expect(events.filter((e: { type: string; data: any }) => e.type === 'status' && e.data.phase === 'running').map((e: any) => e.data.attempt)).toEqual([
        1, 2,
      ]);

      // SIGTERM: graceful stop, exit 0.
      w2.proc.kill('SIGTERM');
      expect(await w2.exited).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'SIGTERM of a worker mid-run hands the lease back at once (attempt not counted); another worker resumes',
    async () => {
      let hung = false;
      await setup((req) => {
        if (!turnOf(req).toolAnswered) {
          if (!hung) {
            hung = true;
            return { hang: true };
          }
          return { toolCalls: [{ name: 'write_file', args: { path: 'docs/new.mdx', content: '# New\n' } }] };
        }
        return { text: 'Add a new page' };
      });
      const w1 = startWorkerProcess({ INKWELL_LEASE_MS: '60000' }); // only a hand-back lets another worker in soon
      const c = await t!.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.adminKey, body: { prompt: 'Add a page' } });
      await waitFor(async () => model.openConnections() === 1);
      w1.proc.kill('SIGTERM');
      // A clean stop (exit 0) that handed the lease back: with a 60 s lease only the hand-back leaves no owner.
      expect(await w1.exited).toBe(0);
      expect(w1.log()).toContain('run handed back');
      const row = await t!.ctx.db.kysely.selectFrom('jobs').selectAll().where('id', '=', c.body.id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ status: 'active', lease_owner: null });
      startWorkerProcess();
      const job = await waitForStatus(t!, s.adminKey, s.project.id, c.body.id, ['completed', 'failed']);
      expect(job.status).toBe('completed');
      expect(github.pulls).toHaveLength(1);
      const turns = await t!.ctx.db.kysely.selectFrom('job_turns').selectAll().where('job_id', '=', c.body.id).execute();
      expect(turns.map((x) => [x.status, Number(x.attempts)])).toEqual([['done', 1]]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it.skipIf(dialect !== 'postgres' || !pgUrl())(
    `two worker processes on one PostgreSQL, ${SHARED_JOBS} jobs: both take part, each job runs exactly once (model requests and pushes counted)`,
    async () => {
      // Each worker runs at most two jobs at a time, so once three jobs are in flight both workers hold one:
      // the first requests of the first three jobs wait for that before they are answered.
      const inFlight = new Set<string>();
      let bothBusy!: () => void;
      const bothWorkersBusy = new Promise<void>((r) => {
        bothBusy = r;
      });
      await setup(async (req) => {
        const { prompt, toolAnswered } = turnOf(req);
        const n = /page (\d+)/.exec(prompt)?.[1] ?? 'x';
        if (toolAnswered) return { text: `Add page ${n}` };
        if (inFlight.size < 3) {
          inFlight.add(prompt);
          if (inFlight.size === 3) bothBusy();
          await bothWorkersBusy;
        }
        return { toolCalls: [{ name: 'write_file', args: { path: `docs/page-${n}.mdx`, content: `# Page ${n}\n` } }] };
      });
      const pair = [startWorkerProcess({ INKWELL_WORKER_CONCURRENCY: '2' }), startWorkerProcess({ INKWELL_WORKER_CONCURRENCY: '2' })];
      for (const w of pair) await waitFor(async () => w.log().includes('inkwell started'), 90_000);
      const ids: string[] = [];
      for (let i = 0; i < SHARED_JOBS; i++) {
        const r = await t!.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.adminKey, body: { prompt: `Create page ${i}` } });
        expect(r.status).toBe(201);
        ids.push(r.body.id);
      }
      await bothWorkersBusy;
      await waitFor(
        async () => {
          const r = await t!.request('GET', `/v2/agent/${s.project.id}/jobs?status=active&limit=100`, { key: s.adminKey });
          return r.body.jobs.length === 0;
        },
        PROCESS_TEST_TIMEOUT_MS,
        200,
      );
      const list = await t!.request('GET', `/v2/agent/${s.project.id}/jobs?limit=100`, { key: s.adminKey });
      expect(list.body.jobs.map((j: { id: string }) => j.id).sort()).toEqual([...ids].sort());
      expect(list.body.jobs.map((j: { status: string }) => j.status)).toEqual(Array(SHARED_JOBS).fill('completed'));
      // Model: exactly two requests per job (tool call, then final text).
      const perPrompt = new Map<string, number>();
      for (const req of model.requests) perPrompt.set(turnOf(req).prompt, (perPrompt.get(turnOf(req).prompt) ?? 0) + 1);
      expect(perPrompt.size).toBe(SHARED_JOBS);
      expect([...perPrompt.values()]).toEqual(Array(SHARED_JOBS).fill(2));
      // Git: exactly one push per job branch; one pull request per job.
      const pushes = fs.readFileSync(pushLog(), 'utf8').trim().split('\n');
      expect(pushes).toHaveLength(SHARED_JOBS);
      expect(new Set(pushes.map((l) => l.split(' ')[0])).size).toBe(SHARED_JOBS);
      expect(github.pulls).toHaveLength(SHARED_JOBS);
      for (const j of list.body.jobs) expect(j.prLink).toBe(github.htmlUrl(github.pulls.find((p) => p.head === j.branch)!));
      // Both workers took part.
      for (const w of pair) expect(w.log()).toContain('run completed');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
