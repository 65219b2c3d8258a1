// Jobs benchmark: the overhead of a job — create → `completed` with a pull request — with a zero-latency scripted
// model (one edit_file call, then a summary) on a generated 5,000-file repository, warm mirror, median over 20
// sequential jobs; baselines in the same run, each run interleaved with a job: the bare git commands doing the
// same work (fetch the mirror, worktree add, edit, commit, push, worktree remove), and for reference the same with
// one reused worktree. Then 50 concurrent jobs: all complete, none duplicated, throughput.
//
//   npm run bench:jobs -- [--files 5000] [--jobs 20] [--concurrent 50] [--backends sqlite,postgres]
//                         [--compare <checkout of an earlier commit>]
//
// --compare also runs each backend's service from another checkout (its own database and data directory): its
// sequential jobs take turns with this checkout's and the git baselines in the same rounds, then each runs the
// concurrent jobs in turn.
// Reuses the test helpers: the scripted OpenAI-compatible model server, the fake GitHub pulls API and bare repos
// reached as https://github.com/acme/docs through url.<local>.insteadOf (the mechanism an operator would use).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createBareRepo, insteadOfEnv } from '../test/helpers/git.ts';
import { type GitHubServer, startGitHubServer } from '../test/helpers/github-server.ts';
import { type ModelReply, type RecordedModelRequest, startModelServer } from '../test/helpers/model-server.ts';
import { BENCH_PG_ADMIN_URL } from './baselines/pg-raw.ts';
import { intArg, parseArgs } from './lib/args.ts';
import { compareFromArgs, compareNote, type Side, sidesOf, systemName } from './lib/compare.ts';
import { environment, errorText, writeResults } from './lib/results.ts';
import { type Backend, type BenchProject, createProject, freshPgDatabase, type RunningService, type ServiceEnv, startService, tempDir } from './lib/service.ts';
import { median, round, summarise } from './lib/stats.ts';

const args = parseArgs(process.argv.slice(2));
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const FILES = intArg(args, 'files') ?? 5000;
const JOBS = intArg(args, 'jobs') ?? 20;
const CONCURRENT = intArg(args, 'concurrent') ?? 50;
const backends = (args.get('backends') ?? 'sqlite,postgres').split(',') as Backend[];
const GITHUB_URL = 'https://github.com/acme/docs';
const TOKEN = `ghp_${'BenchT0kenValue'.repeat(3)}`;
const MARK = 'bench-edit ';

const pageFile = (i: number) => `docs/section-${String(i % 50).padStart(2, '0')}/page-${String(i).padStart(5, '0')}.md`;
const pageLine = (i: number) => `Page ${i} of the generated benchmark site.`;

log(`generating a ${FILES}-file repository`);
const files: Record<string, string> = { 'README.md': '# Bench docs\n', 'docs.json': '{"name":"Bench"}\n' };
// Pages have the front matter Mintlify requires, so the run's docs check passes at the first try.
for (let i = 0; Object.keys(files).length < FILES; i++)
  files[pageFile(i)] = `---\ntitle: Page ${i}\n---\n\n# Page ${i}\n\n${pageLine(i)}\n\nSome text to edit.\n`;
const repo = createBareRepo({ files });

// Zero-latency scripted model: the first request of a run edits the file named in the prompt; once a tool result
// is in the conversation it answers with the summary (title line + body) that ends the run.
const model = await startModelServer([], {
  fallback: (req: RecordedModelRequest): ModelReply => {
    const messages = (req.body?.messages ?? []) as { role: string; content: unknown }[];
    if (messages.some((m) => m.role === 'tool')) return { text: 'Edit the page\n\nReworded one sentence.' };
    const m = new RegExp(`${MARK}(\\d+)`).exec(JSON.stringify(messages));
    const i = Number(m?.[1] ?? 0);
    return { toolCalls: [{ name: 'edit_file', args: { path: pageFile(i), old_string: pageLine(i), new_string: `${pageLine(i)} Edited.` } }] };
  },
});
const github: GitHubServer = await startGitHubServer({ token: TOKEN });

function serviceFor(side: Side): ServiceEnv {
  return {
    backend: side.backend,
    dataDir: tempDir(`jobs-${side.backend}`),
    ...(side.repoDir ? { repoDir: side.repoDir } : {}),
    extraEnv: {
      // A side's connection idles while the other side's job and both git baselines run (often more than the
      // default 5 s keep-alive): the service would close it as the next request is sent on it ("other side closed").
      INKWELL_KEEP_ALIVE_TIMEOUT_MS: '120000',
      ...side.env,
      INKWELL_MODEL: 'openai-compatible/bench',
      OPENAI_COMPATIBLE_BASE_URL: model.baseUrl,
      GITHUB_API_URL: github.apiUrl,
      GITHUB_TOKEN: TOKEN,
      ...insteadOfEnv({ [GITHUB_URL]: repo.dir }),
    },
  };
}

