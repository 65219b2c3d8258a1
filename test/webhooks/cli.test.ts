import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { enqueueWebhook } from '../../src/jobs/webhooks.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { openTestDb, type TestDb } from '../helpers/db.ts';

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, '../../bin/inkwell.js');

async function inkwell(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
      timeout: 120_000, // a safety net: the CLI's start-up takes seconds on a loaded machine
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

// The CLI is a thin layer over the service (tested on both dialects); one dialect keeps process launches few.
describe('inkwell webhook CLI', () => {
  let t: TestDb | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  it('sets (printing a whsec_ secret once), refuses private targets, shows, lists deliveries and removes', { timeout: 300_000 }, async () => {
    t = await openTestDb('sqlite');
    const project = await createProjectService(createProjectsStore(t.db.kysely)).createProject({ name: 'Docs', repository: 'https://github.com/acme/docs' });
    const url = 'http://127.0.0.1:9/hook';

    const refused = await inkwell(['webhook', 'set', '--project', project.id, '--url', url], t.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/url refused: 127\.0\.0\.1 is a loopback address.*INKWELL_ALLOW_PRIVATE_WEBHOOKS=1/);

    const set = await inkwell(['webhook', 'set', '--project', project.id, '--url', url, '--json'], { ...t.env, INKWELL_ALLOW_PRIVATE_WEBHOOKS: '1' });
    expect(set.code).toBe(0);
    const out = JSON.parse(set.stdout);
    expect(out).toEqual({ projectId: project.id, url, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]{44}$/) });

    const get = await inkwell(['webhook', 'get', '--project', project.id, '--json'], t.env);
    expect(JSON.parse(get.stdout)).toEqual({ projectId: project.id, webhook: { url } });
    expect(get.stdout).not.toContain(out.secret);
    const listed = await inkwell(['project', 'list', '--json'], t.env);
    expect(JSON.parse(listed.stdout).projects.find((p: { id: string }) => p.id === project.id).settings.webhook).toEqual({ url });
    expect(listed.stdout).not.toContain(out.secret);

    await enqueueWebhook(t.db, project.id, { type: 'job.completed', data: { job: { id: 'job_1' } } });
    const list = await inkwell(['webhook', 'deliveries', '--project', project.id, '--json'], t.env);
    const { deliveries } = JSON.parse(list.stdout);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ eventType: 'job.completed', status: 'pending', attempts: 0 });

    const removed = await inkwell(['webhook', 'remove', '--project', project.id], t.env);
    expect(removed.stdout).toContain(`Removed the webhook of ${project.id}`);
    const after = await t.db.kysely.selectFrom('projects').select('settings').where('id', '=', project.id).executeTakeFirstOrThrow();
    expect(JSON.parse(after.settings).webhook).toBeNull();
  });
});
