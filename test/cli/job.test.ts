// `inkwell job …` as a real child process against a real server and worker: an injected executor, and the real
// one on a local repository (a scripted model server, real git), with pipes and on a pseudo-terminal.
import { execFile } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunExecutor, RunError } from '../../src/agent/execute.ts';
import { releaseWorktree } from '../../src/git/workspace.ts';
import type { Seeded } from '../helpers/app.ts';
import { type BareRepo, createBareRepo, gitSync } from '../helpers/git.ts';
import { type JobsTestApp, startJobsApp, waitFor } from '../helpers/jobs.ts';
import { type ModelServer, startModelServer } from '../helpers/model-server.ts';
import { fakeExecutor } from '../jobs/fake-executor.ts';
import { runInTerminal } from './run-cli.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/inkwell.js');

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('inkwell job (CLI over HTTP)', () => {
  let t: JobsTestApp;
  let s: Seeded;
  let conn: string[];

  beforeAll(async () => {
    t = await startJobsApp('sqlite', {}, { INKWELL_POLL_INTERVAL_MS: '20' });
    s = await t.seed();
    conn = ['--project', s.project.id, '--url', t.baseUrl];
    t.startWorker(
      fakeExecutor(async (input) => {
        if (input.prompt.includes('fail')) throw new RunError('model_error', 'The model call failed: HTTP 500');
        await input.onEvent({ type: 'tool_call', data: { tool: 'read_file', args: { path: 'docs/intro.mdx' } } });
        await new Promise((r) => setTimeout(r, 200));
        await input.onEvent({ type: 'check', data: { status: 'failed', round: 0, final: false, findingCount: 2 } });
        await input.onEvent({ type: 'check', data: { status: 'passed', round: 1, final: true, findingCount: 0 } });
        await input.onEvent({
          type: 'scope',
          data: {
            reverted: [
              { path: 'package-lock.json', reason: 'lockfile' },
              { path: 'docs/billing.mdx', reason: 'unrelated-page' },
            ],
            justified: [],
            overBudget: true,
            changedFiles: 30,
            maxChangedFiles: 25,
          },
        });
        await input.onEvent({ type: 'commit', data: { sha: 'abcdef1234567890', message: 'Reword intro' } });
        await input.onEvent({ type: 'pull_request', data: { url: 'https://github.com/acme/docs/pull/3' } });
        return { prLink: 'https://github.com/acme/docs/pull/3' };
      }),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it('create --wait shows live steps and prints the PR link; message --wait continues the job', async () => {
    const r = await run(['job', 'create', ...conn, 'Reword the intro', '--wait'], { INKWELL_API_KEY: s.adminKey });
    expect(r.stderr).toContain('Created job job_');
    expect(r.stderr).toContain('→ read_file docs/intro.mdx');
    expect(r.stderr).toContain('✗ docs checks: 2 problems (sent back to the model)\n');
    expect(r.stderr).toContain('✓ docs checks passed\n');
    expect(r.stderr).toContain('↺ scope: reverted 2 out-of-scope files (package-lock.json, docs/billing.mdx (unrelated page)); over budget: 30 of 25 files\n');
    expect(r.stderr).toContain('✓ committed abcdef12 Reword intro');
    expect(r.stderr).toContain('✓ pull request https://github.com/acme/docs/pull/3');
    expect(r.stdout).toBe('https://github.com/acme/docs/pull/3\n');
    expect(r.stderr).toMatch(/✓ Job job_\w+ completed: https:\/\/github.com\/acme\/docs\/pull\/3\n$/);
    expect(r.stdout + r.stderr).not.toContain('\x1b');
    expect(r.code).toBe(0);
    const id = /Created job (job_\w+)/.exec(r.stderr)![1]!;

    const m = await run(['job', 'message', id, ...conn, '--key', s.adminKey, 'And the FAQ', '--wait', '--json']);
    expect(m.code).toBe(0);
    const job = JSON.parse(m.stdout);
    expect(job).toMatchObject({ id, status: 'completed', prLink: 'https://github.com/acme/docs/pull/3' });

    const g = await run(['job', 'get', id, ...conn, '--key', s.adminKey]);
    expect(g.stdout).toContain(`Job ${id}: completed`);
    expect(g.stdout).toContain('PR       https://github.com/acme/docs/pull/3');
    const l = await run(['job', 'list', ...conn, '--key', s.adminKey, '--json']);
    expect(JSON.parse(l.stdout).jobs.map((j: { id: string }) => j.id)).toContain(id);
    const a = await run(['job', 'archive', id, ...conn, '--key', s.adminKey, '--json']);
    expect(JSON.parse(a.stdout)).toMatchObject({ id, status: 'archived' });
    const again = await run(['job', 'message', id, ...conn, '--key', s.adminKey, 'more']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('job_archived');
  });

  it('a failed job exits 1 and says why; bad input and a missing key or server are clear errors', async () => {
    const f = await run(['job', 'create', ...conn, '--key', s.adminKey, 'please fail', '--wait']);
    expect(f.code).toBe(1);
    expect(f.stderr).toContain('model_error');

    const bad = await run(['job', 'create', ...conn, '--key', s.adminKey, '']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('prompt');
    expect(bad.stderr).toContain('invalid_request');

    const nokey = await run(['job', 'get', 'job_x', ...conn]);
    expect(nokey.code).toBe(1);
    expect(nokey.stderr).toContain('INKWELL_API_KEY');

    const closed = await closedPort();
    const down = await run(['job', 'get', 'job_x', '--project', s.project.id, '--key', s.adminKey], { INKWELL_URL: `http://127.0.0.1:${closed}` });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`cannot reach the Inkwell API at http://127.0.0.1:${closed} (ECONNREFUSED)`);
  });
});

/** The escape character that starts every ANSI sequence (colours, cursor movement). */
const ESC = '\x1b';
const GREEN_CHECK = `${ESC}[32m✓${ESC}[39m`;
/** A line of repository text that would set the terminal's title and colour if printed as it is. */
const HOSTILE_LINE = `${ESC}]0;pwned\x07${ESC}[31mred`;
const hasColour = (s: string) => [31, 32, 33, 36].some((c) => s.includes(`${ESC}[${c}m`));

describe('inkwell job --wait on a local repository (real executor, scripted model, real git)', () => {
  let t: JobsTestApp;
  let s: Seeded;
  let repo: BareRepo;
  let model: ModelServer;
  let env: Record<string, string>;
  let conn: string[];
  let files = 0;

  beforeAll(async () => {
    repo = createBareRepo({ files: { 'README.md': '# Acme docs\n' } });
    // Every turn: one file written (a new one each time, so every turn commits), then the summary. The
    // delay keeps a job active long enough for a spinner to draw.
    model = await startModelServer([], {
      fallback: (req) => {
        const last = req.body.messages.at(-1);
        if (last?.role === 'tool') return { delayMs: 300, reply: { text: 'Add a page\n\nWrote one page.' } };
        files++;
        // A prompt asking for it gets a page whose text drives a terminal (a title change, a colour).
        const hostile = JSON.stringify(req.body.messages).includes('terminal escapes');
        const content = hostile ? `# Page ${files}\n${HOSTILE_LINE}\n` : `# Page ${files}\n`;
        return { delayMs: 300, reply: { toolCalls: [{ name: 'write_file', args: { path: `docs/page-${files}.md`, content } }] } };
      },
    });
    t = await startJobsApp('sqlite', {}, { OPENAI_COMPATIBLE_BASE_URL: model.baseUrl, INKWELL_POLL_INTERVAL_MS: '20' });
    const config = t.ctx.config;
    t.startWorker(createRunExecutor(config, t.ctx.logger), { releaseWorktree: (id) => releaseWorktree(config, id) });
    s = await t.seed({ repository: repo.dir, ref: 'main' });
    env = { INKWELL_API_KEY: s.adminKey };
    conn = ['--project', s.project.id, '--url', t.baseUrl];
  });
  afterAll(async () => {
    await t?.close();
    await model?.close();
    repo?.cleanup();
  });

  const head = (branch: string) => gitSync(['rev-parse', `refs/heads/${branch}`], repo.dir).trim();

  it('shows the branch and the commit it pushed (no pull request), as plain text when piped', async () => {
    const r = await run(['job', 'create', ...conn, 'Add a page', '--wait'], env);
    expect(r.code, r.stderr).toBe(0);
    const branch = /Created job job_\w+ on (\S+)/.exec(r.stderr)![1]!;
    const sha = head(branch);
    expect(r.stdout).toBe(`${branch} ${sha}\n`);
    expect(r.stderr).toContain(`completed: pushed commit ${sha.slice(0, 12)} to branch ${branch} of ${repo.dir} (no pull request)`);
    expect(r.stderr).not.toContain('no changes');
    // Not a terminal: no spinner, no colours, no escape sequences at all.
    expect(r.stdout + r.stderr).not.toContain(ESC);

    const id = /Created job (job_\w+)/.exec(r.stderr)![1]!;
    const m = await run(['job', 'message', id, ...conn, 'Add another page', '--wait', '--json'], env);
    expect(m.code, m.stderr).toBe(0);
    const job = JSON.parse(m.stdout);
    expect(job).toMatchObject({ id, status: 'completed', prLink: null, branch, commit: { sha: head(branch), branch, message: 'Add a page' } });
    expect(job.commit.sha).not.toBe(sha);
  });

  it('FORCE_COLOR colours the result when piped; still no spinner', async () => {
    const r = await run(['job', 'create', ...conn, 'Add a page', '--wait'], { ...env, FORCE_COLOR: '1' });
    expect(r.code, r.stderr).toBe(0);
    expect(stripVTControlCharacters(r.stderr)).toMatch(/✓ Job job_\w+ completed: pushed commit/);
    expect(r.stderr).toContain(`${GREEN_CHECK} Job`);
    expect(r.stderr).not.toContain('\r'); // no spinner
    expect(r.stdout).not.toContain(ESC);
  });

  it('on a terminal: a spinner and colours; NO_COLOR keeps the spinner and drops the colours', async () => {
    for (const noColor of [false, true]) {
      const term = runInTerminal(
        ['job', 'create', ...conn, 'Add a page', '--wait'],
        { ...env, TERM: 'xterm-256color', ...(noColor ? { NO_COLOR: '1' } : {}) },
        80,
      );
      const { code } = await term.exited;
      const out = term.output();
      expect(code, out).toBe(0);
      expect(out).toMatch(/completed: pushed commit [0-9a-f]{12} to branch inkwell\//);
      expect(out).toContain(`\r${ESC}[K`); // the spinner line, redrawn in place
      expect(hasColour(out)).toBe(!noColor);
      if (!noColor) expect(out).toContain(`${GREEN_CHECK} Job`);
    }
  });

  it('on a terminal of 0 columns: plain lines, a bounded output, the result; SIGTERM ends it at once', async () => {
    const term = runInTerminal(['job', 'create', ...conn, 'Add a page', '--wait'], { ...env, TERM: 'xterm-256color' }, 0);
    try {
      const { code } = await term.exited;
      const out = term.output();
      expect(code, out.slice(0, 2000)).toBe(0);
      expect(stripVTControlCharacters(out)).toMatch(/✓ Job job_\w+ completed: pushed commit [0-9a-f]{12} to branch inkwell\//);
      expect(out).not.toContain(`\r${ESC}[K`); // no spinner
      // A handful of lines: the created line, the steps, the result (the bug wrote megabytes).
      expect(out.length).toBeLessThan(4000);
    } finally {
      term.kill();
    }

    // While it waits (the model answers each request only after a delay), SIGTERM ends the CLI.
    const waiting = runInTerminal(['job', 'create', ...conn, 'Add a page', '--wait'], env, 0);
    try {
      await waitFor(async () => waiting.output().includes('Created job'), 60_000);
      process.kill(waiting.cliPid()!, 'SIGTERM');
      const { code } = await waiting.exited;
      // The shell reports a process killed by a signal as 128 + its number (SIGTERM: 15).
      expect(code).toBe(143);
    } finally {
      waiting.kill();
    }
  });

  it('job diff: the unified diff (exact when piped), --stat, --format json; colours and visible escapes on a terminal', async () => {
    const r = await run(['job', 'create', ...conn, 'Add a page with terminal escapes', '--wait'], env);
    expect(r.code, r.stderr).toBe(0);
    const id = /Created job (job_\w+)/.exec(r.stderr)![1]!;
    const api = await t.request('GET', `/v2/agent/${s.project.id}/job/${id}/diff`, { key: s.adminKey });
    const [file] = api.body.files;
    expect(api.body.files).toHaveLength(1);
    expect(file).toMatchObject({ status: 'added', additions: 2, deletions: 0 });

    // Piped: exactly the API's text (escape sequences and all: a saved patch must apply).
    const piped = await run(['job', 'diff', id, ...conn], env);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toBe(api.body.diff);
    expect(piped.stdout).toContain(`+${HOSTILE_LINE}\n`);

    const stat = await run(['job', 'diff', id, ...conn, '--stat'], env);
    expect(stat.stdout).toBe(` added    ${file.path} | +2 -0\n 1 file changed, 2 insertions(+), 0 deletions(-)\n`);
    const json = await run(['job', 'diff', id, ...conn, '--format', 'json'], env);
    expect(JSON.parse(json.stdout)).toEqual(api.body);
    const bad = await run(['job', 'diff', id, ...conn, '--format', 'html'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--format must be patch or json');
    const missing = await run(['job', 'diff', 'job_doesNotExist123', ...conn], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('job_not_found');

    // On a terminal: + lines green, the file's escape sequences shown as text, never obeyed; NO_COLOR: no colour.
    for (const noColor of [false, true]) {
      const term = runInTerminal(['job', 'diff', id, ...conn], { ...env, TERM: 'xterm-256color', ...(noColor ? { NO_COLOR: '1' } : {}) }, 120);
      const { code } = await term.exited;
      const out = term.output();
      expect(code, out).toBe(0);
      expect(out).not.toContain(`${ESC}]0;pwned`);
      expect(out).toContain('+\\x1b]0;pwned\\x07\\x1b[31mred');
      expect(out.includes(`${ESC}[32m+# Page`)).toBe(!noColor);
      if (noColor) expect(out).not.toContain(ESC);
    }
  });
});
