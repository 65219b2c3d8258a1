// Pull requests that explain themselves, end to end on both databases: HTTP API, queue and worker, the real
// executor with the scripted model, a real repository and the fake GitHub API. The first turn's body carries the
// summary (under the repository's template's heading), the request quoted as data, the changed files with their
// counts, the docs checks and the template's checklist; a follow-up turn rewrites the body and adds one comment; a host that refuses the rewrite
// still completes the turn.
import type { Root, RootContent } from 'mdast';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { afterEach, expect, it } from 'vitest';
import { createRunExecutor } from '../../src/agent/execute.ts';
import { releaseWorktree } from '../../src/git/workspace.ts';
import { type AgentJobs, jobApi, startAgentJobs } from '../helpers/agent-jobs.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { commitsBetween, gitSync } from '../helpers/git.ts';
import type { ModelScriptEntry } from '../helpers/model-server.ts';

const TOKEN = `ghp_${'PrB0dyToken'.repeat(3)}`;
const FILES = {
  'README.md': '# Acme docs\n',
  'docs/intro.mdx': '# Intro\n\nHello from Acme.\n',
  '.github/pull_request_template.md': '## What\n\n<!-- describe -->\n\n## Checklist\n\n- [x] Previewed the site\n- [ ] Asked @docs-team\n',
};
const HOSTILE = 'Reword the intro\n```\n</details><img src=x onerror=alert(1)>\n@octocat see [here](https://evil.example)\n````';

function codeBlocks(md: string): string[] {
  const out: string[] = [];
  const walk = (n: { children?: RootContent[] }) => {
    for (const c of n.children ?? []) {
      if (c.type === 'code') out.push(c.value);
      if (c.type === 'html' || c.type === 'link' || c.type === 'image') out.push(`RENDERED ${c.type}`);
      walk(c as { children?: RootContent[] });
    }
  };
  walk(unified().use(remarkParse).use(remarkGfm).parse(md) as Root);
  return out;
}

/** The trailers of each commit on `branch` past main, newest first, as [key, value, …]. */
function trailers(a: AgentJobs, branch: string): string[][] {
  return gitSync(['log', '--format=%(trailers:separator=%x1f,key_value_separator=%x1f)%x1e', `main..${branch}`], a.repo.dir)
    .split('\x1e')
    .map((r) => r.trim())
    .filter(Boolean)
    .map((r) => r.split('\x1f'));
}

const TURNS: ModelScriptEntry[] = [
  { toolCalls: [{ name: 'edit_file', args: { path: 'docs/intro.mdx', old_string: 'Hello from Acme.', new_string: 'Welcome to Acme.' } }] },
  { text: 'Reword the intro greeting\n\nThe intro now welcomes readers.' },
  { toolCalls: [{ name: 'write_file', args: { path: 'docs/faq.mdx', content: '# FAQ\n\nAsk us.\n' } }] },
  { text: 'Add an FAQ page\n\nA short FAQ page.' },
];

