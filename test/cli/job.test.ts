// `inkwell job …` as a real child process against a real server and worker (injected executor).
import { execFile } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunError } from '../../src/agent/execute.ts';
import type { Seeded } from '../helpers/app.ts';
import { type JobsTestApp, startJobsApp } from '../helpers/jobs.ts';
import { fakeExecutor } from '../jobs/fake-executor.ts';

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
    expect(r.stderr).toContain('✓ committed abcdef12 Reword intro');
    expect(r.stderr).toContain('✓ pull request https://github.com/acme/docs/pull/3');
    expect(r.stdout).toBe('https://github.com/acme/docs/pull/3\n');
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
