// Git that repository content cannot turn into commands: every setting git offers for running a program
// (fsmonitor, hooks, ssh, askpass, editor, pager, credential helpers, upload/receive-pack, filters, diff
// and merge drivers, gpg, includes, URL rewrites to `ext::`, per-worktree config) is planted in the
// mirror's config, in the worktree's config, in ~/.gitconfig and as hooks; real turns (fetch, checkout,
// add, commit, push) run through the executor; not one of the planted commands runs.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HARDENING, hardenedEnv } from '../../src/git/run.ts';
import { mirrorConfigText, mirrorPath, writeMirrorConfig } from '../../src/git/workspace.ts';
import { GITHUB_URL, type Harness, startHarness } from '../agent/harness.ts';
import { applyEnv, gitSync, readBranchFile, tempDir } from '../helpers/git.ts';

const BRANCH = 'inkwell/test1-update-intro';

let markers: string;
let h: Harness | null = null;

/** A command that leaves `markers/<name>` behind when it runs (and otherwise passes data through). */
const touch = (name: string) => `touch '${markers}/${name}'`;

/** The planted settings, as git config text. */
function plantedConfig(): string {
  const script = path.join(markers, 'script.sh');
  return [
    '[core]',
    `\tfsmonitor = ${touch('fsmonitor')}`,
    `\thooksPath = ${path.join(markers, 'hooks')}`,
    `\tsshCommand = ${touch('ssh')}`,
    `\taskPass = ${script}`,
    `\teditor = ${touch('editor')}`,
    `\tpager = ${touch('pager')}`,
    `\tgitProxy = ${script}`,
    `\talternateRefsCommand = ${touch('alternate-refs')}`,
    '\trepositoryformatversion = 1',
    '[extensions]',
    '\tworktreeConfig = true',
    '[sequence]',
    `\teditor = ${touch('sequence-editor')}`,
    '[credential]',
    `\thelper = "!${touch('credential')}"`,
    '[remote "origin"]',
    `\tuploadpack = "${touch('uploadpack')}; git-upload-pack"`,
    `\treceivepack = "${touch('receivepack')}; git-receive-pack"`,
    '[filter "evil"]',
    `\tclean = "${touch('filter-clean')}; cat"`,
    `\tsmudge = "${touch('filter-smudge')}; cat"`,
    `\tprocess = ${touch('filter-process')}`,
    '[diff]',
    `\texternal = ${script}`,
    '[diff "evil"]',
    `\ttextconv = ${script}`,
    '[merge "evil"]',
    `\tdriver = ${touch('merge')}`,
    '[gpg]',
    `\tprogram = ${script}`,
    '[commit]',
    '\tgpgSign = true',
    '[uploadpack]',
    `\tpackObjectsHook = ${script}`,
    '[include]',
    `\tpath = ${path.join(markers, 'included.config')}`,
    '[protocol]',
    '\tallow = always',
    `[url "ext::sh -c ${touch('ext')}% >&2 #"]`,
    '\tpushInsteadOf = https://github.com/',
    '',
  ].join('\n');
}

function writeMarkersKit(): void {
  markers = tempDir('inkwell-markers-');
  const script = path.join(markers, 'script.sh');
  fs.writeFileSync(script, `#!/bin/sh\ntouch '${markers}/script-'"$(basename "$0")"-"$$"\ncat\n`, { mode: 0o755 });
  fs.mkdirSync(path.join(markers, 'hooks'));
  for (const hook of ['pre-commit', 'post-commit', 'commit-msg', 'pre-push', 'post-checkout', 'reference-transaction', 'post-index-change', 'pre-auto-gc']) {
    fs.writeFileSync(path.join(markers, 'hooks', hook), `#!/bin/sh\ntouch '${markers}/hook-${hook}'\n`, { mode: 0o755 });
  }
  fs.writeFileSync(path.join(markers, 'included.config'), `[core]\n\tfsmonitor = ${touch('included-fsmonitor')}\n`);
}

/** Files the planted commands left behind (the kit itself excluded). */
function ran(): string[] {
  return fs.readdirSync(markers).filter((f) => !['script.sh', 'hooks', 'included.config'].includes(f));
}

/** Plants everything in the mirror (config, hooks, attributes) and in every worktree's own config. */
function plant(mirror: string): void {
  fs.appendFileSync(path.join(mirror, 'config'), plantedConfig());
  fs.mkdirSync(path.join(mirror, 'hooks'), { recursive: true });
  for (const hook of fs.readdirSync(path.join(markers, 'hooks'))) fs.copyFileSync(path.join(markers, 'hooks', hook), path.join(mirror, 'hooks', hook));
  fs.mkdirSync(path.join(mirror, 'info'), { recursive: true });
  fs.writeFileSync(path.join(mirror, 'info', 'attributes'), '* filter=evil diff=evil merge=evil\n');
  for (const wt of fs.readdirSync(path.join(mirror, 'worktrees'))) {
    fs.writeFileSync(path.join(mirror, 'worktrees', wt, 'config.worktree'), plantedConfig());
  }
}

/**
 * Runs a turn with ~/.gitconfig planted too (the worker's git never reads it, nor the system file). Only
 * around the turn: the test's own git commands (creating and reading the repository) read it.
 */
