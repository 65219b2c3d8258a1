// `inkwell job …`: the job API through the typed client (src/client). Base URL from --url or
// INKWELL_URL (default http://127.0.0.1:3000), admin key from --key or INKWELL_API_KEY.
import type { Command } from 'commander';
import { ApiError, createClient, type InkwellClient, type Job, type JobEvent } from '../client/index.ts';
import { type ConnectionOptions, connection, explainApiError as explain, withConnectionOptions } from './api-connection.ts';
import { colourDiff, statText, visible } from './job-diff.ts';
import { colorsFor, fail, printJson, printTable } from './output.ts';
import { createProgress, type Outcome } from './progress.ts';

const STATUSES = ['active', 'completed', 'failed', 'archived'];
const WAIT_HELP = 'follow the job until it settles, then print the PR link (without one: the branch and commit pushed)';

interface ConnOpts extends ConnectionOptions {
  project: string;
  json?: boolean;
}

function clientFrom(o: ConnOpts): { client: InkwellClient; url: string } {
  const { url, key } = connection(o);
  return { client: createClient({ baseUrl: url, key }), url };
}

function withConn(cmd: Command): Command {
  return withConnectionOptions(cmd.requiredOption('--project <id>', 'project id')).option('--json', 'print one JSON object');
}

function describeJob(j: Job): string {
  const lines = [`Job ${j.id}: ${j.status}`, `  branch   ${j.branch ?? '-'}`, `  model    ${j.model}`, `  source   ${j.source.repository} @ ${j.source.ref}`];
  if (j.prLink) lines.push(`  PR       ${j.prLink}`);
  if (j.error) lines.push(`  error    ${j.error.code}: ${j.error.message}`);
  lines.push(`  tokens   ${j.usage.inputTokens} in / ${j.usage.outputTokens} out`);
  return `${lines.join('\n')}\n`;
}

/** One line for a live step, or null for events not worth a line. */
function stepLine(e: JobEvent): string | null {
  const d = e.data as Record<string, any>;
  const firstLine = (s: unknown) =>
    String(s ?? '')
      .split('\n')
      .find((l) => l.trim() !== '') ?? '';
  const clip = (s: string, n = 100) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
  switch (e.type) {
    case 'tool_call': {
      const a = (d.args ?? {}) as Record<string, unknown>;
      const target = a.path ?? a.from ?? a.query ?? '';
      return `→ ${d.tool}${target ? ` ${clip(String(target), 80)}` : ''}${a.to ? ` → ${a.to}` : ''}`;
    }
    case 'tool_result':
      return d.ok === false ? `  ✗ ${clip(firstLine(d.summary))}` : null;
    case 'assistant_message': {
      const t = firstLine(d.text);
      return t ? `… ${clip(t)}` : null;
    }
    case 'check':
      return d.status === 'passed' ? '✓ docs checks passed' : `✗ docs checks: ${d.findingCount} problems${d.final ? '' : ' (sent back to the model)'}`;
    case 'scope': {
      const paths = (list: unknown) =>
        Array.isArray(list)
          ? list.map((f) => {
              const entry = f as { path?: unknown; reason?: unknown } | null;
              return `${String(entry?.path ?? '')}${entry?.reason === 'unrelated-page' ? ' (unrelated page)' : ''}`;
            })
          : [];
      const reverted = paths(d.reverted);
      const kept = paths(d.justified);
      const parts = [
        reverted.length > 0 ? `reverted ${reverted.length} out-of-scope file${reverted.length === 1 ? '' : 's'} (${clip(reverted.join(', '), 120)})` : '',
        kept.length > 0 ? `kept ${kept.length} with a reason (${clip(kept.join(', '), 120)})` : '',
        d.overBudget ? `over budget: ${d.changedFiles} of ${d.maxChangedFiles} files` : '',
      ].filter(Boolean);
      return `↺ scope: ${parts.join('; ')}`;
    }
    case 'commit':
      return `✓ committed ${String(d.sha ?? '').slice(0, 8)} ${clip(String(d.message ?? ''), 80)}`;
    case 'pull_request':
      return `✓ pull request ${d.url}`;
    case 'error':
      return `✗ ${d.code}: ${clip(String(d.message ?? ''), 200)}`;
    case 'user_message':
      return `» ${clip(firstLine(d.prompt))}`;
    case 'status':
      return d.phase === 'running' ? `▶ turn ${d.turn} started${d.attempt > 1 ? ` (attempt ${d.attempt})` : ''}` : null;
  }
  return null;
}

