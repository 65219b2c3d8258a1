// GitLab webhooks → jobs, end to end on both databases: a comment that mentions @inkwell on an issue (with the
// project's secret as X-Gitlab-Token) starts a job (the real executor, the scripted model, a real repository,
// the fake GitLab API) which opens a merge request; a comment on a line of its diff continues the same job on
// the same branch and merge request; a stop comment archives it. Retries, wrong tokens, other projects,
// members below Developer, non-members, bots and system notes create nothing.
import { afterEach, expect, it } from 'vitest';
import { createRunExecutor } from '../../src/agent/execute.ts';
import { enableCodeHostHook } from '../../src/code-host-events/service.ts';
import { releaseWorktree } from '../../src/git/workspace.ts';
import type { Seeded } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { applyEnv, type BareRepo, createBareRepo, insteadOfEnv, readBranchFile } from '../helpers/git.ts';
import { type GitLabServer, startGitLabServer } from '../helpers/gitlab-server.ts';
import { type JobsTestApp, startJobsApp, waitFor, waitForStatus } from '../helpers/jobs.ts';
import { type ModelScriptEntry, type ModelServer, requestText, startModelServer } from '../helpers/model-server.ts';
import { DRY_RUN_TURNS } from './scripts.ts';

const TOKEN = `glpat-${'H00kT0ken'.repeat(3)}`;
const DEVELOPER = { id: 7, username: 'octocat', name: 'Octo Cat' };
const REPORTER = { id: 8, username: 'reader', name: 'Reader' };