async function withPlantedHome<T>(fn: () => Promise<T>): Promise<T> {
  const home = tempDir('inkwell-home-');
  fs.writeFileSync(path.join(home, '.gitconfig'), plantedConfig());
  const restore = applyEnv({ HOME: home, XDG_CONFIG_HOME: home });
  try {
    return await fn();
  } finally {
    restore();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

beforeEach(() => {
  writeMarkersKit();
});

afterEach(async () => {
  await h?.close();
  h = null;
  fs.rmSync(markers, { recursive: true, force: true });
});

describe('git hardening', () => {
  it('sets every program-running key at command scope and the environment that outranks config files', () => {
    const keys = new Map(HARDENING.map(([k, v]) => [k, v]));
    expect(keys.get('core.fsmonitor')).toBe('false');
    expect(keys.get('core.hooksPath')).toBe('/dev/null');
    expect(keys.get('protocol.allow')).toBe('never');
    expect(keys.has('protocol.ext.allow')).toBe(false);
    expect(keys.get('credential.helper')).toBe('');
    const env = hardenedEnv({}, undefined);
    expect(env).toMatchObject({ GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_ASKPASS: '', GIT_SSH_COMMAND: 'ssh' });
    expect(hardenedEnv({ GIT_SSH: "/opt/my ssh's" }, '/etc/inkwell/gitconfig')).toMatchObject({
      GIT_SSH_COMMAND: `'/opt/my ssh'\\''s'`,
      GIT_CONFIG_GLOBAL: '/etc/inkwell/gitconfig',
    });
  });

  it('a mirror made by plain git init (template hooks, default config) is rewritten without a warning; a planted key is reported', async () => {
    const dir = tempDir('inkwell-mirror-');
    try {
      gitSync(['init', '--bare', '-q', '.'], dir);
      gitSync(['config', 'remote.origin.url', GITHUB_URL], dir);
      gitSync(['config', 'remote.origin.fetch', '+refs/heads/*:refs/remotes/origin/*'], dir);
      expect(fs.readdirSync(path.join(dir, 'hooks')).length).toBeGreaterThan(0);
      expect(await writeMirrorConfig(dir, GITHUB_URL)).toBe(false);
      expect(fs.existsSync(path.join(dir, 'hooks'))).toBe(false);
      expect(await writeMirrorConfig(dir, GITHUB_URL)).toBe(false);
      fs.appendFileSync(path.join(dir, 'config'), '[core]\n\tfsmonitor = true\n');
      expect(await writeMirrorConfig(dir, GITHUB_URL)).toBe(true);
      expect(fs.readFileSync(path.join(dir, 'config'), 'utf8')).toBe(mirrorConfigText(GITHUB_URL));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('config planted between turns: the next turn fetches, commits and pushes, and no planted command runs', async () => {
    h = await startHarness({
      files: { 'README.md': '# Docs\n', '.gitattributes': '* filter=evil diff=evil merge=evil\n', 'docs/a.md': 'one\n' },
      script: [{ toolCalls: [{ name: 'write_file', args: { path: 'docs/a.md', content: 'two\n' } }] }, { text: 'First change' }],
    });
    const first = await withPlantedHome(() => h!.execute());
    expect(first.commitSha).not.toBeNull();
    const mirror = mirrorPath(h.config, GITHUB_URL);
    plant(mirror);
    expect(ran()).toEqual([]);

    h.model.push({ toolCalls: [{ name: 'write_file', args: { path: 'docs/b.md', content: 'three\n' } }] }, { text: 'Second change' });
    const second = await withPlantedHome(() => h!.execute({ history: first.messages, prompt: 'And another page' }));
    expect(second.commitSha).not.toBeNull();
    expect(readBranchFile(h.repo, BRANCH, 'docs/b.md')).toBe('three\n');
    expect(ran()).toEqual([]);
    // The mirror holds Inkwell's config again, and nothing else.
    const config = fs.readFileSync(path.join(mirror, 'config'), 'utf8');
    expect(config).not.toContain(markers);
    expect(config).toContain(`url = ${GITHUB_URL}`);
    expect(fs.existsSync(path.join(mirror, 'hooks'))).toBe(false);
    expect(fs.existsSync(path.join(mirror, 'info', 'attributes'))).toBe(false);
  });

  it('config planted during a turn (after the workspace is prepared): commit and push run no planted command', async () => {
    let mirror = '';
    h = await startHarness({
      files: { 'README.md': '# Docs\n', '.gitattributes': '* filter=evil diff=evil merge=evil\n' },
      script: [
        () => {
          plant(mirror);
          return { toolCalls: [{ name: 'write_file', args: { path: 'docs/new.md', content: 'new\n' } }] };
        },
        { text: 'Add a page' },
      ],
    });
    mirror = mirrorPath(h.config, GITHUB_URL);
    const result = await withPlantedHome(() => h!.execute());
    expect(result.commitSha).not.toBeNull();
    expect(readBranchFile(h.repo, BRANCH, 'docs/new.md')).toBe('new\n');
    expect(ran()).toEqual([]);
  });
});