interface Job {
  id: string;
  status: string;
  prLink: string | null;
  branch: string | null;
  error: { code: string; message: string } | null;
}

async function api(svc: RunningService, key: string, method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(`${svc.baseUrl}${p}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

async function waitTerminal(svc: RunningService, key: string, projectId: string, id: string, pollMs: number, timeoutMs = 120_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await api(svc, key, 'GET', `/v2/agent/${projectId}/job/${id}`);
    if (r.status !== 200) throw new Error(`GET job returned ${r.status}`);
    const job = r.body as Job;
    if (job.status !== 'active') return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still active after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, pollMs));
  }
}

type Steps = Record<string, number>;

/**
 * The bare git commands that do a job's repository work, on a warm mirror of the same origin, one run per call
 * (so runs can be interleaved with Inkwell's jobs and both see the same disk and CPU conditions).
 * `reuse`: the variant that keeps one worktree and checks out each run's start commit in it (what Inkwell's
 * worktree pool does) instead of adding and removing a worktree per run.
 */
let baselines = 0;
function gitBaseline(reuse: boolean): { run(): { ms: number; steps: Steps }; cleanup(): void } {
  const instance = ++baselines; // branch names stay unique across backends (all push to the same origin)
  const base = tempDir(reuse ? 'jobs-git-reuse' : 'jobs-git');
  const mirror = path.join(base, 'mirror.git');
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Bench',
    GIT_AUTHOR_EMAIL: 'b@example.invalid',
    GIT_COMMITTER_NAME: 'Bench',
    GIT_COMMITTER_EMAIL: 'b@example.invalid',
  };
  const git = (cwd: string, ...a: string[]) => execFileSync('git', a, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  git(base, 'clone', '-q', '--mirror', repo.dir, mirror);
  const kept = path.join(base, 'wt');
  if (reuse) git(mirror, 'worktree', 'add', '-q', '--detach', kept, 'main');
  let k = 0;
  return {
    run() {
      k++;
      const wt = reuse ? kept : path.join(base, `wt-${k}`);
      const branch = `baseline/${instance}-${k}`;
      const steps: Steps = {};
      const t0 = performance.now();
      let last = t0;
      const step = (name: string) => {
        const now = performance.now();
        steps[name] = round(now - last);
        last = now;
      };
      git(mirror, 'fetch', '-q', '--prune', 'origin');
      step('fetch');
      if (reuse) {
        git(wt, 'checkout', '-q', '--detach', '--force', 'main');
        git(wt, 'clean', '-ffdxq');
        step('checkout');
      } else {
        git(mirror, 'worktree', 'add', '-q', '--detach', wt, 'main');
        step('worktree add');
      }
      const abs = path.join(wt, pageFile(k));
      fs.writeFileSync(abs, fs.readFileSync(abs, 'utf8').replace(pageLine(k), `${pageLine(k)} Edited.`));
      git(wt, 'add', '-A');
      git(wt, 'commit', '-q', '--no-gpg-sign', '-m', 'Edit the page');
      step('edit + add + commit');
      git(wt, 'push', '-q', repo.dir, `HEAD:refs/heads/${branch}`);
      step('push');
      if (!reuse) {
        git(mirror, 'worktree', 'remove', '--force', wt);
        step('worktree remove');
      }
      return { ms: performance.now() - t0, steps };
    },
    cleanup: () => fs.rmSync(base, { recursive: true, force: true }),
  };
}

interface BaselineResult {
  medianMs: number;
  runsMs: number[];
  stepMedianMs: Steps;
}

function summariseBaseline(runs: Array<{ ms: number; steps: Steps }>): BaselineResult {
  const stepNames = Object.keys(runs[0]?.steps ?? {});
  return {
    medianMs: summarise(runs.map((r) => r.ms)).median,
    runsMs: runs.map((r) => round(r.ms)),
    stepMedianMs: Object.fromEntries(stepNames.map((n) => [n, summarise(runs.map((r) => r.steps[n] ?? 0)).median])),
  };
}

interface BackendResult {
  backend: Backend;
  /** Set for the service run from the --compare checkout: its commit. */
  commit?: string;
  sequential?: { jobs: number; createToCompletedMs: ReturnType<typeof summarise>; allCompletedWithPr: boolean; failures: unknown[] };
  /** The bare git runs interleaved with this backend's jobs. */
  gitBaseline?: BaselineResult;
  gitReuseBaseline?: BaselineResult;
  /** Inkwell's median over the interleaved baseline's median (the issue's target: ≤ 2). */
  ratioToGit?: number;
  /** Median of the per-pair ratios (each job over the baseline run next to it): less sensitive to drift. */
  pairRatioMedian?: number;
  ratioToGitReuse?: number;
  concurrent?: {
    jobs: number;
    completed: number;
    failed: number;
    wallMs: number;
    jobsPerMinute: number;
    distinctPullRequests: number;
    duplicatedPullRequests: number;
    modelRequestsPerJob: number;
  };
  peakRssMb?: number | null;
  error?: string;
}

/** One side's running service and project, and its sequential jobs' outcomes. */
interface Running {
  out: BackendResult;
  s: ServiceEnv;
  svc: RunningService;
  project: BenchProject;
  times: number[];
  failures: unknown[];
}

let counter = 0;
async function create(r: Running): Promise<Job> {
  const i = (counter++ % (FILES - 10)) + 1;
  const res = await api(r.svc, r.project.adminKey, 'POST', `/v2/agent/${r.project.projectId}/job`, { prompt: `${MARK}${i}: reword the sentence of page ${i}` });
  if (res.status !== 201) throw new Error(`job create returned ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.body as Job;
}

async function started(side: Side, out: BackendResult): Promise<Running> {
  const s = serviceFor(side);
  if (side.backend === 'postgres') s.databaseUrl = await freshPgDatabase(side.commit ? 'bench_inkwell_compare' : 'bench_inkwell', BENCH_PG_ADMIN_URL);
  // The project points at the GitHub URL (rewritten to the local origin by git's insteadOf).
  const project = await createProject(s);
  const svc = await startService(s, 'all');
  const r: Running = { out, s, svc, project, times: [], failures: [] };
  // Warm-up job: clones the mirror.
  const w = await waitTerminal(svc, project.adminKey, project.projectId, (await create(r)).id, 10);
  log(`inkwell-${systemName(out)}: warm-up job ${w.status}${w.error ? ` (${w.error.code}: ${w.error.message})` : ''}, prLink ${w.prLink}`);
  return r;
}

async function sequentialJob(r: Running): Promise<void> {
  const t0 = performance.now();
  const created = await create(r);
  const done = await waitTerminal(r.svc, r.project.adminKey, r.project.projectId, created.id, 5);
  r.times.push(performance.now() - t0);
  if (done.status !== 'completed' || !done.prLink) r.failures.push({ id: done.id, status: done.status, prLink: done.prLink, error: done.error });
}

/** Sequential jobs of every side, each next to one run of each git baseline (order rotating), so a slow spell of the shared disk or CPU hits all alike. */
async function sequentialRounds(running: Running[]): Promise<void> {
  const plain = gitBaseline(false);
  const reuse = gitBaseline(true);
  plain.run();
  reuse.run(); // warm-ups
  const plainRuns: Array<{ ms: number; steps: Steps }> = [];
  const reuseRuns: Array<{ ms: number; steps: Steps }> = [];
  const order = [...running.map((r) => () => sequentialJob(r)), async () => void plainRuns.push(plain.run()), async () => void reuseRuns.push(reuse.run())];
  for (let k = 0; k < JOBS; k++) for (let i = 0; i < order.length; i++) await order[(k + i) % order.length]!();
  plain.cleanup();
  reuse.cleanup();
  for (const { out, times, failures } of running) {
    out.gitBaseline = summariseBaseline(plainRuns);
    out.gitReuseBaseline = summariseBaseline(reuseRuns);
    out.sequential = { jobs: JOBS, createToCompletedMs: summarise(times), allCompletedWithPr: failures.length === 0, failures: failures.slice(0, 5) };
    out.ratioToGit = round(out.sequential.createToCompletedMs.median / out.gitBaseline.medianMs, 2);
    out.pairRatioMedian = round(median(times.map((t, i) => t / (plainRuns[i]?.ms ?? Number.NaN))), 2);
    out.ratioToGitReuse = round(out.sequential.createToCompletedMs.median / out.gitReuseBaseline.medianMs, 2);
    log(
      `inkwell-${systemName(out)}: ${JOBS} jobs, median ${out.sequential.createToCompletedMs.median} ms create→completed; git ${out.gitBaseline.medianMs} ms (${out.ratioToGit}×, per-pair median ${out.pairRatioMedian}×); git with a reused worktree ${out.gitReuseBaseline.medianMs} ms (${out.ratioToGitReuse}×); ${failures.length} not completed with a PR`,
    );
  }
}

/** CONCURRENT jobs created at once: all complete, none duplicated, throughput. */
async function concurrentJobs(r: Running): Promise<void> {
  const pullsBefore = github.pulls.length;
  const modelBefore = model.requests.length;
  const t0 = performance.now();
  const created = await Promise.all(Array.from({ length: CONCURRENT }, () => create(r)));
  const finished = await Promise.all(created.map((j) => waitTerminal(r.svc, r.project.adminKey, r.project.projectId, j.id, 100, 600_000)));
  const wallMs = performance.now() - t0;
  const newPulls = github.pulls.slice(pullsBefore);
  const heads = new Set(newPulls.map((p) => p.head));
  r.out.concurrent = {
    jobs: CONCURRENT,
    completed: finished.filter((j) => j.status === 'completed' && j.prLink).length,
    failed: finished.filter((j) => j.status !== 'completed').length,
    wallMs: Math.round(wallMs),
    jobsPerMinute: round(CONCURRENT / (wallMs / 60_000), 1),
    distinctPullRequests: new Set(finished.map((j) => j.prLink).filter(Boolean)).size,
    duplicatedPullRequests: newPulls.length - heads.size,
    modelRequestsPerJob: round((model.requests.length - modelBefore) / CONCURRENT, 2),
  };
  log(`inkwell-${systemName(r.out)}: ${CONCURRENT} concurrent jobs: ${JSON.stringify(r.out.concurrent)}`);
}

async function benchBackend(backend: Backend): Promise<BackendResult[]> {
  const sides = sidesOf(backend, compare);
  const outs: BackendResult[] = sides.map((side) => ({ backend, ...(side.commit ? { commit: side.commit } : {}) }));
  const running: Running[] = [];
  try {
    for (const [i, side] of sides.entries()) running.push(await started(side, outs[i] as BackendResult));
    await sequentialRounds(running);
    for (const r of running) await concurrentJobs(r);
  } catch (err) {
    for (const o of outs) o.error ??= errorText(err);
    log(`inkwell-${backend}: FAILED: ${errorText(err).slice(0, 800)}`);
  } finally {
    for (const r of running) {
      r.out.peakRssMb = await r.svc.stop();
      fs.rmSync(r.s.dataDir, { recursive: true, force: true });
    }
  }
  return outs;
}

const compare = compareFromArgs(args);
const results: BackendResult[] = [];
for (const backend of backends) results.push(...(await benchBackend(backend)));

await model.close();
await github.close();
repo.cleanup();

const result = {
  benchmark: 'jobs',
  environment: environment(),
  method: {
    files: FILES,
    sequentialJobs: JOBS,
    concurrentJobs: CONCURRENT,
    notes: [
      '`inkwell serve --role all` (API + worker, default worker settings: 2 slots, INKWELL_WORKTREE_POOL=2) in a child process; the scripted model answers at once (edit_file, then a summary).',
      'Each sequential job is timed from POST /job to the GET that first shows `completed` (polled every 5 ms); a warm-up job first creates the mirror.',
      'Baseline (the target): the same repository work with bare git commands on a warm mirror: fetch, worktree add, edit, add, commit, push, worktree remove.',
      "Reuse baseline (for reference): bare git keeping one worktree: fetch, checkout --force of the start commit + clean, edit, add, commit, push. It is what Inkwell's worktree pool does, so it shows the service's own overhead.",
      'Each job runs next to one run of each baseline, order rotating, after one warm-up run of each; medians over the runs of each.',
    ],
  },
  inkwell: results,
  ...compareNote(compare),
  targets: Object.fromEntries(results.map((r) => [`${systemName(r)}AtMost2xGit`, (r.ratioToGit ?? Number.POSITIVE_INFINITY) <= 2])),
};
const filesOut = writeResults('jobs', result);
console.log('system                    median ms  git ms     ratio  git-reuse ms  ratio  concurrent completed  jobs/min');
for (const r of results) {
  const cells = [
    r.sequential?.createToCompletedMs.median ?? 'FAILED',
    r.gitBaseline?.medianMs ?? '',
    r.ratioToGit ?? '',
    r.gitReuseBaseline?.medianMs ?? '',
    r.ratioToGitReuse ?? '',
    r.concurrent ? `${r.concurrent.completed}/${r.concurrent.jobs}` : '',
  ];
  const widths = [11, 11, 7, 14, 7, 22];
  console.log(`inkwell-${systemName(r).padEnd(17)} ${cells.map((c, i) => String(c).padEnd(widths[i]!)).join('')}${r.concurrent?.jobsPerMinute ?? ''}`);
}
console.log(`results: ${filesOut.latest}`);
