// Jobs benchmark: the overhead of a job — create → `completed` with a pull request — with a zero-latency scripted
// model (one edit_file call, then a summary) on a generated 5,000-file repository, warm mirror, median over 20
// sequential jobs; baseline in the same run: the bare git commands doing the same work (fetch the mirror,
// worktree add, edit, commit, push, worktree remove). Then 50 concurrent jobs: all complete, none duplicated,
// throughput.
//
//   npm run bench:jobs -- [--files 5000] [--jobs 20] [--concurrent 50] [--backends sqlite,postgres]
//
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
import { environment, writeResults } from './lib/results.ts';
import { type Backend, createProject, freshPgDatabase, type RunningService, type ServiceEnv, startService, tempDir } from './lib/service.ts';
import { round, summarise } from './lib/stats.ts';

const args = parseArgs(process.argv.slice(2));
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const FILES = intArg(args, 'files') ?? 5000;
const JOBS = intArg(args, 'jobs') ?? 20;
const CONCURRENT = intArg(args, 'concurrent') ?? 50;
const backends = (args.has('git-only') ? [] : (args.get('backends') ?? 'sqlite,postgres').split(',')) as Backend[];
const GITHUB_URL = 'https://github.com/acme/docs';
const TOKEN = `ghp_${'BenchT0kenValue'.repeat(3)}`;
const MARK = 'bench-edit ';

const pageFile = (i: number) => `docs/section-${String(i % 50).padStart(2, '0')}/page-${String(i).padStart(5, '0')}.md`;
const pageLine = (i: number) => `Page ${i} of the generated benchmark site.`;

log(`generating a ${FILES}-file repository`);
const files: Record<string, string> = { 'README.md': '# Bench docs\n', 'docs.json': '{"name":"Bench"}\n' };
for (let i = 0; Object.keys(files).length < FILES; i++) files[pageFile(i)] = `# Page ${i}\n\n${pageLine(i)}\n\nSome text to edit.\n`;
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

