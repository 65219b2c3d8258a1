// Issue 13's attack through the real worker, on both databases: a repository with relative symlinks
// (`docs/up -> ..`, `docs/deep/up2 -> ../..`) and a model whose one step calls, in parallel, move_file of
// the link to the worktree root together with write_file through the moved link into the data directory
// (the mirror's config among the targets). The job completes; nothing outside the worktree changes.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createRunExecutor } from '../../src/agent/execute.ts';
import { mirrorConfigText, mirrorPath, releaseWorktree } from '../../src/git/workspace.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { applyEnv, type BareRepo, createBareRepo, insteadOfEnv, readBranchFile } from '../helpers/git.ts';
import { type GitHubServer, startGitHubServer } from '../helpers/github-server.ts';
import { type JobsTestApp, startJobsApp, waitForStatus } from '../helpers/jobs.ts';
import { type ModelServer, startModelServer } from '../helpers/model-server.ts';

const GITHUB_URL = 'https://github.com/acme/docs';
const TOKEN = `ghp_${'C0nfineT0ken'.repeat(3)}`;
const MARKER = 'PWNED-by-a-symlink-race';
const ROUNDS = 20;

/** Files under `dir` whose name or content carries the marker (worktrees skipped: writes there are confined). */
function escapes(dir: string): string[] {
  const found: string[] = [];
  const visit = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      // Worktrees hold what the tools wrote inside; the database holds the model's conversation.
      if (p === path.join(dir, 'worktrees') || /\.db(-wal|-shm|-journal)?$/.test(e.name)) continue;
      if (e.name.includes('PWNED')) found.push(p);
      try {
        if (e.isDirectory()) visit(p);
        else if (e.isFile() && fs.statSync(p).size < 1_000_000 && fs.readFileSync(p, 'latin1').includes(MARKER)) found.push(p);
      } catch (err) {
        // git may still be tidying up after the job (an index.lock comes and goes): a file gone since the
        // directory was listed holds nothing. Anything else is a failure.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  };
  visit(dir);
  return found;
}

describeEachDialect('confinement through the real worker', (dialect) => {
  let t: JobsTestApp | null = null;
  let repo: BareRepo;
  let model: ModelServer;
  let github: GitHubServer;
  let restoreEnv: () => void;

  afterEach(async () => {
    await t?.close();
    t = null;
    restoreEnv?.();
    await model?.close();
    await github?.close();
    repo?.cleanup();
  });

  it('parallel move_file of a symlink + write_file through it: the job completes and nothing outside the worktree changes', async () => {
    repo = createBareRepo({
      files: {
        'README.md': '# Docs\n',
        'docs/intro.md': '# Intro\n',
        ...Object.fromEntries(Array.from({ length: ROUNDS }, (_, i) => [`docs/page-${i}.md`, `${MARKER}\n`])),
      },
      symlinks: { 'docs/up': '..', 'docs/deep/up2': '../..' },
    });
    github = await startGitHubServer({ token: TOKEN });
    restoreEnv = applyEnv(insteadOfEnv({ [GITHUB_URL]: repo.dir }));
    model = await startModelServer([]);
    t = await startJobsApp(
      dialect,
      {},
      {
        OPENAI_COMPATIBLE_BASE_URL: model.baseUrl,
        GITHUB_API_URL: github.apiUrl,
        GITHUB_TOKEN: TOKEN,
        INKWELL_POLL_INTERVAL_MS: '20',
        INKWELL_LEASE_MS: '5000',
        // The writes that land inside the worktree change 42 files: over the default changed-files budget, whose
        // finding would ask the scripted model for a repair round.
        INKWELL_MAX_CHANGED_FILES: '1000',
        // The moved pages are unrelated to the request (it names the intro): the end of the turn reverts them
        // (through the confined tree) without a repair round the script has no answer for.
        INKWELL_CHECK_REPAIR_ROUNDS: '0',
      },
    );
    const config = t.ctx.config;
    const mirrorRel = path.relative(config.dataDir, mirrorPath(config, GITHUB_URL));
    // From the worktree (<data>/worktrees/<job>), `d -> ../..` would be the data directory itself.
    const through = ['docs/up/docs/up/d', 'docs/up/d', 'd'];
    const calls = [];
    for (let i = 0; i < ROUNDS; i++) {
      calls.push({ name: 'move_file', args: { from: 'docs/deep/up2', to: 'd' } });
      for (const via of through) {
        calls.push({ name: 'write_file', args: { path: `${via}/${mirrorRel}/config`, content: `[core]\n\tfsmonitor = echo ${MARKER}\n` } });
        calls.push({ name: 'write_file', args: { path: `${via}/PWNED-${i}.md`, content: `${MARKER}\n` } });
        calls.push({ name: 'move_file', args: { from: `docs/page-${i}.md`, to: `${via}/PWNED-moved-${i}.md` } });
      }
    }
    calls.push({ name: 'edit_file', args: { path: 'docs/intro.md', old_string: '# Intro', new_string: '# Introduction' } });
    model.push({ toolCalls: calls }, { text: 'Rename the intro heading' });
    t.startWorker(createRunExecutor(config, t.ctx.logger), { releaseWorktree: (id) => releaseWorktree(config, id) });
    const s = await t.seed({ repository: GITHUB_URL, ref: 'main' });

    const c = await t.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.adminKey, body: { prompt: 'Rename the intro heading' } });
    expect(c.status).toBe(201);
    const job = await waitForStatus(t, s.adminKey, s.project.id, c.body.id, ['completed', 'failed', 'archived']);
    expect(job.status).toBe('completed');

    // Nothing escaped: no marker anywhere in the data directory outside the worktrees, nor next to the origin.
    expect(escapes(config.dataDir)).toEqual([]);
    expect(escapes(path.dirname(repo.dir))).toEqual([]);
    expect(fs.readFileSync(path.join(mirrorPath(config, GITHUB_URL), 'config'), 'utf8')).toBe(mirrorConfigText(GITHUB_URL));
    // The link was never moved to where it points out of the worktree; the in-repo edit landed.
    const events = (await t.request('GET', `/v2/agent/${s.project.id}/job/${job.id}/events`, { key: s.adminKey })).body.events as any[];
    const linkMoves = new Set(
      events.filter((e) => e.type === 'tool_call' && e.data.tool === 'move_file' && e.data.args.from === 'docs/deep/up2').map((e) => e.data.toolCallId),
    );
    expect(linkMoves.size).toBe(ROUNDS);
    const moveResults = events.filter((e) => e.type === 'tool_result' && linkMoves.has(e.data.toolCallId));
    expect(moveResults.map((e) => e.data.ok)).toEqual(Array(ROUNDS).fill(false));
    expect(readBranchFile(repo, job.branch, 'docs/deep/up2')).toBe('../..');
    expect(readBranchFile(repo, job.branch, 'docs/intro.md')).toBe('# Introduction\n');
  });
});
