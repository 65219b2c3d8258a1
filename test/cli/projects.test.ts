// `inkwell project …` and `inkwell key …` as real processes, on SQLite (INKWELL_DATA_DIR) and
// PostgreSQL (DATABASE_URL pointing at a per-test schema).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect, openTestDb, type TestDb, tempDir } from '../helpers/db.ts';
import { runCli, runJson } from './run-cli.ts';

/** stderr without the first line a command that opens the database prints (which database it opened). */
const afterDbLine = (stderr: string) => stderr.replace(/^inkwell: using database .*\n/, '');

describeEachDialect('inkwell project/key CLI', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await openTestDb(dialect);
  });
  afterAll(async () => t?.cleanup());

  it('creates and lists projects and keys, revokes keys, and stores only key hashes', async () => {
    const env = t.env;
    const project = await runJson(['project', 'create', '--name', 'Docs', '--repository', 'https://github.com/acme/docs', '--model', 'openai/gpt-5'], env);
    expect(project).toMatchObject({
      id: expect.stringMatching(/^prj_/),
      name: 'Docs',
      repository: 'https://github.com/acme/docs',
      ref: 'main',
      model: 'openai/gpt-5',
    });
    expect(project).not.toHaveProperty('visitorSecret');

    const [list, admin, ingest] = await Promise.all([
      runJson(['project', 'list'], env),
      runJson(['key', 'create', '--project', project.id], env),
      runJson(['key', 'create', '--project', project.id, '--kind', 'ingest', '--name', 'website'], env),
    ]);
    expect(list).toEqual({ projects: [project] });
    expect(admin).toMatchObject({ id: expect.stringMatching(/^key_/), kind: 'admin', projectId: project.id, revokedAt: null });
    expect(admin.key).toMatch(/^ink_[0-9A-Za-z]{40}$/);
    expect(ingest).toMatchObject({ kind: 'ingest', name: 'website' });
    expect(ingest.key).toMatch(/^ink_pub_[0-9A-Za-z]{32}$/);

    const keys = await runJson(['key', 'list', '--project', project.id], env);
    expect(keys.keys.map((k: { id: string }) => k.id).sort()).toEqual([admin.id, ingest.id].sort());
    for (const k of keys.keys) {
      expect(k).not.toHaveProperty('key');
      expect(k).toHaveProperty('lastUsedAt', null);
    }
    expect(JSON.stringify(keys)).not.toContain(admin.key);
    expect(keys.keys.find((k: { id: string }) => k.id === admin.id).prefix).toBe(admin.key.slice(0, 8));

    const revoked = await runJson(['key', 'revoke', admin.id], env);
    expect(revoked).toMatchObject({ id: admin.id, revokedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });

    // The database holds hashes only: no full key anywhere in the keys or projects tables.
    const rows = JSON.stringify([
      await t.db.kysely.selectFrom('api_keys').selectAll().execute(),
      await t.db.kysely.selectFrom('projects').selectAll().execute(),
    ]);
    expect(rows).not.toContain(admin.key);
    expect(rows).not.toContain(ingest.key);
    expect(rows).not.toContain(admin.key.slice(4));
    const stored = await t.db.kysely.selectFrom('api_keys').select(['id', 'revoked_at']).where('id', '=', admin.id).executeTakeFirstOrThrow();
    expect(stored.revoked_at).toEqual(expect.any(Number));
  });

  it('says on stderr which database it opened (PostgreSQL: the URL without its password); stdout stays the output', async () => {
    const r = await runCli(['project', 'list', '--json'], t.env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveProperty('projects');
    const line = r.stderr.split('\n')[0];
    if (dialect === 'sqlite') expect(line).toBe(`inkwell: using database ${path.join(t.env.INKWELL_DATA_DIR as string, 'inkwell.db')}`);
    else {
      const url = new URL(t.env.DATABASE_URL as string);
      expect(line).toMatch(new RegExp(`^inkwell: using database postgres(ql)?://[^\\s]*${url.host}${url.pathname}`));
      if (url.password) expect(line).not.toContain(url.password);
    }
  });

  it('prints readable output without --json, showing a new key once', async () => {
    const env = t.env;
    const created = await runCli(['project', 'create', '--name', 'Plain', '--repository', '/srv/git/plain'], env);
    expect(created.code).toBe(0);
    const id = /Created project (prj_\w+) \(Plain\)/.exec(created.stdout)?.[1];
    expect(id).toBeTruthy();
    const key = await runCli(['key', 'create', '--project', id as string], env);
    expect(key.code).toBe(0);
    expect(key.stdout).toMatch(/Store it now; it is not shown again:\n\n {2}ink_[0-9A-Za-z]{40}\n/);
    const list = await runCli(['project', 'list'], env);
    expect(list.stdout).toMatch(/^id\s+name\s+repository\s+ref\s+model\s+createdAt\s+budget\s+allowedRepositories\n-+/);
    expect(list.stdout).toContain(id);
  });

  it('project set --code-host-webhook prints the URL, a new secret and the events to tick; --handle is checked', async () => {
    const p = await runJson(['project', 'create', '--name', 'Hooks', '--repository', 'https://github.com/acme/docs'], t.env);
    const env: Record<string, string> = { ...t.env, INKWELL_PUBLIC_URL: 'https://inkwell.acme.example' };
    if (dialect === 'postgres') {
      // Several machines share a PostgreSQL database: the secret they derive from must be set, the same everywhere.
      const refused = await runCli(['project', 'set', '--project', p.id, '--code-host-webhook'], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('set INKWELL_SECRET_KEY');
      env.INKWELL_SECRET_KEY = 's'.repeat(40);
    }
    const set = await runJson(['project', 'set', '--project', p.id, '--code-host-webhook', '--handle', 'docs-bot'], env);
    expect(set.codeHostWebhook).toEqual({
      url: `https://inkwell.acme.example/v1/hooks/github/${p.id}`,
      secret: expect.stringMatching(/^ihk_[\w-]{43}$/),
      handle: 'docs-bot',
      host: 'github',
      events: ['Issue comments', 'Pull request reviews'],
    });
    const plain = await runCli(['project', 'set', '--project', p.id, '--code-host-webhook'], env);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/Secret: +ihk_[\w-]{43}\n/);
    expect(plain.stdout).not.toContain(set.codeHostWebhook.secret);
    expect(plain.stdout).toContain('mention @inkwell');
    // A project on GitLab gets GitLab's URL, its secret token and the trigger to tick.
    const lab = await runJson(['project', 'create', '--name', 'Lab', '--repository', 'https://gitlab.com/acme/docs'], env);
    const labHook = await runCli(['project', 'set', '--project', lab.id, '--code-host-webhook'], env);
    expect(labHook.code, labHook.stderr).toBe(0);
    expect(labHook.stdout).toContain(`URL:           https://inkwell.acme.example/v1/hooks/gitlab/${lab.id}\n`);
    expect(labHook.stdout).toMatch(/Secret token: +ihk_[\w-]{43}\n +Trigger: +Comments\n/);
    // Neither secret is stored: only the generation it is derived from.
    const stored = JSON.stringify(await t.db.kysely.selectFrom('projects').select('settings').execute());
    expect(stored).not.toContain(set.codeHostWebhook.secret);
    for (const [args, message] of [
      [['--handle', '@inkwell', '--code-host-webhook'], '--handle must be a GitHub user name'],
      [['--handle', 'docs-bot'], '--handle goes with --code-host-webhook'],
    ] as const) {
      const r = await runCli(['project', 'set', '--project', p.id, ...args], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(message);
    }
  });

  it('project set --allow-repository / --disallow-repository: canonical allow-list, shown by set and list', async () => {
    const env = t.env;
    const p = await runJson(['project', 'create', '--name', 'Allow', '--repository', 'https://github.com/acme/docs'], env);
    const set = await runJson(
      [
        'project',
        'set',
        '--project',
        p.id,
        '--allow-repository',
        'https://GitHub.com/Acme/Site.git/',
        '--allow-repository',
        'ssh://git@GitLab.example:22/g/docs.git',
        '--allow-repository',
        'https://github.com/acme/site', // the same one again
        '--allow-repository',
        'https://github.com/acme/docs.git', // the project's own: always allowed, not stored
      ],
      env,
    );
    expect(set).toEqual({
      projectId: p.id,
      settings: { visitorIdRotation: 'none', allowedRepositories: ['https://github.com/acme/site', 'ssh://git@gitlab.example/g/docs'] },
    });
    const listed = (await runJson(['project', 'list'], env)).projects.find((x: { id: string }) => x.id === p.id);
    expect(listed.settings).toEqual({ visitorIdRotation: 'none', allowedRepositories: ['https://github.com/acme/site', 'ssh://git@gitlab.example/g/docs'] });

    const plain = await runCli(
      ['project', 'set', '--project', p.id, '--disallow-repository', 'https://github.com/acme/site', '--visitor-id-rotation', 'daily'],
      env,
    );
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toBe(`Project ${p.id}: visitor-id rotation daily; allowed repositories: ssh://git@gitlab.example/g/docs\n`);
    const table = await runCli(['project', 'list'], env);
    const row = table.stdout.split('\n').find((line) => line.startsWith(p.id));
    expect(row).toMatch(/\sssh:\/\/git@gitlab\.example\/g\/docs$/);

    // Bad input changes nothing: one line on stderr, exit 1.
    const bad = await Promise.all([
      runCli(['project', 'set', '--project', p.id, '--allow-repository', 'https://user:tok@github.com/a/b'], env),
      runCli(['project', 'set', '--project', p.id, '--allow-repository', 'ftp://host/x', '--visitor-id-rotation', 'monthly'], env),
      runCli(['project', 'set', '--project', p.id, '--disallow-repository', 'https://github.com/acme/nope'], env),
      runCli(['project', 'set', '--project', p.id, '--disallow-repository', 'https://github.com/acme/docs/'], env),
      runCli(['project', 'set', '--project', 'prj_nope', '--allow-repository', 'https://github.com/a/b'], env),
    ]);
    const expected = [
      /^inkwell: --allow-repository: repository must not contain a password/,
      /^inkwell: --allow-repository: repository must be an https:\/\/, http:\/\/, ssh:\/\/, git:\/\/ or file:\/\/ URL/,
      /^inkwell: --disallow-repository: "https:\/\/github.com\/acme\/nope" is not on the project's allow-list\n$/,
      /^inkwell: --disallow-repository: .* is the project's own repository/,
      /^inkwell: Project prj_nope not found\n$/,
    ];
    bad.forEach((r, i) => {
      expect(r.code, r.stderr).toBe(1);
      expect(afterDbLine(r.stderr)).toMatch(expected[i] as RegExp);
      expect(r.stderr).not.toContain('tok@');
      expect(r.stdout).toBe('');
    });
    const after = (await runJson(['project', 'list'], env)).projects.find((x: { id: string }) => x.id === p.id);
    expect(after.settings).toEqual({ visitorIdRotation: 'daily', allowedRepositories: ['ssh://git@gitlab.example/g/docs'] });
  }, 120_000); // a dozen CLI processes

  it('project set budget options: stored, shown by set and list, removed with none; bad values name the option', async () => {
    const env = t.env;
    const p = await runJson(['project', 'create', '--name', 'Budget', '--repository', 'https://github.com/acme/docs'], env);
    const set = await runJson(['project', 'set', '--project', p.id, '--max-output-tokens', '20000', '--max-cost-usd', '2.5', '--daily-tokens', '1000000'], env);
    expect(set.settings.budget).toEqual({ maxOutputTokens: 20_000, maxCostUsd: 2.5, dailyTokens: 1_000_000 });
    const plain = await runCli(['project', 'set', '--project', p.id, '--max-cost-usd', 'none', '--max-turn-ms', '600000'], env);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('budget: maxOutputTokens=20000 dailyTokens=1000000 maxTurnMs=600000');
    const table = await runCli(['project', 'list'], env);
    expect(table.stdout.split('\n').find((line) => line.startsWith(p.id))).toContain('maxOutputTokens=20000 dailyTokens=1000000 maxTurnMs=600000');
    const bad = await Promise.all([
      runCli(['project', 'set', '--project', p.id, '--max-steps', '0'], env),
      runCli(['project', 'set', '--project', p.id, '--daily-tokens', 'lots'], env),
      runCli(['project', 'set', '--project', p.id, '--max-input-tokens', '1.5'], env),
    ]);
    const expected = [
      /^inkwell: --max-steps: steps must be between 1 and 1000, or none to remove it \(got "0"\)\n$/,
      /^inkwell: --daily-tokens: project daily tokens must be a number, or none to remove it \(got "lots"\)\n$/,
      /^inkwell: --max-input-tokens: input tokens must be a whole number/,
    ];
    bad.forEach((r, i) => {
      expect(r.code, r.stderr).toBe(1);
      expect(afterDbLine(r.stderr)).toMatch(expected[i] as RegExp);
    });
    const after = (await runJson(['project', 'list'], env)).projects.find((x: { id: string }) => x.id === p.id);
    expect(after.settings.budget).toEqual({ maxOutputTokens: 20_000, dailyTokens: 1_000_000, maxTurnMs: 600_000 });
  }, 120_000);

  it('fails clearly, with a non-zero exit, on unknown projects and keys and bad input', async () => {
    const env = t.env;
    const results = await Promise.all([
      runCli(['key', 'create', '--project', 'prj_nope', '--json'], env),
      runCli(['key', 'list', '--project', 'prj_nope'], env),
      runCli(['key', 'revoke', 'key_nope'], env),
      runCli(['key', 'create', '--project', 'prj_x', '--kind', 'superuser'], env),
      runCli(['project', 'create', '--name', 'X', '--repository', 'https://github.com/a/b', '--model', 'gpt-5'], env),
      runCli(['project', 'create', '--name', 'X'], env),
    ]);
    const expected = [
      /^inkwell: Project prj_nope not found\n$/,
      /^inkwell: Project prj_nope not found\n$/,
      /^inkwell: Key key_nope not found\n$/,
      /^inkwell: --kind must be one of admin, ingest, ingest-secret \(got "superuser"\)\n$/,
      /^inkwell: --model: model must look like <provider>\/<model>/,
      /required option '--repository <url>' not specified/,
    ];
    results.forEach((r, i) => {
      expect(r.code, r.stderr).not.toBe(0);
      expect(afterDbLine(r.stderr)).toMatch(expected[i] as RegExp);
      expect(r.stdout).toBe('');
    });
  });
});