function serviceFor(backend: Backend): ServiceEnv {
  return {
    backend,
    dataDir: tempDir(`jobs-${backend}`),
    extraEnv: {
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

/** The bare git commands that do a job's repository work, on a warm mirror of the same origin. */
function gitBaseline(n: number): { medianMs: number; runsMs: number[]; stepMedianMs: Record<string, number>; steps: string[] } {
  const base = tempDir('jobs-git');
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
  const runs: number[] = [];
  const stepTimes: Record<string, number[]> = {};
  for (let k = 0; k < n + 1; k++) {
    const i = 10_000 + k;
    const file = pageFile(k);
    const wt = path.join(base, `wt-${k}`);
    const branch = `baseline/${i}`;
    const t0 = performance.now();
    let last = t0;
    const step = (name: string) => {
      const now = performance.now();
      if (k > 0) {
        stepTimes[name] ??= [];
        stepTimes[name].push(now - last);
      }
      last = now;
    };
    git(mirror, 'fetch', '-q', '--prune', 'origin');
    step('fetch');
    git(mirror, 'worktree', 'add', '-q', '-b', branch, wt, 'main');
    step('worktree add');
    const abs = path.join(wt, file);
    fs.writeFileSync(abs, fs.readFileSync(abs, 'utf8').replace(pageLine(k), `${pageLine(k)} Edited.`));
    git(wt, 'add', '-A');
    git(wt, 'commit', '-q', '--no-gpg-sign', '-m', 'Edit the page');
    step('edit + add + commit');
    git(wt, 'push', '-q', repo.dir, `HEAD:refs/heads/${branch}`);
    step('push');
    git(mirror, 'worktree', 'remove', '--force', wt);
    step('worktree remove');
    if (k > 0) runs.push(performance.now() - t0); // the first run is the warm-up
  }
  fs.rmSync(base, { recursive: true, force: true });
  return {
    medianMs: summarise(runs).median,
    runsMs: runs.map((x) => round(x)),
    stepMedianMs: Object.fromEntries(Object.entries(stepTimes).map(([k, v]) => [k, summarise(v).median])),
    steps: ['git fetch --prune (mirror)', 'git worktree add -b', 'edit file', 'git add -A', 'git commit', 'git push', 'git worktree remove'],
  };
}

interface BackendResult {
  backend: Backend;
  sequential?: { jobs: number; createToCompletedMs: ReturnType<typeof summarise>; allCompletedWithPr: boolean; failures: unknown[] };
  ratioToGit?: number;
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

log(`git baseline: ${JOBS} runs`);
const gitResult = gitBaseline(JOBS);
log(`git baseline median ${gitResult.medianMs} ms`);

const results: BackendResult[] = [];
let counter = 0;
for (const backend of backends) {
  const out: BackendResult = { backend };
  const s = serviceFor(backend);
  try {
    if (backend === 'postgres') s.databaseUrl = await freshPgDatabase('bench_inkwell', BENCH_PG_ADMIN_URL);
    const project = await createProject(s);
    // The project points at the GitHub URL (rewritten to the local origin by git's insteadOf).
    const svc = await startService(s, 'all');
    try {
      const create = async () => {
        const i = (counter++ % (FILES - 10)) + 1;
        const r = await api(svc, project.adminKey, 'POST', `/v2/agent/${project.projectId}/job`, { prompt: `${MARK}${i}: reword the sentence of page ${i}` });
        if (r.status !== 201) throw new Error(`job create returned ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
        return r.body as Job;
      };
      // Warm-up job: clones the mirror.
      const warm = await create();
      const w = await waitTerminal(svc, project.adminKey, project.projectId, warm.id, 10);
      log(`inkwell-${backend}: warm-up job ${w.status}${w.error ? ` (${w.error.code}: ${w.error.message})` : ''}, prLink ${w.prLink}`);
      const times: number[] = [];
      const failures: unknown[] = [];
      for (let k = 0; k < JOBS; k++) {
        const t0 = performance.now();
        const job = await create();
        const done = await waitTerminal(svc, project.adminKey, project.projectId, job.id, 5);
        times.push(performance.now() - t0);
        if (done.status !== 'completed' || !done.prLink) failures.push({ id: done.id, status: done.status, prLink: done.prLink, error: done.error });
      }
      out.sequential = { jobs: JOBS, createToCompletedMs: summarise(times), allCompletedWithPr: failures.length === 0, failures: failures.slice(0, 5) };
      out.ratioToGit = round(out.sequential.createToCompletedMs.median / gitResult.medianMs, 2);
      log(
        `inkwell-${backend}: ${JOBS} jobs, median ${out.sequential.createToCompletedMs.median} ms create→completed (${out.ratioToGit}× git), ${failures.length} not completed with a PR`,
      );

      // 50 concurrent jobs.
      const pullsBefore = github.pulls.length;
      const modelBefore = model.requests.length;
      const t0 = performance.now();
      const created = await Promise.all(Array.from({ length: CONCURRENT }, () => create()));
      const finished = await Promise.all(created.map((j) => waitTerminal(svc, project.adminKey, project.projectId, j.id, 100, 600_000)));
      const wallMs = performance.now() - t0;
      const newPulls = github.pulls.slice(pullsBefore);
      const heads = new Set(newPulls.map((p) => p.head));
      out.concurrent = {
        jobs: CONCURRENT,
        completed: finished.filter((j) => j.status === 'completed' && j.prLink).length,
        failed: finished.filter((j) => j.status !== 'completed').length,
        wallMs: Math.round(wallMs),
        jobsPerMinute: round(CONCURRENT / (wallMs / 60_000), 1),
        distinctPullRequests: new Set(finished.map((j) => j.prLink).filter(Boolean)).size,
        duplicatedPullRequests: newPulls.length - heads.size,
        modelRequestsPerJob: round((model.requests.length - modelBefore) / CONCURRENT, 2),
      };
      log(`inkwell-${backend}: ${CONCURRENT} concurrent jobs: ${JSON.stringify(out.concurrent)}`);
    } finally {
      out.peakRssMb = await svc.stop();
    }
  } catch (err) {
    out.error = (err as Error).message;
    log(`inkwell-${backend}: FAILED: ${out.error.slice(0, 800)}`);
  } finally {
    fs.rmSync(s.dataDir, { recursive: true, force: true });
  }
  results.push(out);
}

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
      '`inkwell serve --role all` (API + worker, default worker settings) in a child process; the scripted model answers at once (edit_file, then a summary).',
      'Each sequential job is timed from POST /job to the GET that first shows `completed` (polled every 5 ms); a warm-up job first creates the mirror.',
      'Baseline: the same repository work with bare git commands on a warm mirror (fetch, worktree add, edit, add, commit, push, worktree remove), median of the same count after a warm-up.',
    ],
  },
  gitBaseline: gitResult,
  inkwell: results,
  targets: Object.fromEntries(results.map((r) => [`${r.backend}AtMost2xGit`, (r.ratioToGit ?? Number.POSITIVE_INFINITY) <= 2])),
};
const filesOut = writeResults('jobs', result);
console.log('system            median ms  ratio to git  concurrent completed  jobs/min');
console.log(`git (bare)        ${String(gitResult.medianMs).padEnd(11)}1`);
for (const r of results) {
  console.log(
    `inkwell-${r.backend.padEnd(9)} ${String(r.sequential?.createToCompletedMs.median ?? 'FAILED').padEnd(11)}${String(r.ratioToGit ?? '').padEnd(14)}${String(r.concurrent ? `${r.concurrent.completed}/${r.concurrent.jobs}` : '').padEnd(22)}${r.concurrent?.jobsPerMinute ?? ''}`,
  );
}
console.log(`results: ${filesOut.latest}`);
