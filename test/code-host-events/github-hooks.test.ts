// GitHub webhooks → jobs, end to end on both databases: a signed issue comment that mentions @inkwell starts
// a job (the real executor, the scripted model, a real repository, the fake GitHub API) which opens a pull
// request; a review with a line comment on it continues the same job on the same branch and pull request; a
// stop comment archives it. Redeliveries, bad signatures, other repositories, commenters without write
// access and bots create nothing.
import crypto from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { OWN_MARKER } from '../../src/code-host-events/mention.ts';
import { enableCodeHostHook } from '../../src/code-host-events/service.ts';
import { type AgentJobs, GITHUB_URL, startAgentJobs } from '../helpers/agent-jobs.ts';
import type { Seeded } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { type BareRepo, readBranchFile } from '../helpers/git.ts';
import type { GitHubServer } from '../helpers/github-server.ts';
import { type JobsTestApp, waitFor, waitForStatus } from '../helpers/jobs.ts';
import { type ModelScriptEntry, type ModelServer, requestText } from '../helpers/model-server.ts';
import { DRY_RUN_TURNS } from './scripts.ts';

const TOKEN = `ghp_${'H00kT0kenValue'.repeat(3)}`;
const repository = { full_name: 'acme/docs', html_url: GITHUB_URL };
const writer = { login: 'octocat', type: 'User' };

