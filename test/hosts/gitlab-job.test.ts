// End to end over the HTTP API: a job on a GitLab repository runs through the real worker and agent
// executor (scripted model server, git through url.<local>.insteadOf to a bare repository, local
// GitLab API), completes with prLink = the merge request's web_url, and the project's webhook
// receives a signed job.completed carrying the job as the API shows it. A follow-up turn rewrites the merge
// request's description and adds a note.
import crypto from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { createRunExecutor } from '../../src/agent/execute.ts';
import { testConfig } from '../../src/config.ts';
import { createWebhookService, startWebhookDispatcher } from '../../src/jobs/webhooks.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { applyEnv, createBareRepo, insteadOfEnv, readBranchFile } from '../helpers/git.ts';
import { startGitLabServer } from '../helpers/gitlab-server.ts';
import { startJobsApp, waitForStatus } from '../helpers/jobs.ts';
import { type ModelScriptEntry, startModelServer } from '../helpers/model-server.ts';
import { eventually, startReceiver } from '../webhooks/receiver.ts';

const TOKEN = `glpat-${'J0bToken'.repeat(3)}`;

describeEachDialect('GitLab job end to end', (dialect) => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c();
    cleanups.length = 0;
  });

  const INTRO_TURN: ModelScriptEntry[] = [
    { toolCalls: [{ name: 'edit_file', args: { path: 'docs/intro.md', old_string: 'Hello.', new_string: 'Welcome.' } }] },
    { text: 'Friendlier intro\n\nThe intro greets readers.' },
  ];

  /** A bare repository with `files` reached as the GitLab fake's acme/docs, a scripted model, and its repository URL. */
  async function stack(files: Record<string, string>, script: ModelScriptEntry[]) {
    const repo = createBareRepo({ files: { 'README.md': '# Docs\n', 'docs/intro.md': 'Hello.\n', ...files } });
    cleanups.push(() => repo.cleanup());
    const gitlab = await startGitLabServer({ token: TOKEN });
    cleanups.push(() => gitlab.close());
    const model = await startModelServer(script);
    cleanups.push(() => model.close());
    const repository = `${gitlab.url}/acme/docs.git`;
    cleanups.push(applyEnv(insteadOfEnv({ [repository]: repo.dir })));
    return { repo, gitlab, model, repository, env: { OPENAI_COMPATIBLE_BASE_URL: model.baseUrl, GITLAB_URL: gitlab.url, GITLAB_TOKEN: TOKEN } };
  }

  it('completes with prLink = the merge request web_url and notifies the webhook', async () => {
    const { repo, gitlab, repository, env } = await stack({}, INTRO_TURN);
    const receiver = await startReceiver([200]);
    cleanups.push(() => receiver.close());

    const webhooks = { ...testConfig().webhooks, allowPrivate: true, pollIntervalMs: 20, retryScheduleMs: [100] };
    const t = await startJobsApp(dialect, { webhooks }, env);
    cleanups.push(() => t.close());
    const { adminKey: key, project } = await t.seed({ repository, ref: 'main' });
    const { secret } = await createWebhookService(t.ctx).set(project.id, receiver.url);
    t.startWorker(createRunExecutor(t.ctx.config, t.ctx.logger));
    const dispatcher = startWebhookDispatcher(t.ctx);
    cleanups.push(() => dispatcher.stop());

    const created = await t.request('POST', `/v2/agent/${project.id}/job`, { key, body: { prompt: 'Make the intro friendlier' } });
    expect(created.status).toBe(201);
    const job = await waitForStatus(t, key, project.id, created.body.id, ['completed', 'failed']);
    expect(job.error).toBeNull();
    expect(job.status).toBe('completed');

    expect(gitlab.mergeRequests).toHaveLength(1);
    const mr = gitlab.mergeRequests[0];
    expect(mr).toMatchObject({ projectPath: 'acme/docs', source_branch: job.branch, target_branch: 'main', title: 'Friendlier intro', state: 'opened' });
    expect(job.prLink).toBe(gitlab.webUrl({ projectPath: 'acme/docs', iid: 1 }));
    expect(readBranchFile(repo, job.branch, 'docs/intro.md')).toBe('Welcome.\n');

    await receiver.waitFor(1);
    const got = receiver.received[0];
    if (!got) throw new Error('no webhook');
    const key64 = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = `v1,${crypto.createHmac('sha256', key64).update(`${got.headers['webhook-id']}.${got.headers['webhook-timestamp']}.${got.body}`).digest('base64')}`;
    expect(got.headers['webhook-signature']).toBe(expected);
    const payload = JSON.parse(got.body);
    expect(payload.type).toBe('job.completed');
    const now = await t.request('GET', `/v2/agent/${project.id}/job/${job.id}`, { key });
    expect(payload.data.job).toEqual(now.body);
    expect(payload.data.job.prLink).toBe(job.prLink);
    await eventually(async () => (await createWebhookService(t.ctx).deliveries(project.id))[0]?.status === 'delivered');
    expect(JSON.stringify(now.body)).not.toContain(TOKEN);
  });

  it('a follow-up turn updates the merge request description (new file listed) and adds one note', async () => {
    const { gitlab, repository, env } = await stack({ '.gitlab/merge_request_templates/Default.md': '- [ ] Reviewed\n' }, [
      ...INTRO_TURN,
      { toolCalls: [{ name: 'write_file', args: { path: 'docs/faq.md', content: '# FAQ\n' } }] },
      { text: 'Add an FAQ\n\nA first FAQ page.' },
    ]);
    const t = await startJobsApp(dialect, {}, env);
    cleanups.push(() => t.close());
    const { adminKey: key, project } = await t.seed({ repository, ref: 'main' });
    t.startWorker(createRunExecutor(t.ctx.config, t.ctx.logger));

    const created = await t.request('POST', `/v2/agent/${project.id}/job`, { key, body: { prompt: 'Make the intro friendlier' } });
    const job = await waitForStatus(t, key, project.id, created.body.id, ['completed', 'failed']);
    expect(job).toMatchObject({ status: 'completed', error: null });
    const first = gitlab.mergeRequests[0]!.description!;
    expect(first).toContain('```text\nMake the intro friendlier\n```');
    expect(first).toContain('- `docs/intro.md` (modified, +1 −1)');
    expect(first).toContain('- [ ] Reviewed');
    expect(gitlab.notes).toEqual([]);

    await t.request('POST', `/v2/agent/${project.id}/job/${job.id}/message`, { key, body: { prompt: 'Add an FAQ' } });
    const after = await waitForStatus(t, key, project.id, job.id, ['completed', 'failed']);
    expect(after).toMatchObject({ status: 'completed', error: null, prLink: job.prLink });
    expect(gitlab.mergeRequests).toHaveLength(1);
    const updated = gitlab.mergeRequests[0]!.description!;
    expect(updated).toContain('A first FAQ page.');
    expect(updated).toContain('### Files changed (2)');
    expect(updated).toContain('- `docs/faq.md` (added, +1 −0)');
    expect(gitlab.notes).toHaveLength(1);
    expect(gitlab.notes[0]).toMatchObject({ projectPath: 'acme/docs', noteable: 'merge_requests', iid: 1 });
    expect(gitlab.notes[0]!.body).toContain('```text\nAdd an FAQ\n```');
    expect(gitlab.notes[0]!.body).toContain('A first FAQ page.');
  });
});
