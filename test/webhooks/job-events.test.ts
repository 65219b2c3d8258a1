// Job status changes → webhook events, through the real job API and worker (scripted executor).
import { afterEach, expect, it } from 'vitest';
import { RunError } from '../../src/agent/run-error.ts';
import { testConfig } from '../../src/config.ts';
import { createWebhookService, startWebhookDispatcher } from '../../src/jobs/webhooks.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { type JobsTestApp, startJobsApp, waitForStatus } from '../helpers/jobs.ts';
import { fakeExecutor, waitingStep } from '../jobs/fake-executor.ts';
import { eventually, type Receiver, startReceiver } from './receiver.ts';

describeEachDialect('job webhooks', (dialect) => {
  let t: JobsTestApp | undefined;
  let receiver: Receiver | undefined;
  let stopDispatcher: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stopDispatcher?.();
    await t?.close();
    await receiver?.close();
    t = undefined;
    receiver = undefined;
    stopDispatcher = undefined;
  });

  async function setup() {
    receiver = await startReceiver([200]);
    t = await startJobsApp(dialect, { webhooks: { ...testConfig().webhooks, allowPrivate: true, pollIntervalMs: 20, retryScheduleMs: [100] } });
    const s = await t.seed();
    await createWebhookService(t.ctx).set(s.project.id, receiver.url);
    const d = startWebhookDispatcher(t.ctx);
    stopDispatcher = () => d.stop();
    return { app: t, rcv: receiver, key: s.adminKey, pid: s.project.id };
  }

  const events = (r: Receiver) => r.received.map((x) => JSON.parse(x.body) as { type: string; data: { job: any } });

  it('sends job.failed with the error, then job.archived', async () => {
    const { app, rcv, key, pid } = await setup();
    app.startWorker(
      fakeExecutor(async () => {
        throw new RunError('step_limit_exceeded', 'The agent reached the step limit');
      }),
    );
    const created = await app.request('POST', `/v2/agent/${pid}/job`, { key, body: { prompt: 'Do it' } });
    await waitForStatus(app, key, pid, created.body.id, ['failed']);
    await rcv.waitFor(1);
    const [failed] = events(rcv);
    expect(failed?.type).toBe('job.failed');
    expect(failed?.data.job).toMatchObject({ id: created.body.id, status: 'failed', error: { code: 'step_limit_exceeded' } });

    const archived = await app.request('POST', `/v2/agent/${pid}/job/${created.body.id}/archive`, { key });
    expect(archived.status).toBe(200);
    await rcv.waitFor(2);
    expect(events(rcv)[1]).toMatchObject({
      type: 'job.archived',
      data: { job: { id: created.body.id, status: 'archived', archivedAt: archived.body.archivedAt } },
    });
    await eventually(async () => (await createWebhookService(app.ctx).deliveries(pid)).every((d) => d.status === 'delivered'));
    expect(rcv.received).toHaveLength(2);
  });

  it('a running job sends nothing; archiving it sends job.archived once', async () => {
    const { app, rcv, key, pid } = await setup();
    const exec = fakeExecutor(waitingStep());
    app.startWorker(exec);
    const created = await app.request('POST', `/v2/agent/${pid}/job`, { key, body: { prompt: 'Long one' } });
    await eventually(async () => exec.calls.length === 1);
    await app.request('POST', `/v2/agent/${pid}/job/${created.body.id}/archive`, { key });
    await rcv.waitFor(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(events(rcv).map((e) => [e.type, e.data.job.status])).toEqual([['job.archived', 'archived']]);
  });
});