describeEachDialect('GitHub webhooks → jobs', (dialect) => {
  let stack: AgentJobs | null = null;
  let t: JobsTestApp | null = null;
  let repo: BareRepo;
  let model: ModelServer;
  let github: GitHubServer;
  let s: Seeded;
  let secret: string;
  let deliveries = 0;

  async function setup(script: ModelScriptEntry[]) {
    stack = await startAgentJobs(dialect, {
      files: { 'README.md': '# Acme docs\n', 'docs/cli.md': '# CLI\n\nRun `acme build`.\n' },
      script,
      fallback: { text: 'Nothing to do.' },
      token: TOKEN,
      env: { INKWELL_SECRET_KEY: 'k'.repeat(40), INKWELL_PUBLIC_URL: 'https://inkwell.acme.example' },
    });
    ({ t, repo, model, github, s } = stack);
    github.permissions.set('octocat', 'write');
    github.permissions.set('reader', 'read');
    const hook = await enableCodeHostHook(t.ctx, s.project.id);
    expect(hook.url).toBe(`https://inkwell.acme.example/v1/hooks/github/${s.project.id}`);
    secret = hook.secret;
  }

  afterEach(async () => {
    await stack?.close();
    stack = null;
    t = null;
  });

  /** Posts a delivery signed with `key` (default: the project's secret); returns the response. */
  function deliver(event: string, payload: unknown, opts: { id?: string; key?: string | null; projectId?: string } = {}) {
    const raw = Buffer.from(JSON.stringify(payload));
    const id = opts.id ?? `d-${++deliveries}`;
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': id };
    const key = opts.key === undefined ? secret : opts.key;
    if (key !== null) headers['x-hub-signature-256'] = `sha256=${crypto.createHmac('sha256', key).update(raw).digest('hex')}`;
    return t!.request('POST', `/v1/hooks/github/${opts.projectId ?? s.project.id}`, { raw, headers });
  }

  const issueComment = (body: string, user: { login: string; type: string } = writer, extra: object = {}) => ({
    action: 'created',
    repository,
    issue: { number: 12, title: 'Document the --dry-run flag', body: 'The CLI page does not mention it.', html_url: `${GITHUB_URL}/issues/12` },
    comment: { id: 901, body, user, html_url: `${GITHUB_URL}/issues/12#issuecomment-901` },
    ...extra,
  });
  const jobs = async () => (await t!.request('GET', `/v2/agent/${s.project.id}/jobs`, { key: s.adminKey })).body.jobs as { id: string }[];
  const settle = (id: string) => waitForStatus(t!, s.adminKey, s.project.id, id, ['completed', 'failed', 'archived']);
  /** Inkwell's reply in thread `number` that contains `text`, once it is there. */
  const replyIn = (number: number, text: string) => waitFor(async () => github.comments.find((c) => c.number === number && c.body.includes(text)));
  /** The sha of the `nth` commit event of the job. */
  const commitOf = async (jobId: string, nth: number): Promise<string> => {
    const events = (await t!.request('GET', `/v2/agent/${s.project.id}/job/${jobId}/events`, { key: s.adminKey })).body.events as { type: string; data: any }[];
    return events.filter((e) => e.type === 'commit')[nth - 1]!.data.sha;
  };

  it('an issue comment starts a job that opens a pull request; a review on it continues the same job and pull request; a stop comment archives it', async () => {
    await setup(DRY_RUN_TURNS);
    const started = await deliver('issue_comment', issueComment('@inkwell please document the new `--dry-run` flag'));
    expect(started.status, started.text).toBe(202);
    expect(started.body).toMatchObject({ outcome: 'job_started', jobId: expect.stringMatching(/^job_/), reason: null });
    const jobId = started.body.jobId as string;
    // Acknowledged at once: a reaction and a reply that links the job.
    expect(github.reactions).toEqual([{ owner: 'acme', repo: 'docs', commentId: 901, content: 'eyes' }]);
    expect(github.comments[0]).toMatchObject({ number: 12, body: expect.stringContaining(`https://inkwell.acme.example/jobs/${jobId}`) });
    // The prompt quotes the comment and the issue as data.
    const firstRequest = await (async () => {
      const job = await settle(jobId);
      expect(job).toMatchObject({ status: 'completed', error: null });
      return requestText(model.requests[0]!);
    })();
    expect(firstRequest).toContain('quoted data written by people on the code host');
    expect(firstRequest).toContain('The CLI page does not mention it.');
    expect(github.pulls).toHaveLength(1);
    const prUrl = github.htmlUrl(github.pulls[0]!);
    const job = (await t!.request('GET', `/v2/agent/${s.project.id}/job/${jobId}`, { key: s.adminKey })).body;
    expect(job.prLink).toBe(prUrl);
    // When the turn ends Inkwell replies in the issue: the pull request, the commit and the summary, as its own reply.
    const done = await replyIn(12, 'Done:');
    expect(done.body).toContain(OWN_MARKER);
    expect(done.body).toContain(prUrl);
    expect(done.body).toContain((await commitOf(jobId, 1)).slice(0, 12));
    expect(done.body).toContain('> Document --dry-run');

    // A redelivery of the first event does nothing.
    const again = await deliver('issue_comment', issueComment('@inkwell please document the new `--dry-run` flag'), { id: 'd-1' });
    expect(again.body).toMatchObject({ outcome: 'duplicate', jobId });
    expect(await jobs()).toHaveLength(1);

    // A review whose line comment mentions @inkwell: a follow-up on the same job, branch and pull request.
    github.reviewComments.set(4401, [{ path: 'docs/cli.md', line: 5, start_line: null, body: '@inkwell say what it prints', diff_hunk: '@@ -3 +3,3 @@' }]);
    const review = await deliver('pull_request_review', {
      action: 'submitted',
      repository,
      pull_request: { number: github.pulls[0]!.number, title: github.pulls[0]!.title, body: '', html_url: prUrl },
      review: { id: 4401, body: 'One change, please.', state: 'commented', user: writer, html_url: `${prUrl}#pullrequestreview-4401` },
    });
    expect(review.body).toMatchObject({ outcome: 'message_queued', jobId });
    const after = await settle(jobId);
    expect(after).toMatchObject({ status: 'completed', prLink: prUrl, branch: job.branch });
    expect(github.pulls).toHaveLength(1);
    expect(readBranchFile(repo, job.branch, 'docs/cli.md')).toContain('prints the files it would write, and writes none.');
    const followUp = requestText(model.requests[2]!);
    expect(followUp).toContain('docs/cli.md');
    expect(followUp).toContain('@inkwell say what it prints');
    // The follow-up came from the pull request: its turn's reply goes there.
    const doneOnPull = await replyIn(github.pulls[0]!.number, 'Done:');
    expect(doneOnPull.body).toContain((await commitOf(jobId, 2)).slice(0, 12));
    expect(doneOnPull.body).toContain('> Say what --dry-run prints');

    // A comment on the pull request from someone without write access does nothing; a writer's stop archives.
    const pullComment = (body: string, user = writer) =>
      issueComment(body, user, { issue: { number: github.pulls[0]!.number, title: 't', body: '', html_url: prUrl, pull_request: { html_url: prUrl } } });
    const refused = await deliver('issue_comment', pullComment('@inkwell stop', { login: 'reader', type: 'User' }));
    expect(refused.body).toMatchObject({ outcome: 'ignored', reason: 'reader has no write access to acme/docs' });
    const stopped = await deliver('issue_comment', pullComment('@inkwell stop'));
    expect(stopped.body).toMatchObject({ outcome: 'job_archived', jobId });
    expect((await t!.request('GET', `/v2/agent/${s.project.id}/job/${jobId}`, { key: s.adminKey })).body.status).toBe('archived');
  });

  it('a turn that fails replies with its error in the thread; a reply GitHub refuses is logged and stops nothing', async () => {
    // A model that never finishes, under the project's default budget of one step per turn.
    await setup(Array.from({ length: 6 }, () => ({ toolCalls: [{ name: 'list_files', args: {} }] })));
    await t!.ctx.projects.changeBudget(s.project.id, { maxSteps: '1' });
    const started = await deliver('issue_comment', issueComment('@inkwell document everything'));
    const jobId = started.body.jobId as string;
    expect((await settle(jobId)).error.code).toBe('budget_exhausted');
    const failed = await replyIn(12, 'Could not finish');
    expect(failed.body).toMatch(/^<!-- inkwell -->\n/);
    expect(failed.body).toContain('`budget_exhausted`');
    expect(failed.body).toContain('steps: 1 of 1 used');
    expect(failed.body).toContain(`https://inkwell.acme.example/jobs/${jobId}`);

    // GitHub refuses the next reply (422, not retried): the turn's outcome is stored all the same, the worker goes on.
    const replies = () => github.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/issues/12/comments')).length;
    const before = replies();
    github.failNext(422, 1, { method: 'POST', message: 'Validation Failed' });
    const message = (body: string) => t!.request('POST', `/v2/agent/${s.project.id}/job/${jobId}/message`, { key: s.adminKey, body: { prompt: body } });
    expect((await message('Try again')).status).toBe(200);
    await waitFor(async () => replies() === before + 1);
    expect((await settle(jobId)).error.code).toBe('budget_exhausted');
    expect(github.comments.filter((c) => c.body.includes('Could not finish'))).toHaveLength(1);
    expect((await message('Once more')).status).toBe(200);
    await waitFor(async () => github.comments.filter((c) => c.body.includes('Could not finish')).length === 2);
  });

  it('creates nothing for bad signatures, other repositories, readers, bots, its own replies or comments without a mention', async () => {
    await setup([]);
    const mention = issueComment('@inkwell document it');
    const cases: [string, Promise<{ status: number; body: any }>, number, string | null][] = [
      ['unsigned', deliver('issue_comment', mention, { key: null }), 401, 'unauthorized'],
      ['wrong secret', deliver('issue_comment', mention, { key: 'not-the-secret' }), 401, 'unauthorized'],
      ['another project', deliver('issue_comment', mention, { projectId: 'prj_nope' }), 401, 'unauthorized'],
      [
        'another repository',
        deliver('issue_comment', { ...mention, repository: { full_name: 'evil/docs', html_url: 'https://github.com/evil/docs' } }),
        403,
        'repository_not_allowed',
      ],
    ];
    for (const [what, res, status, code] of cases) {
      const r = await res;
      expect(r.status, what).toBe(status);
      expect(r.body.code, what).toBe(code);
    }
    // An unknown project answers exactly like a wrong signature: nothing tells which project ids exist.
    const [unknown, wrong] = await Promise.all([
      deliver('issue_comment', mention, { projectId: 'prj_nope' }),
      deliver('issue_comment', mention, { key: 'not-the-secret' }),
    ]);
    expect(unknown.body.message).toBe(wrong.body.message);
    const ignored: [string, unknown, RegExp][] = [
      ['reader', issueComment('@inkwell document it', { login: 'reader', type: 'User' }), /no write access/],
      ['stranger', issueComment('@inkwell document it', { login: 'stranger', type: 'User' }), /no write access/],
      ['bot', issueComment('@inkwell document it', { login: 'renovate[bot]', type: 'Bot' }), /is a bot/],
      ['own reply', issueComment('<!-- inkwell -->\nOn it: @inkwell started a job'), /own comment/],
      ['no mention', issueComment('looks good to me'), /does not mention @inkwell/],
      ['edited', { ...mention, action: 'edited' }, /only new comments/],
    ];
    for (const [what, payload, reason] of ignored) {
      const r = await deliver('issue_comment', payload);
      expect(r.status, what).toBe(202);
      expect(r.body.outcome, what).toBe('ignored');
      expect(r.body.reason, what).toMatch(reason);
    }
    expect((await deliver('ping', { zen: 'Keep it logically awesome.', hook_id: 1 })).body.outcome).toBe('ping');
    expect((await deliver('push', { repository })).body.outcome).toBe('ignored');
    // Neither bots nor comments without a mention cost a permission lookup.
    expect(github.requests.filter((r) => r.path.endsWith('/permission')).map((r) => r.path.split('/')[5])).toEqual(['reader', 'stranger']);
    expect(await jobs()).toEqual([]);
    expect(github.comments).toEqual([]);

    // Malformed deliveries: a 400 naming the header or the body.
    const raw = Buffer.from('not json');
    const signature = `sha256=${crypto.createHmac('sha256', secret).update(raw).digest('hex')}`;
    const notJson = await t!.request('POST', `/v1/hooks/github/${s.project.id}`, {
      raw,
      headers: { 'content-type': 'application/json', 'x-github-event': 'issue_comment', 'x-github-delivery': 'x1', 'x-hub-signature-256': signature },
    });
    expect(notJson.status).toBe(400);
    expect(notJson.body.code).toBe('invalid_json');
    const noId = await deliver('issue_comment', mention, { id: '' });
    expect(noId.status).toBe(400);
    expect(JSON.stringify(noId.body)).toContain('x-github-delivery');

    // A new secret replaces the old one at once.
    const rotated = await enableCodeHostHook(t!.ctx, s.project.id);
    expect(rotated.secret).not.toBe(secret);
    expect((await deliver('ping', {})).status).toBe(401);
    secret = rotated.secret;
    expect((await deliver('ping', {})).status).toBe(202);
  });

  it('answers 503 when GitHub cannot be asked, and acts on the redelivery', async () => {
    await setup([]);
    github.failNext(500, 3);
    const failed = await deliver('issue_comment', issueComment('@inkwell document it'), { id: 'flaky-1' });
    expect(failed.status, failed.text).toBe(503);
    expect(failed.body.code).toBe('code_host_unavailable');
    expect(failed.text).not.toContain(TOKEN);
    expect(await jobs()).toEqual([]);
    const redelivered = await deliver('issue_comment', issueComment('@inkwell document it'), { id: 'flaky-1' });
    expect(redelivered.body).toMatchObject({ outcome: 'job_started' });
    expect(await jobs()).toHaveLength(1);
  });
});
