// `inkwell dashboard` as a real process on both databases: it prints a one-time sign-in link whose token
// (in the URL's fragment) starts a session once, on the service's database.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { testConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import type { AppContext } from '../../src/http/context.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';
import { runCli, runJson } from './run-cli.ts';

describeEachDialect('inkwell dashboard', (dialect) => {
  let t: TestDb;
  let ctx: AppContext;
  let projectId: string;
  beforeAll(async () => {
    t = await openTestDb(dialect);
    const config = testConfig({}, t.env);
    ctx = createContext(config, t.db, createLogger(config));
    projectId = (await ctx.projects.createProject({ name: 'Docs', repository: 'https://github.com/acme/docs' })).id;
  });
  afterAll(async () => t?.cleanup());

  it('prints a link that signs a browser in once', async () => {
    const out = await runJson(['dashboard', '--project', projectId, '--url', 'https://docs-admin.example.com/'], t.env);
    expect(out.link).toMatch(/^https:\/\/docs-admin\.example\.com\/signin#token=ikl_[0-9A-Za-z]{43}$/);
    expect(Date.parse(out.expiresAt)).toBeGreaterThan(Date.now());
    const token = out.link.split('#token=')[1];
    const session = await ctx.sessions.signInWithLink(token);
    expect(session.projectId).toBe(projectId);
    await expect(ctx.sessions.signInWithLink(token)).rejects.toThrow(/already used/);
  });

  it('defaults the link to INKWELL_PUBLIC_URL, else the listen address; says what it prints', async () => {
    const publicUrl = await runJson(['dashboard', '--project', projectId], { ...t.env, INKWELL_PUBLIC_URL: 'https://inkwell.acme.example/' });
    expect(publicUrl.link).toMatch(/^https:\/\/inkwell\.acme\.example\/signin#token=/);
    const wildcard = await runJson(['dashboard', '--project', projectId], { ...t.env, HOST: '0.0.0.0', PORT: '8080' });
    expect(wildcard.link).toMatch(/^http:\/\/localhost:8080\/signin#token=/);
    const plain = await runCli(['dashboard', '--project', projectId], t.env);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(
      /^Open this link to sign in \(it works once, until \d{4}-\d\d-\d\dT[\d:.]+Z\):\n\n {2}http:\/\/127\.0\.0\.1:3000\/signin#token=ikl_\w{43}\n/,
    );
  });

  it('fails with one line for an unknown project or a bad --url', async () => {
    const unknown = await runCli(['dashboard', '--project', 'prj_nope'], t.env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Project prj_nope not found');
    const bad = await runCli(['dashboard', '--project', projectId, '--url', 'ftp://x'], t.env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--url must be an http(s) URL');
  });
});