const SETTLED = new Set(['completed', 'failed', 'archived']);

/** The commit a turn pushed (from its `commit` event). */
interface PushedCommit {
  sha: string;
  branch: string;
  message: string;
}

/** What `--wait` ends with: the settled job and the last commit pushed while waiting (null: none). */
interface WaitResult {
  job: Job;
  commit: PushedCommit | null;
}

function commitOf(e: JobEvent): PushedCommit | null {
  if (e.type !== 'commit') return null;
  const d = e.data as Record<string, unknown>;
  return typeof d.sha === 'string' ? { sha: d.sha, branch: String(d.branch ?? ''), message: String(d.message ?? '') } : null;
}

/** The last commit among the stored events after `after`. */
async function lastCommit(client: InkwellClient, projectId: string, jobId: string, after: number): Promise<PushedCommit | null> {
  let commit: PushedCommit | null = null;
  for (;;) {
    const page = await client.events(projectId, jobId, { after });
    for (const e of page.events) commit = commitOf(e) ?? commit;
    const last = page.events.at(-1);
    if (!page.hasMore || !last) return commit;
    after = last.seq;
  }
}

/** The final line of a wait, for people: the pull request, else the branch and commit pushed, else why not. */
function outcomeLine({ job, commit }: WaitResult): { outcome: Outcome; line: string } {
  if (job.status === 'completed') {
    if (job.prLink) return { outcome: 'ok', line: `Job ${job.id} completed: ${job.prLink}` };
    if (commit)
      return {
        outcome: 'ok',
        line: `Job ${job.id} completed: pushed commit ${commit.sha.slice(0, 12)} to branch ${commit.branch || job.branch} of ${job.source.repository} (no pull request)`,
      };
    return { outcome: 'ok', line: `Job ${job.id} completed with no changes to commit` };
  }
  if (job.status === 'failed') return { outcome: 'fail', line: `Job ${job.id} failed: ${job.error?.code ?? 'error'}: ${job.error?.message ?? ''}` };
  return { outcome: 'warn', line: `Job ${job.id} is ${job.status}` };
}

/**
 * Follows the job's events from `after` until it settles, showing its steps on stderr (unless quiet): on a
 * terminal under a spinner, elsewhere as plain lines. Returns the settled job and the commit it pushed.
 */
async function waitForJob(client: InkwellClient, projectId: string, jobId: string, after: number, quiet: boolean): Promise<WaitResult> {
  const progress = quiet ? null : createProgress(`Job ${jobId} is active`);
  const controller = new AbortController();
  let settled = false;
  try {
    for await (const e of client.streamEvents(projectId, jobId, { after, signal: controller.signal })) {
      const line = stepLine(e);
      if (line) progress?.log(line);
      if (e.type === 'status' && e.data.phase === 'running') progress?.status(`Job ${jobId}: turn ${e.data.turn} running`);
      if (e.type === 'status' && SETTLED.has(String(e.data.status))) {
        settled = true;
        controller.abort();
      }
    }
  } catch (err) {
    if (!(err instanceof ApiError)) progress?.log(`(live events unavailable: ${(err as Error).message}; polling)`);
    else throw err;
  }
  // Fallback (and confirmation): poll until settled.
  let job = await client.getJob(projectId, jobId);
  while (!settled && job.status === 'active') {
    await new Promise((r) => setTimeout(r, 1000));
    job = await client.getJob(projectId, jobId);
  }
  if (job.status === 'active') job = await client.getJob(projectId, jobId);
  // From the stored events: the same answer whether the live stream or the polling saw the job settle.
  const result = { job, commit: await lastCommit(client, projectId, jobId, after) };
  if (progress) {
    const { outcome, line } = outcomeLine(result);
    progress.end(outcome, line);
  }
  return result;
}

/** The last event seq so far (to follow only what comes after a message). */
async function lastSeq(client: InkwellClient, projectId: string, jobId: string): Promise<number> {
  let after = 0;
  for (;;) {
    const page = await client.events(projectId, jobId, { after });
    const last = page.events[page.events.length - 1];
    if (last) after = last.seq;
    if (!page.hasMore) return after;
  }
}

