// One agent turn end to end: a scripted model (real HTTP, Chat Completions protocol), a real bare
// repository reached as https://github.com/acme/docs through url.<local>.insteadOf, and a fake GitHub
// pull-request API. Runs both with streaming and with one-shot model responses.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RunError } from '../../src/agent/execute.ts';
import { branchExists, commitsBetween, readBranchFile } from '../helpers/git.ts';
import { requestText } from '../helpers/model-server.ts';
import { GITHUB_URL, type Harness, mirrorConfigs, startHarness, TOKEN } from './harness.ts';

const BRANCH = 'inkwell/test1-update-intro';

let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

for (const streaming of [true, false]) {
  describe(`agent run (${streaming ? 'streaming' : 'non-streaming'} model responses)`, () => {
    it('prompt → commit on the job branch, pushed, pull request against the base ref; follow-up reuses it', async () => {
      h = await startHarness({
        env: { INKWELL_MODEL_STREAMING: streaming ? '1' : '0' },
        script: [
          { text: 'Let me look at the intro first.', toolCalls: [{ name: 'read_file', args: { path: 'docs/intro.mdx' } }] },
          {
            toolCalls: [
              { name: 'edit_file', args: { path: 'docs/intro.mdx', old_string: 'Hello from Acme.', new_string: 'Welcome to Acme, the docs platform.' } },
              { name: 'write_file', args: { path: 'docs/quickstart.mdx', content: '# Quickstart\n\nInstall, then run.\n' } },
            ],
          },
          {
            text: 'Rewrite the intro greeting and add a quickstart\n\nThe intro now welcomes readers; docs/quickstart.mdx is new.',
            usage: { prompt: 100, completion: 20 },
          },
        ],
      });
      const first = await h.execute();

      // Branch pushed with the expected content; base branch untouched.
      expect(readBranchFile(h.repo, BRANCH, 'docs/intro.mdx')).toBe('---\ntitle: Intro\n---\n\nWelcome to Acme, the docs platform.\n');
      expect(readBranchFile(h.repo, BRANCH, 'docs/quickstart.mdx')).toBe('# Quickstart\n\nInstall, then run.\n');
      expect(readBranchFile(h.repo, 'main', 'docs/intro.mdx')).toContain('Hello from Acme.');
      const commits = commitsBetween(h.repo, 'main', BRANCH);
      expect(commits).toHaveLength(1);
      expect(commits[0]).toMatchObject({
        sha: first.commitSha,
        subject: 'Rewrite the intro greeting and add a quickstart',
        authorName: 'Inkwell Agent',
        authorEmail: 'agent@inkwell.invalid',
      });

      // One pull request, against the base ref, whose URL is prLink.
      expect(h.github.pulls).toHaveLength(1);
      const pr = h.github.pulls[0]!;
      expect(pr).toMatchObject({
        owner: 'acme',
        repo: 'docs',
        head: BRANCH,
        base: 'main',
        state: 'open',
        title: 'Rewrite the intro greeting and add a quickstart',
        draft: false,
      });
      expect(pr.body).toContain('docs/quickstart.mdx is new');
      expect(first.prLink).toBe('https://github.com/acme/docs/pull/1');
      expect(first.summary).toBe('Rewrite the intro greeting and add a quickstart\n\nThe intro now welcomes readers; docs/quickstart.mdx is new.');
      expect(first.usage).toEqual({ inputTokens: 120, outputTokens: 30 });
      expect(h.github.requests.every((r) => r.headers.authorization === `token ${TOKEN}`)).toBe(true);

      // The model was called with the protocol we claim, the tools, and the repository context.
      expect(h.model.requests).toHaveLength(3);
      expect(h.model.requests.every((r) => r.stream === streaming && r.path === '/v1/chat/completions')).toBe(true);
      const toolNames = h.model.requests[0]!.body.tools.map((t: any) => t.function.name).sort();
      expect(toolNames).toEqual([
        'check',
        'delete_file',
        'edit_file',
        'justify_change',
        'list_files',
        'move_file',
        'read_file',
        'revert_file',
        'search',
        'write_file',
      ]);
      const system = h.model.requests[0]!.body.messages[0];
      expect(system.role).toBe('system');
      expect(system.content).toContain('Never use the word "simply"');
      expect(system.content).toContain('Mintlify');
      expect(system.content).toContain('docs/intro.mdx');
      // The read_file result reached the model in the second request.
      expect(requestText(h.model.requests[1]!)).toContain('Hello from Acme.');

      // Events: assistant text, tool calls/results (summaries only), commit, pull request.
      const types = h.events.map((e) => e.type);
      expect(types.filter((t) => t === 'tool_call')).toHaveLength(3);
      expect(types.filter((t) => t === 'tool_result')).toHaveLength(3);
      expect(types).toContain('assistant_message');
      expect(h.events.find((e) => e.type === 'commit')?.data).toMatchObject({ sha: first.commitSha, branch: BRANCH });
      expect(h.events.find((e) => e.type === 'pull_request')?.data).toMatchObject({ url: first.prLink, number: 1 });
      const write = h.events.find((e) => e.type === 'tool_call' && e.data.tool === 'write_file')!;
      expect(write.data.args).toEqual({ path: 'docs/quickstart.mdx', contentLength: 33 });
      const read = h.events.find((e) => e.type === 'tool_result' && e.data.tool === 'read_file')!;
      expect(JSON.stringify(read.data)).not.toContain('Hello from Acme');

      // The token never reached events, model requests or the mirror's stored remote.
      expect(JSON.stringify(h.events)).not.toContain(TOKEN);
      expect(h.model.requests.map((r) => r.raw).join('\n')).not.toContain(TOKEN);
      const mirror = mirrorConfigs(h.dataDir);
      expect(mirror).toContain(`url = ${GITHUB_URL}`);
      expect(mirror).not.toContain(TOKEN);
      expect(JSON.stringify(first.messages)).not.toContain(TOKEN);

      // Follow-up turn: same branch, a second commit, the same pull request (none duplicated).
      h.events.length = 0;
      h.model.push(
        {
          toolCalls: [
            { name: 'edit_file', args: { path: 'docs/quickstart.mdx', old_string: 'Install, then run.', new_string: 'Install, configure, then run.' } },
          ],
        },
        { text: 'Mention configuration in the quickstart' },
      );
      const second = await h.execute({ history: first.messages, prompt: 'Also mention configuration in the quickstart' });
      expect(readBranchFile(h.repo, BRANCH, 'docs/quickstart.mdx')).toBe('# Quickstart\n\nInstall, configure, then run.\n');
      expect(readBranchFile(h.repo, BRANCH, 'docs/intro.mdx')).toContain('Welcome to Acme');
      expect(commitsBetween(h.repo, 'main', BRANCH)).toHaveLength(2);
      expect(second.commitSha).not.toBe(first.commitSha);
      expect(second.prLink).toBe(first.prLink);
      expect(h.github.pulls).toHaveLength(1);
      // One pull request created; the follow-up rewrote its body and commented once.
      expect(h.github.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`)).toEqual([
        'POST /repos/acme/docs/pulls',
        'PATCH /repos/acme/docs/pulls/1',
        'POST /repos/acme/docs/issues/1/comments',
      ]);
      expect(h.github.pulls[0]!.body).toContain('docs/quickstart.mdx');
      // The conversation carried over: the follow-up request contains the first prompt and result.
      const followUp = requestText(h.model.requests[3]!);
      expect(followUp).toContain('Update the intro');
      expect(followUp).toContain('Also mention configuration in the quickstart');
      expect(second.messages.length).toBeGreaterThan(first.messages.length);
      expect(second.messages.slice(0, first.messages.length)).toEqual(first.messages);

      // A turn that changes nothing on a branch with a pull request: no commit, same prLink.
      h.model.push({ text: 'Nothing to change: the quickstart already mentions configuration.' });
      const third = await h.execute({ history: second.messages, prompt: 'Is configuration mentioned?' });
      expect(third.commitSha).toBeNull();
      expect(third.prLink).toBe(first.prLink);
      expect(commitsBetween(h.repo, 'main', BRANCH)).toHaveLength(2);
      expect(h.github.pulls).toHaveLength(1);
      expect(h.github.comments.map((c) => c.body.includes('This turn changed no files.'))).toEqual([false, true]);
    });
  });
}

describe('agent run outcomes', () => {
  it('a prompt that changes nothing → no commit, no branch, no pull request, prLink null', async () => {
    h = await startHarness({ script: [{ toolCalls: [{ name: 'list_files', args: {} }] }, { text: 'The docs already cover this; no change needed.' }] });
    const result = await h.execute();
    expect(result).toMatchObject({ commitSha: null, prLink: null, summary: 'The docs already cover this; no change needed.' });
    expect(branchExists(h.repo, BRANCH)).toBe(false);
    expect(h.github.requests).toHaveLength(0);
    expect(h.events.map((e) => e.type)).not.toContain('commit');
  });

  it('a local repository (path and file:// URL): the branch is pushed there, prLink null, no host calls', async () => {
    h = await startHarness();
    for (const [i, repository] of [h.repo.dir, h.repo.url].entries()) {
      const branch = `inkwell/local${i}-add-page`;
      h.model.push({ toolCalls: [{ name: 'write_file', args: { path: `docs/local${i}.mdx`, content: `page ${i}\n` } }] }, { text: `Add local page ${i}` });
      const result = await h.execute({ repository, branch, jobId: `job_local${i}` });
      expect(result.prLink).toBeNull();
      expect(result.commitSha).toMatch(/^[0-9a-f]{40}$/);
      expect(readBranchFile(h.repo, branch, `docs/local${i}.mdx`)).toBe(`page ${i}\n`);
    }
    expect(h.github.requests).toHaveLength(0);
    expect(h.events.filter((e) => e.type === 'pull_request')).toHaveLength(0);
  });

  it('draft pull requests are opened as drafts', async () => {
    h = await startHarness({ script: [{ toolCalls: [{ name: 'delete_file', args: { path: 'docs/install.mdx' } }] }, { text: 'Remove the install page' }] });
    const result = await h.execute({ draft: true });
    expect(h.github.pulls[0]).toMatchObject({ draft: true, head: BRANCH });
    expect(readBranchFile(h.repo, BRANCH, 'docs/install.mdx')).toBeNull();
    expect(result.prLink).toBe(h.github.htmlUrl(h.github.pulls[0]!));
  });

  it('an open pull request that already exists for the branch is reused, never duplicated', async () => {
    h = await startHarness({ script: [{ toolCalls: [{ name: 'write_file', args: { path: 'a.md', content: 'a\n' } }] }, { text: 'Add a' }] });
    // Someone (or a crashed earlier run) already opened one for this branch.
    const pre = await fetch(`${h.github.apiUrl}/repos/acme/docs/pulls`, {
      method: 'POST',
      headers: { authorization: `token ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Existing', head: BRANCH, base: 'main' }),
    });
    expect(pre.status).toBe(201);
    const result = await h.execute();
    expect(h.github.pulls).toHaveLength(1);
    expect(result.prLink).toBe('https://github.com/acme/docs/pull/1');
    const lookup = h.github.requests.find((r) => r.method === 'GET' && r.path === '/repos/acme/docs/pulls');
    expect(lookup?.query).toMatchObject({ head: `acme:${BRANCH}`, state: 'open' });
  });

  it('re-running a turn after the pull request step failed pushes nothing new and opens the pull request', async () => {
    h = await startHarness({ script: [{ toolCalls: [{ name: 'write_file', args: { path: 'b.md', content: 'b\n' } }] }, { text: 'Add b' }] });
    h.github.failNext(502, 3);
    const err = await h.execute().catch((e) => e);
    expect(err).toBeInstanceOf(RunError);
    expect(err.code).toBe('host_error');
    expect(err.message).not.toContain(TOKEN);
    expect(readBranchFile(h.repo, BRANCH, 'b.md')).toBe('b\n');
    expect(h.github.pulls).toHaveLength(0);
    // The worker calls execute again with the same input; the worktree starts from the pushed branch.
    h.model.push({ text: 'b.md is already there; nothing else to do.' });
    const again = await h.execute();
    // The same turn again: its commit, pushed by the first attempt, is the turn's (found by its trailers).
    expect(again.commitSha).toBe(commitsBetween(h.repo, 'main', BRANCH)[0]!.sha);
    expect(again.prLink).toBe('https://github.com/acme/docs/pull/1');
    expect(h.github.pulls).toHaveLength(1);
    expect(commitsBetween(h.repo, 'main', BRANCH)).toHaveLength(1);
  });

  it('a retried turn that changes more replaces its own pushed commit (same parent): one commit per turn', async () => {
    h = await startHarness({ script: [{ toolCalls: [{ name: 'write_file', args: { path: 'b.md', content: 'b\n' } }] }, { text: 'Add b' }] });
    h.github.failNext(502, 3);
    expect(await h.execute().catch((e) => e)).toBeInstanceOf(RunError);
    const [pushed] = commitsBetween(h.repo, 'main', BRANCH);
    expect(pushed!.body).toMatch(/Inkwell-Job: job_test1\nInkwell-Turn: 1$/);
    h.model.push({ toolCalls: [{ name: 'write_file', args: { path: 'c.md', content: 'c\n' } }] }, { text: 'Add b and c' });
    const again = await h.execute();
    const commits = commitsBetween(h.repo, 'main', BRANCH);
    expect(commits).toHaveLength(1);
    expect(again.commitSha).toBe(commits[0]!.sha);
    expect(again.commitSha).not.toBe(pushed!.sha);
    expect(commits[0]!.subject).toBe('Add b and c');
    expect(readBranchFile(h.repo, BRANCH, 'b.md')).toBe('b\n');
    expect(readBranchFile(h.repo, BRANCH, 'c.md')).toBe('c\n');
    // A person's commit that copies the trailers is never replaced: the retry commits on top of it.
    const { pushCommit } = await import('../helpers/git.ts');
    pushCommit(h.repo, BRANCH, { files: { 'human.md': 'h\n' }, message: `Human edit\n\nInkwell-Job: job_test1\nInkwell-Turn: 1\n` });
    h.model.push({ toolCalls: [{ name: 'write_file', args: { path: 'e.md', content: 'e\n' } }] }, { text: 'Add e' });
    await h.execute();
    expect(commitsBetween(h.repo, 'main', BRANCH).map((c) => c.subject)).toEqual(['Add e', 'Human edit', 'Add b and c']);
    // The next turn is a turn of its own: a commit on top.
    h.model.push({ toolCalls: [{ name: 'write_file', args: { path: 'd.md', content: 'd\n' } }] }, { text: 'Add d' });
    await h.execute({ history: again.messages, prompt: 'add d' });
    expect(commitsBetween(h.repo, 'main', BRANCH).map((c) => c.subject)).toEqual(['Add d', 'Add e', 'Human edit', 'Add b and c']);
  });

  it('a branch moved on the remote between turns: the next turn starts from the pushed state', async () => {
    h = await startHarness({ script: [{ toolCalls: [{ name: 'write_file', args: { path: 'c.md', content: 'c\n' } }] }, { text: 'Add c' }] });
    await h.execute();
    const { pushCommit } = await import('../helpers/git.ts');
    pushCommit(h.repo, BRANCH, { files: { 'human.md': 'added by a person\n' } });
    h.model.push(
      { toolCalls: [{ name: 'read_file', args: { path: 'human.md' } }] },
      { toolCalls: [{ name: 'write_file', args: { path: 'c.md', content: 'c2\n' } }] },
      { text: 'Update c' },
    );
    const second = await h.execute({ prompt: 'update c' });
    expect(requestText(h.model.requests[3]!)).toContain('added by a person');
    expect(second.commitSha).not.toBeNull();
    expect(readBranchFile(h.repo, BRANCH, 'human.md')).toBe('added by a person\n');
    expect(readBranchFile(h.repo, BRANCH, 'c.md')).toBe('c2\n');
  });

  it('a leftover dirty worktree from a crashed run is discarded before the turn', async () => {
    h = await startHarness({ script: [{ text: 'Nothing to do.' }] });
    const wt = path.join(h.dataDir, 'worktrees', 'job_test1');
    fs.mkdirSync(wt, { recursive: true });
    fs.writeFileSync(path.join(wt, 'junk.md'), 'half-written\n');
    const result = await h.execute();
    expect(result.commitSha).toBeNull();
    expect(fs.existsSync(path.join(wt, 'junk.md'))).toBe(false);
    expect(branchExists(h.repo, BRANCH)).toBe(false);
  });
});
