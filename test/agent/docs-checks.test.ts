// The docs checks inside a run (executor level, scripted model, real git and GitHub fake): the `check` tool
// the model may call, and the automatic check whose findings go back to the model.
import { afterEach, describe, expect, it } from 'vitest';
import { readBranchFile } from '../helpers/git.ts';
import { requestText } from '../helpers/model-server.ts';
import { type Harness, runError, startHarness } from './harness.ts';

const BRANCH = 'inkwell/test1-update-intro';
const FILES = {
  'docs.json': JSON.stringify({ name: 'Acme', navigation: [{ group: 'Start', pages: ['intro', 'guides/setup'] }] }, null, 2),
  'intro.mdx': '---\ntitle: Intro\n---\n\nHello from Acme.\n',
  'guides/setup.mdx': '---\ntitle: Setup\n---\n\n## Install the CLI\n\nRun it.\n',
};

let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

describe('docs checks in a run', () => {
  it('the check tool reports a broken anchor the model then fixes; the automatic check passes; the PR lists the checks', async () => {
    h = await startHarness({
      files: FILES,
      env: { INKWELL_CHECK_REPAIR_ROUNDS: '2' },
      script: [
        {
          toolCalls: [
            { name: 'edit_file', args: { path: 'intro.mdx', old_string: 'Hello from Acme.', new_string: 'Hello. See [setup](/guides/setup#install).' } },
          ],
        },
        { toolCalls: [{ name: 'check', args: {} }] },
        { toolCalls: [{ name: 'edit_file', args: { path: 'intro.mdx', old_string: '#install)', new_string: '#install-the-cli)' } }] },
        { text: 'Link the intro to setup\n\nThe intro points readers to the install steps.' },
      ],
    });
    const result = await h.execute();
    // The tool result the model read names the place, the rule and the anchors there are.
    expect(requestText(h.model.requests[2]!)).toContain('intro.mdx:5:12 anchor-missing');
    expect(requestText(h.model.requests[2]!)).toContain('(it has: install-the-cli)');
    expect(readBranchFile(h.repo, BRANCH, 'intro.mdx')).toContain('/guides/setup#install-the-cli');
    expect(h.model.requests).toHaveLength(4);
    const pr = h.github.pulls[0]!;
    expect(pr.draft).toBe(false);
    expect(pr.body).toContain('### Docs checks');
    expect(pr.body).toContain('✅ links, images and anchors');
    expect(result.summary).toContain('Link the intro to setup');
    const toolResult = h.events.find((e) => e.type === 'tool_result' && e.data.tool === 'check')!;
    expect(toolResult.data).toMatchObject({ ok: true, summary: 'docs checks: 1 problems in 1 page (anchor-missing)' });
    const checks = h.events.filter((e) => e.type === 'check');
    expect(checks.map((e) => e.data)).toEqual([expect.objectContaining({ status: 'passed', round: 0, final: true, framework: 'mintlify', findingCount: 0 })]);
  });

  it('with the automatic check off (0 rounds) nothing is checked and the PR says nothing of checks', async () => {
    h = await startHarness({
      files: FILES,
      script: [{ toolCalls: [{ name: 'write_file', args: { path: 'orphan.mdx', content: '# No title\n\n[x](/nowhere)\n' } }] }, { text: 'Add a page' }],
    });
    await h.execute();
    expect(h.events.some((e) => e.type === 'check')).toBe(false);
    expect(h.github.pulls[0]!).toMatchObject({ draft: false });
    expect(h.github.pulls[0]!.body).not.toContain('Docs checks');
  });

  it('the token budget counts the repair rounds with the first loop: a repair that passes it stops the run', async () => {
    h = await startHarness({
      files: FILES,
      env: { INKWELL_CHECK_REPAIR_ROUNDS: '2' },
      script: [
        { toolCalls: [{ name: 'write_file', args: { path: 'orphan.mdx', content: '---\ntitle: Orphan\n---\n\n[x](/nowhere)\n' } }] },
        { text: 'Add a page' },
        { toolCalls: [{ name: 'read_file', args: { path: 'docs.json' } }] },
        { text: 'never reached' },
      ],
    });
    // 10 input tokens per call: the first loop uses 20, the repair's first call reaches 30 ≥ 25.
    const err = await runError(h.execute({ budget: { limits: { maxInputTokens: 25 }, before: { inputTokens: 0, outputTokens: 0 } } }));
    expect(err.code).toBe('budget_exhausted');
    expect(err.usage).toMatchObject({ inputTokens: 30 });
    expect(h.model.requests).toHaveLength(3);
    expect(h.events.filter((e) => e.type === 'check').map((e) => e.data.status)).toEqual(['failed']);
  });
});