function finish(job: Job, json: boolean | undefined): void {
  if (json) printJson(job);
  else process.stdout.write(describeJob(job));
}

/**
 * After --wait, stdout carries the result for scripts: the pull request link, else `<branch> <commit sha>`
 * when the turn pushed a commit without a pull request (a local repository), else nothing. With --json: the
 * job and `commit` ({sha, branch, message} or null). A failed job exits 1.
 */
function finishWait({ job, commit }: WaitResult, json: boolean | undefined): void {
  if (json) printJson({ ...job, commit });
  else if (job.prLink) process.stdout.write(`${job.prLink}\n`);
  else if (job.status === 'completed' && commit) process.stdout.write(`${commit.branch || job.branch} ${commit.sha}\n`);
  if (job.status === 'failed') process.exitCode = 1;
}

/**
 * `job diff`: JSON (without the text under --stat), the per-file summary, or the unified diff; colours and
 * visible control characters only on a terminal, the exact text when piped. Notes go to stderr.
 */
async function printDiff(client: InkwellClient, projectId: string, id: string, o: { stat: boolean; json: boolean }): Promise<void> {
  const tty = Boolean(process.stdout.isTTY);
  const colors = colorsFor(process.stdout);
  if (o.json || o.stat) {
    const d = await client.getDiff(projectId, id);
    if (o.json) return printJson(o.stat ? { ...d, diff: undefined } : d);
    if (d.files.length === 0) process.stderr.write(`Job ${id} has pushed no changes yet\n`);
    process.stdout.write(statText(d, colors, tty ? visible : undefined));
    return;
  }
  const { patch, truncated } = await client.getDiffPatch(projectId, id);
  if (patch === '') process.stderr.write(`Job ${id} has pushed no changes yet\n`);
  else process.stdout.write(tty ? colourDiff(patch, colors) : patch);
  if (truncated) process.stderr.write('inkwell: the diff is cut at 1 MiB (whole files); --stat lists every file\n');
}

