// The docs checks' repair loop end to end on both databases: HTTP API, queue and worker, the real executor,
// a scripted model (real HTTP), a real bare repository (a Mintlify site) and the GitHub fake.
import { afterEach, expect, it } from 'vitest';
import { type AgentJobs, jobApi, startAgentJobs } from '../helpers/agent-jobs.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { readBranchFile } from '../helpers/git.ts';
import { type ModelScriptEntry, requestText } from '../helpers/model-server.ts';

const TOKEN = `ghp_${'ChecksT0kenValue'.repeat(3)}`;
const DOCS_JSON = (pages: string[]) => `${JSON.stringify({ name: 'Acme', navigation: [{ group: 'Start', pages }] }, null, 2)}\n`;
const FAQ = '---\ntitle: FAQ\n---\n\n## Questions\n\nSee [setup](/guides/setup#install).\n';
const FILES = {
  'docs.json': DOCS_JSON(['intro', 'guides/setup']),
  'intro.mdx': '---\ntitle: Intro\n---\n\nHello.\n',
  'guides/setup.mdx': '---\ntitle: Setup\n---\n\n## Install the CLI\n',
};

describeEachDialect('docs checks end to end', (dialect) => {
  let a: AgentJobs | null = null;
  const setup = async (script: ModelScriptEntry[], env: Record<string, string> = {}) => {
    a = await startAgentJobs(dialect, { files: FILES, script, token: TOKEN, env });
  };

  afterEach(async () => {
    await a?.close();
    a = null;
  });

  const { api, settle } = jobApi(() => a!);
  const checkEvents = async (id: string) =>
    ((await api('GET', `/job/${id}/events`)).body.events as Array<{ type: string; data: Record<string, any> }>)
      .filter((e) => e.type === 'check')
      .map((e) => e.data);

  it('a broken link goes back to the model, the second attempt fixes it, and the pull request is ready with the passing checks', async () => {
    await setup([
      {
        toolCalls: [
          { name: 'write_file', args: { path: 'guides/faq.mdx', content: FAQ } },
          { name: 'write_file', args: { path: 'docs.json', content: DOCS_JSON(['intro', 'guides/setup', 'guides/faq']) } },
        ],
      },
      { text: 'Add an FAQ page\n\nA new FAQ page, in the navigation.' },
      { toolCalls: [{ name: 'edit_file', args: { path: 'guides/faq.mdx', old_string: '#install)', new_string: '#install-the-cli)' } }] },
      { text: 'Add an FAQ page\n\nA new FAQ page, in the navigation; its link to the install steps fixed.' },
    ]);
    const c = await api('POST', '/job', { prompt: 'Add an FAQ page' });
    const job = await settle(c.body.id);
    expect(job).toMatchObject({ status: 'completed', error: null });
    // The automatic check's findings reached the model as a user message.
    expect(a!.model.requests).toHaveLength(4);
    const repair = a!.model.requests[2]!.body.messages.at(-1);
    expect(repair.role).toBe('user');
    expect(requestText(a!.model.requests[2]!)).toContain('guides/faq.mdx:7:5 anchor-missing');
    expect(readBranchFile(a!.repo, job.branch, 'guides/faq.mdx')).toContain('#install-the-cli)');
    const pr = a!.github.pulls[0]!;
    expect(pr).toMatchObject({ draft: false, title: 'Add an FAQ page' });
    expect(pr.body).toContain('its link to the install steps fixed');
    expect(pr.body).toMatch(
      /### Docs checks\n\nPassed \(1 page checked\):\n- ✅ pages parse\n- ✅ front matter\n- ✅ links, images and anchors\n- ✅ navigation/,
    );
    const checks = await checkEvents(job.id);
    expect(checks).toHaveLength(2);
    expect(checks[0]).toMatchObject({
      status: 'failed',
      round: 0,
      final: false,
      findingCount: 1,
      findings: [{ file: 'guides/faq.mdx', line: 7, column: 5, rule: 'anchor-missing' }],
    });
    expect(checks[1]).toMatchObject({ status: 'passed', round: 1, final: true, findingCount: 0 });
    expect(job.usage.inputTokens).toBe(40); // four model calls of 10 input tokens each
  });

  it('a run that cannot fix its checks opens a draft pull request whose body says which checks failed and why', async () => {
    await setup(
      [
        { toolCalls: [{ name: 'write_file', args: { path: 'guides/faq.mdx', content: '---\ntitle: FAQ\n---\n\n[x](/guides/nowhere)\n' } }] },
        { text: 'Add an FAQ page' },
        { text: 'Add an FAQ page\n\nI could not find the page the link should point to.' },
      ],
      { INKWELL_CHECK_REPAIR_ROUNDS: '1' },
    );
    const c = await api('POST', '/job', { prompt: 'Add an FAQ page' });
    const job = await settle(c.body.id);
    expect(job).toMatchObject({ status: 'completed', error: null });
    expect(a!.model.requests).toHaveLength(3);
    const pr = a!.github.pulls[0]!;
    expect(pr.draft).toBe(true);
    expect(pr.body).toContain('### Docs checks: failed');
    expect(pr.body).toContain('This pull request is a draft: the docs checks still fail after 1 repair round.');
    expect(pr.body).toContain('- `guides/faq.mdx:5:1` link-broken: `"/guides/nowhere": no page or file at /guides/nowhere`');
    expect(pr.body).toContain('- `guides/faq.mdx:1:1` nav-missing-page');
    const checks = await checkEvents(job.id);
    expect(checks.map((e) => [e.status, e.round, e.final])).toEqual([
      ['failed', 0, false],
      ['failed', 1, true],
    ]);
  });
});