describeEachDialect('GitLab webhooks → jobs', (dialect) => {
  let t: JobsTestApp | null = null;
  let repo: BareRepo;
  let model: ModelServer;
  let gitlab: GitLabServer;
  let restoreEnv: () => void;
  let s: Seeded;
  let secret: string;
  let webUrl: string;

  async function setup(script: ModelScriptEntry[]) {
    repo = createBareRepo({ files: { 'README.md': '# Acme docs\n', 'docs/cli.md': '# CLI\n\nRun `acme build`.\n' } });
    model = await startModelServer(script, { fallback: { text: 'Nothing to do.' } });
    gitlab = await startGitLabServer({ token: TOKEN });
    gitlab.members.set(DEVELOPER.id, 30);
    gitlab.members.set(REPORTER.id, 20);
    webUrl = `${gitlab.url}/acme/docs`;
    restoreEnv = applyEnv(insteadOfEnv({ [`${webUrl}.git`]: repo.dir }));
    t = await startJobsApp(
      dialect,
      {},
      {
        OPENAI_COMPATIBLE_BASE_URL: model.baseUrl,
        GITLAB_URL: gitlab.url,
        GITLAB_TOKEN: TOKEN,
        INKWELL_SECRET_KEY: 'k'.repeat(40),
        INKWELL_PUBLIC_URL: 'https://inkwell.acme.example',
        INKWELL_POLL_INTERVAL_MS: '20',
        INKWELL_LEASE_MS: '5000',
      },
    );
    const config = t.ctx.config;
    t.startWorker(createRunExecutor(config, t.ctx.logger), { releaseWorktree: (id) => releaseWorktree(config, id) });
    s = await t.seed({ repository: `${webUrl}.git`, ref: 'main' });
    const hook = await enableCodeHostHook(t.ctx, s.project.id);
    expect(hook).toMatchObject({ url: `https://inkwell.acme.example/v1/hooks/gitlab/${s.project.id}`, host: 'gitlab', events: ['Comments'] });
    secret = hook.secret;
  }

  afterEach(async () => {
    await t?.close();
    t = null;
    restoreEnv?.();
    await model?.close();
    await gitlab?.close();
    repo?.cleanup();
  });

  /** Posts a Note Hook delivery with `token` (default: the project's secret) and an Idempotency-Key unless null. */
  function deliver(payload: unknown, opts: { key?: string | null; token?: string | null; event?: string; projectId?: string } = {}) {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-gitlab-event': opts.event ?? 'Note Hook' };
    const token = opts.token === undefined ? secret : opts.token;
    if (token !== null) headers['x-gitlab-token'] = token;
    if (opts.key !== null) headers['idempotency-key'] = opts.key ?? crypto.randomUUID();
    return t!.request('POST', `/v1/hooks/gitlab/${opts.projectId ?? s.project.id}`, { raw: Buffer.from(JSON.stringify(payload)), headers });
  }

  const project = () => ({ id: 5, path_with_namespace: 'acme/docs', web_url: webUrl });
  let noteIds = 100;
  const issueNote = (note: string, user: object = DEVELOPER, attributes: object = {}) => ({
    object_kind: 'note',
    event_type: 'note',
    user,
    project: project(),
    object_attributes: {
      id: ++noteIds,
      note,
      noteable_type: 'Issue',
      system: false,
      action: 'create',
      url: `${webUrl}/-/issues/12#note_${noteIds}`,
      ...attributes,
    },
    issue: { iid: 12, title: 'Document the --dry-run flag', description: 'The CLI page does not mention it.', url: `${webUrl}/-/issues/12` },
  });
  const mrNote = (note: string, mrUrl: string, attributes: object = {}, user: object = DEVELOPER) => ({
    ...issueNote(note, user, { noteable_type: 'MergeRequest', url: `${mrUrl}#note_${noteIds + 1}`, ...attributes }),
    issue: undefined,
    merge_request: { iid: 1, title: 'Document --dry-run', description: '', url: mrUrl },
  });
  const jobs = async () => (await t!.request('GET', `/v2/agent/${s.project.id}/jobs`, { key: s.adminKey })).body.jobs as { id: string }[];
  const settle = (id: string) => waitForStatus(t!, s.adminKey, s.project.id, id, ['completed', 'failed', 'archived']);
  /** Inkwell's turn-end reply on the issue or merge request `iid`, once it is there. */
  const doneIn = (noteable: string, iid: number) =>
    waitFor(async () => gitlab.notes.find((n) => n.noteable === noteable && n.iid === iid && n.body.includes('Done:')));

  it('an issue comment starts a job that opens a merge request; a diff-line comment continues it; a stop comment archives it', async () => {
    await setup(DRY_RUN_TURNS);
    const first = issueNote('@inkwell please document the new `--dry-run` flag');
    const started = await deliver(first, { key: 'evt-1' });
    expect(started.status, started.text).toBe(202);
    expect(started.body).toMatchObject({ deliveryId: 'evt-1', outcome: 'job_started', jobId: expect.stringMatching(/^job_/) });
    const jobId = started.body.jobId as string;
    // Acknowledged at once: an award emoji on the comment and a reply that links the job.
    expect(gitlab.awards).toEqual([{ projectPath: 'acme/docs', noteable: 'issues', iid: 12, noteId: first.object_attributes.id, name: 'eyes' }]);
    expect(gitlab.notes[0]).toMatchObject({ noteable: 'issues', iid: 12, body: expect.stringContaining(`https://inkwell.acme.example/jobs/${jobId}`) });
    const job = await settle(jobId);
    expect(job).toMatchObject({ status: 'completed', error: null });
    expect(requestText(model.requests[0]!)).toContain('The CLI page does not mention it.');
    expect(gitlab.mergeRequests).toHaveLength(1);
    const mrUrl = gitlab.webUrl({ projectPath: 'acme/docs', iid: 1 });
    expect(job.prLink).toBe(mrUrl);
    // When the turn ends Inkwell replies in the issue with the merge request.
    expect((await doneIn('issues', 12)).body).toContain(`merge request: ${mrUrl}`);

    // A retry (same Idempotency-Key) does nothing; without the header, the same body twice acts once.
    expect((await deliver(first, { key: 'evt-1' })).body).toMatchObject({ outcome: 'duplicate', jobId });
    const plain = issueNote('looks fine');
    expect((await deliver(plain, { key: null })).body.outcome).toBe('ignored');
    expect((await deliver(plain, { key: null })).body.outcome).toBe('duplicate');
    expect(await jobs()).toHaveLength(1);

    // A comment on a line of the merge request's diff: a follow-up on the same job, branch and merge request.
    const position = { new_path: 'docs/cli.md', old_path: 'docs/cli.md', new_line: 5, old_line: null, position_type: 'text' };
    const diffNote = await deliver(mrNote('@inkwell say what it prints', mrUrl, { type: 'DiffNote', position }));
    expect(diffNote.body).toMatchObject({ outcome: 'message_queued', jobId });
    expect(gitlab.notes.at(-1)).toMatchObject({ noteable: 'merge_requests', iid: 1 });
    const after = await settle(jobId);
    expect(after).toMatchObject({ status: 'completed', prLink: mrUrl, branch: job.branch });
    expect((await doneIn('merge_requests', 1)).body).toContain('> Say what --dry-run prints');
    expect(gitlab.mergeRequests).toHaveLength(1);
    expect(readBranchFile(repo, job.branch as string, 'docs/cli.md')).toContain('prints the files it would write, and writes none.');
    const followUp = requestText(model.requests[2]!);
    expect(followUp).toContain('docs/cli.md');
    expect(followUp).toMatch(/lines\\+": \\+"5\\+"/);
    expect(followUp).toContain("left a comment on this job's merge request");

    // A reporter's stop does nothing; a developer's archives.
    const refused = await deliver(mrNote('@inkwell stop', mrUrl, {}, REPORTER));
    expect(refused.body).toMatchObject({ outcome: 'ignored', reason: 'reader has no write access to acme/docs' });
    expect((await deliver(mrNote('@inkwell stop', mrUrl))).body).toMatchObject({ outcome: 'job_archived', jobId });
    expect((await t!.request('GET', `/v2/agent/${s.project.id}/job/${jobId}`, { key: s.adminKey })).body.status).toBe('archived');
  });

  it('creates nothing for wrong tokens, other projects, reporters, non-members, bots, system notes or other events', async () => {
    await setup([]);
    const mention = issueNote('@inkwell document it');
    const refusals: [string, Promise<{ status: number; body: any }>, number, string][] = [
      ['no token', deliver(mention, { token: null }), 401, 'unauthorized'],
      ['wrong token', deliver(mention, { token: 'not-the-secret' }), 401, 'unauthorized'],
      ['unknown project', deliver(mention, { projectId: 'prj_nope' }), 401, 'unauthorized'],
      [
        'another project',
        deliver({ ...mention, project: { ...project(), path_with_namespace: 'evil/docs', web_url: 'https://gitlab.com/evil/docs' } }),
        403,
        'repository_not_allowed',
      ],
      ['bad idempotency key', deliver(mention, { key: 'not a key!' }), 400, 'invalid_request'],
    ];
    for (const [what, res, status, code] of refusals) {
      const r = await res;
      expect(r.status, what).toBe(status);
      expect(r.body.code, what).toBe(code);
    }
    // An unknown project answers exactly like a wrong token: nothing tells which project ids exist.
    const [unknown, wrong] = await Promise.all([deliver(mention, { projectId: 'prj_nope' }), deliver(mention, { token: 'not-the-secret' })]);
    expect(unknown.body.message).toBe(wrong.body.message);
    const ignored: [string, unknown, RegExp][] = [
      ['reporter', issueNote('@inkwell document it', REPORTER), /no write access/],
      ['non-member', issueNote('@inkwell document it', { id: 99, username: 'stranger' }), /no write access/],
      ['project bot', issueNote('@inkwell document it', { id: 30, username: 'project_5_bot_3f2a' }), /is a bot/],
      ['system note', issueNote('@inkwell changed the milestone', DEVELOPER, { system: true }), /system note/],
      ['edited', issueNote('@inkwell document it', DEVELOPER, { action: 'update' }), /only new comments/],
      ['own reply', issueNote('<!-- inkwell -->\nOn it: @inkwell started a job'), /own comment/],
      ['snippet', issueNote('@inkwell document it', DEVELOPER, { noteable_type: 'Snippet' }), /not acted on/],
    ];
    for (const [what, payload, reason] of ignored) {
      const r = await deliver(payload);
      expect(r.status, what).toBe(202);
      expect(r.body.outcome, what).toBe('ignored');
      expect(r.body.reason, what).toMatch(reason);
    }
    expect((await deliver({ object_kind: 'push', project: project() }, { event: 'Push Hook' })).body.outcome).toBe('ignored');
    const notJson = await t!.request('POST', `/v1/hooks/gitlab/${s.project.id}`, {
      raw: Buffer.from('not json'),
      headers: { 'content-type': 'application/json', 'x-gitlab-event': 'Note Hook', 'x-gitlab-token': secret },
    });
    expect(notJson.status).toBe(400);
    expect(notJson.body.code).toBe('invalid_json');
    // Bots and system notes cost no membership lookup; only the reporter and the stranger were asked about.
    const asked = gitlab.requests.filter((r) => r.rawPath.includes('/members/all/')).map((r) => r.rawPath.split('/').at(-1));
    expect(asked).toEqual(['8', '99']);
    expect(await jobs()).toEqual([]);
    expect(gitlab.notes).toEqual([]);
  });

  it('answers 503 when GitLab cannot be asked, and acts on the retry', async () => {
    await setup([]);
    gitlab.failNext(500, 3);
    const failed = await deliver(issueNote('@inkwell document it'), { key: 'flaky-1' });
    expect(failed.status, failed.text).toBe(503);
    expect(failed.body.code).toBe('code_host_unavailable');
    expect(failed.text).not.toContain(TOKEN);
    expect(await jobs()).toEqual([]);
    const retried = await deliver(issueNote('@inkwell document it'), { key: 'flaky-1' });
    expect(retried.body).toMatchObject({ outcome: 'job_started' });
    expect(await jobs()).toHaveLength(1);
  });
});