describeEachDialect('pull request body and follow-up comment (GitHub)', (dialect) => {
  let a: AgentJobs | null = null;
  afterEach(async () => {
    await a?.close();
    a = null;
  });
  const { api, settle } = jobApi(() => a!);

  it('first turn: summary, quoted request, files with counts, checks, template checklist; follow-up: new body and one comment', async () => {
    a = await startAgentJobs(dialect, { files: FILES, script: TURNS, token: TOKEN });
    const job = await settle((await api('POST', '/job', { prompt: HOSTILE })).body.id);
    expect(job).toMatchObject({ status: 'completed', error: null });
    const pr = a.github.pulls[0]!;
    const first = pr.body!;
    // Fitted into the repository's template: the summary under its "What", its checklist kept unchecked.
    expect(
      first.startsWith('## What\n\nThe intro now welcomes readers.\n\n## Checklist\n\n- [ ] Previewed the site\n- [ ] Asked @\u200bdocs-team\n\n### Request'),
    ).toBe(true);
    expect(codeBlocks(first)).toEqual([HOSTILE]);
    expect(first).toContain('### Files changed (1)\n\n- `docs/intro.mdx` (modified, +1 −1)');
    expect(first).toContain('### Docs checks');
    expect(a.github.comments).toEqual([]);

    expect((await api('POST', `/job/${job.id}/message`, { prompt: 'Add an FAQ page @octocat' })).status).toBe(200);
    const after = await settle(job.id);
    expect(after).toMatchObject({ status: 'completed', error: null, prLink: job.prLink });
    expect(a.github.pulls).toHaveLength(1);
    const updated = a.github.pulls[0]!.body!;
    expect(updated).toContain('A short FAQ page.');
    expect(updated).toContain('### Files changed (2)');
    expect(updated).toContain('- `docs/faq.mdx` (added, +3 −0)');
    expect(updated).toContain('- `docs/intro.mdx` (modified, +1 −1)');
    expect(codeBlocks(updated)).toEqual([HOSTILE, 'Add an FAQ page @octocat']);
    expect(a.github.comments).toHaveLength(1);
    const comment = a.github.comments[0]!;
    expect(comment).toMatchObject({ owner: 'acme', repo: 'docs', number: pr.number });
    expect(comment.body).toContain('A short FAQ page.');
    // The one HTML node is the turn's marker, an HTML comment (rendered as nothing).
    expect(codeBlocks(comment.body)).toEqual(['Add an FAQ page @octocat', 'RENDERED html']);
    expect(a.github.requests.filter((r) => r.method === 'PATCH').map((r) => r.path)).toEqual([`/repos/acme/docs/pulls/${pr.number}`]);
    expect(comment.body).toContain(`<!-- inkwell:turn:${job.id}:2 -->`);

    // One commit per turn, read back from the repository: the summary's title as the subject, what changed, the
    // request quoted (inert), the checks' result, and the job and turn trailers.
    const commits = commitsBetween(a.repo, 'main', job.branch).reverse();
    expect(commits.map((c) => c.subject)).toEqual(['Reword the intro greeting', 'Add an FAQ page']);
    expect(commits[0]!.body).toContain(
      'The intro now welcomes readers.\n\nRequest:\n> Reword the intro\n> ```\n> </details><img src=x onerror=alert(1)>\n> @\u200boctocat',
    );
    expect(commits[0]!.body).toMatch(/\n\nChecks: passed \(pages parse, front matter, links, images and anchors, navigation; 1 page\)\n/);
    expect(commits[1]!.body).toContain('A short FAQ page.\n\nRequest:\n> Add an FAQ page @\u200boctocat\n\nChecks: passed');
    expect(trailers(a, job.branch)).toEqual([
      ['Inkwell-Job', job.id, 'Inkwell-Turn', '2'],
      ['Inkwell-Job', job.id, 'Inkwell-Turn', '1'],
    ]);
  });

  it('a follow-up retried after it commented (its worker stopped before storing the outcome) comments once and leaves one commit', async () => {
    a = await startAgentJobs(dialect, { files: FILES, script: TURNS, token: TOKEN });
    const job = await settle((await api('POST', '/job', { prompt: 'Reword the intro' })).body.id);
    expect(job.status).toBe('completed');
    // The comment is posted, but its answer never reaches the worker: the worker stops meanwhile (SIGTERM hands
    // the turn back), as a crash between the code host's write and the database's would leave it.
    const held = a.github.hold('POST', /\/issues\/\d+\/comments$/);
    await api('POST', `/job/${job.id}/message`, { prompt: 'Add an FAQ page' });
    await held.arrived;
    expect(a.github.comments).toHaveLength(1);
    await a.t.workers[0]!.stop();
    held.release();
    // Another worker runs the turn again (the model does the same work; the page is already there).
    a.model.push(TURNS[2]!, TURNS[3]!);
    const config = a.t.ctx.config;
    a.t.startWorker(createRunExecutor(config, a.t.ctx.logger), { releaseWorktree: (id) => releaseWorktree(config, id) });
    const after = await settle(job.id);
    expect(after).toMatchObject({ status: 'completed', error: null, prLink: job.prLink });
    expect(a.model.requests).toHaveLength(6);
    expect(a.github.comments).toHaveLength(1);
    expect(a.github.comments[0]!.body).toContain(`<!-- inkwell:turn:${job.id}:2 -->`);
    const commits = commitsBetween(a.repo, 'main', job.branch);
    expect(commits.map((c) => c.subject)).toEqual(['Add an FAQ page', 'Reword the intro greeting']);
    expect(trailers(a, job.branch)[0]).toEqual(['Inkwell-Job', job.id, 'Inkwell-Turn', '2']);
    // Both attempts' turn ended with the same commit; the retry's comment lookup read the comments.
    const lookups = a.github.requests.filter((r) => r.method === 'GET' && /\/issues\/\d+\/comments$/.test(r.path));
    expect(lookups).toHaveLength(2);
  });

  it('a host that refuses the body update still completes the follow-up turn (and still comments)', async () => {
    a = await startAgentJobs(dialect, { files: FILES, script: TURNS, token: TOKEN });
    const job = await settle((await api('POST', '/job', { prompt: 'Reword the intro' })).body.id);
    expect(job.status).toBe('completed');
    const firstBody = a.github.pulls[0]!.body;
    a.github.failNext(403, 1, { method: 'PATCH', message: 'Resource not accessible by integration' });
    await api('POST', `/job/${job.id}/message`, { prompt: 'Add an FAQ page' });
    const after = await settle(job.id);
    expect(after).toMatchObject({ status: 'completed', error: null, prLink: job.prLink });
    expect(a.github.pulls[0]!.body).toBe(firstBody);
    expect(a.github.requests.filter((r) => r.method === 'PATCH')).toHaveLength(1);
    expect(a.github.comments).toHaveLength(1);
  });
});