export function registerJobCommands(program: Command): void {
  const job = program.command('job').description('Create, follow and manage agent jobs through the API');

  withConn(job.command('create').description('Create a job from a prompt').argument('<prompt>', 'instruction for the agent'))
    .option('--model <id>', 'model, <provider>/<model>')
    .option('--repository <url>', 'repository (default: the project repository)')
    .option('--ref <branch>', 'branch to start from (default: the project ref)')
    .option('--branch <name>', 'branch to push to (default inkwell/<id>-<slug>)')
    .option('--draft', 'open the pull request as a draft')
    .option('--idempotency-key <key>', 'safe retries: the same key returns the original job')
    .option('--wait', WAIT_HELP)
    .action(
      async (
        prompt: string,
        o: ConnOpts & { model?: string; repository?: string; ref?: string; branch?: string; draft?: boolean; idempotencyKey?: string; wait?: boolean },
      ) => {
        const { client, url } = clientFrom(o);
        try {
          const source = { ...(o.repository ? { repository: o.repository } : {}), ...(o.ref ? { ref: o.ref } : {}) };
          const created = await client.createJob(
            o.project,
            {
              prompt,
              ...(o.model ? { model: o.model } : {}),
              ...(Object.keys(source).length ? { source } : {}),
              ...(o.branch ? { branch: o.branch } : {}),
              ...(o.draft ? { draft: true } : {}),
            },
            o.idempotencyKey ? { idempotencyKey: o.idempotencyKey } : {},
          );
          if (!o.wait) return finish(created, o.json);
          if (!o.json) process.stderr.write(`Created job ${created.id} on ${created.branch}\n`);
          finishWait(await waitForJob(client, o.project, created.id, 0, Boolean(o.json)), o.json);
        } catch (err) {
          explain(err, url);
        }
      },
    );

  withConn(job.command('get').description('Show a job').argument('<id>', 'job id')).action(async (id: string, o: ConnOpts) => {
    const { client, url } = clientFrom(o);
    try {
      finish(await client.getJob(o.project, id), o.json);
    } catch (err) {
      explain(err, url);
    }
  });

  withConn(
    job
      .command('message')
      .description('Send a follow-up message (same branch and pull request)')
      .argument('<id>', 'job id')
      .argument('<prompt>', 'follow-up instruction'),
  )
    .option('--idempotency-key <key>', 'safe retries: the same key queues the message once')
    .option('--wait', WAIT_HELP)
    .action(async (id: string, prompt: string, o: ConnOpts & { idempotencyKey?: string; wait?: boolean }) => {
      const { client, url } = clientFrom(o);
      try {
        const after = o.wait ? await lastSeq(client, o.project, id) : 0;
        const j = await client.sendMessage(o.project, id, prompt, o.idempotencyKey ? { idempotencyKey: o.idempotencyKey } : {});
        if (!o.wait) return finish(j, o.json);
        finishWait(await waitForJob(client, o.project, id, after, Boolean(o.json)), o.json);
      } catch (err) {
        explain(err, url);
      }
    });

  withConn(job.command('list').description('List jobs, newest first'))
    .option('--status <status>', `only jobs in this status (${STATUSES.join(', ')})`)
    .option('--limit <n>', 'jobs per page (1-100)', '20')
    .option('--cursor <cursor>', 'nextCursor from the previous page')
    .action(async (o: ConnOpts & { status?: string; limit: string; cursor?: string }) => {
      if (o.status && !STATUSES.includes(o.status)) fail(`--status must be one of ${STATUSES.join(', ')}`);
      if (!/^\d+$/.test(o.limit) || Number(o.limit) < 1 || Number(o.limit) > 100) fail('--limit must be a whole number from 1 to 100');
      const { client, url } = clientFrom(o);
      try {
        const page = await client.listJobs(o.project, {
          limit: Number(o.limit),
          ...(o.status ? { status: o.status as Job['status'] } : {}),
          ...(o.cursor ? { cursor: o.cursor } : {}),
        });
        if (o.json) return printJson(page);
        printTable(
          page.jobs.map((j) => ({ ...j, prLink: j.prLink ?? '-' })),
          ['id', 'status', 'branch', 'prLink', 'createdAt'],
        );
        if (page.nextCursor) process.stdout.write(`\nMore: --cursor ${page.nextCursor}\n`);
      } catch (err) {
        explain(err, url);
      }
    });

  withConn(job.command('archive').description('Archive a job (stops a run in progress)').argument('<id>', 'job id')).action(async (id: string, o: ConnOpts) => {
    const { client, url } = clientFrom(o);
    try {
      finish(await client.archiveJob(o.project, id), o.json);
    } catch (err) {
      explain(err, url);
    }
  });

  withConn(job.command('diff').description("Show the job branch's diff against its base (as of the last turn that pushed)").argument('<id>', 'job id'))
    .option('--stat', 'one line per changed file and the totals instead of the diff')
    .option('--format <format>', 'patch (the unified diff; default) or json (the API object)', 'patch')
    .action(async (id: string, o: ConnOpts & { stat?: boolean; format: string }) => {
      if (o.format !== 'patch' && o.format !== 'json') fail('--format must be patch or json');
      const { client, url } = clientFrom(o);
      try {
        await printDiff(client, o.project, id, { stat: Boolean(o.stat), json: Boolean(o.json) || o.format === 'json' });
      } catch (err) {
        explain(err, url);
      }
    });

  withConn(job.command('events').description("Print a job's events").argument('<id>', 'job id'))
    .option('--after <seq>', 'only events after this seq', '0')
    .option('--follow', 'keep streaming new events (Ctrl-C to stop)')
    .action(async (id: string, o: ConnOpts & { after: string; follow?: boolean }) => {
      if (!/^\d+$/.test(o.after)) fail('--after must be a whole number');
      const { client, url } = clientFrom(o);
      const print = (e: JobEvent) => {
        if (o.json) process.stdout.write(`${JSON.stringify(e)}\n`);
        else process.stdout.write(`${String(e.seq).padStart(4)} ${e.at} ${stepLine(e) ?? `${e.type} ${JSON.stringify(e.data)}`}\n`);
      };
      try {
        if (o.follow) {
          for await (const e of client.streamEvents(o.project, id, { after: Number(o.after) })) print(e);
          return;
        }
        let after = Number(o.after);
        for (;;) {
          const page = await client.events(o.project, id, { after });
          for (const e of page.events) print(e);
          after = page.events.at(-1)?.seq ?? after;
          if (!page.hasMore) break;
        }
      } catch (err) {
        explain(err, url);
      }
    });
}