it('a command other than project create never creates the embedded database: it says where it looked', async () => {
  const dir = tempDir('inkwell-nodb-');
  try {
    for (const args of [
      ['project', 'list'],
      ['key', 'list', '--project', 'prj_x'],
      ['key', 'create', '--project', 'prj_x'],
      ['key', 'revoke', 'key_x'],
      ['project', 'set', '--project', 'prj_x', '--visitor-id-rotation', 'daily'],
      ['webhook', 'get', '--project', 'prj_x'],
      ['analytics', 'reclassify', '--project', 'prj_x'],
    ]) {
      const r = await runCli(args, { INKWELL_DATA_DIR: dir });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain(`no database at ${path.join(dir, 'inkwell.db')}`);
      expect(r.stderr).toContain('INKWELL_DATA_DIR');
    }
    expect(fs.readdirSync(dir)).toEqual([]);
    const created = await runCli(['project', 'create', '--name', 'Docs', '--repository', 'https://github.com/acme/docs', '--json'], { INKWELL_DATA_DIR: dir });
    expect(created.code, created.stderr).toBe(0);
    expect(fs.existsSync(path.join(dir, 'inkwell.db'))).toBe(true);
    expect(created.stderr).toBe(`inkwell: using database ${path.join(dir, 'inkwell.db')}\n`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
