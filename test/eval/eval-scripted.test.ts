// The eval end to end with the scripted model: every task's reference script, replayed by a real
// OpenAI-compatible HTTP server, through the worker's executor on a real bare repository, passes its criteria;
// deliberately wrong scripts fail and name the criterion they fail.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVAL_ROOT, runEval } from '../../eval/lib/cli.ts';
import type { TaskResult } from '../../eval/lib/runner.ts';
import { scriptedResponder } from '../../eval/lib/scripted.ts';
import type { ScriptStep } from '../../eval/lib/types.ts';
import { ALL_TASKS } from '../../eval/tasks/index.ts';
import { calls, done, edit, write } from '../../eval/tasks/steps.ts';
import { tempDir } from '../helpers/git.ts';
import { type ModelServer, startModelServer } from '../helpers/model-server.ts';

const MODEL = 'openai-compatible/scripted';
// A price for the scripted model, so cost is computed as for a real one: $1 / $2 per million tokens.
const PRICES = JSON.stringify({ [MODEL]: { input: 1, output: 2 } });

async function scriptedEval(scripts: Record<string, ScriptStep[][]>, taskGlobs: string[]) {
  const server: ModelServer = await startModelServer([], {});
  const respond = scriptedResponder(ALL_TASKS, scripts);
  server.setFallback((req) => respond(req.body?.messages));
  const out = tempDir('inkwell-eval-out-');
  const lines: string[] = [];
  try {
    const run = await runEval(
      { models: [MODEL], taskGlobs, concurrency: 2, outDir: out },
      { OPENAI_COMPATIBLE_BASE_URL: server.baseUrl, INKWELL_MODEL_PRICES: PRICES, INKWELL_MODEL_MAX_RETRIES: '1', INKWELL_MODEL_RETRY_BASE_MS: '5' },
      (line) => lines.push(line),
    );
    return { ...run, out, printed: lines.join('\n'), requests: server.requests.length };
  } finally {
    await server.close();
  }
}

const byTask = (results: TaskResult[]) => new Map(results.map((r) => [r.task, r]));

describe('eval with the scripted model', () => {
  let run: Awaited<ReturnType<typeof scriptedEval>>;
  beforeAll(async () => {
    run = await scriptedEval({}, []);
  });
  afterAll(() => {
    if (run) fs.rmSync(run.out, { recursive: true, force: true });
  });

  it('every task passes with its reference script, through the real executor', () => {
    expect(run.results.map((r) => r.task)).toEqual(ALL_TASKS.map((t) => t.name));
    const failures = run.results
      .filter((r) => !r.success)
      .map(
        (r) =>
          `${r.task}: ${r.criteria
            .filter((c) => !c.ok)
            .map((c) => `${c.criterion} (${c.detail})`)
            .join('; ')}`,
      );
    expect(failures).toEqual([]);
    for (const r of run.results) {
      const task = ALL_TASKS.find((t) => t.name === r.task)!;
      // Each reply of the script was one model step; the scripted server reports 10 input and 5 output tokens per call.
      const steps = task.turns.reduce((n, t) => n + t.reference.length, 0);
      expect(r, r.task).toMatchObject({ steps, inputTokens: 10 * steps, outputTokens: 5 * steps, error: null, failedCheckRounds: 0 });
      expect(r.costUsd).toBeCloseTo((10 * steps * 1 + 5 * steps * 2) / 1e6, 12);
      expect(r.criteria.length).toBeGreaterThan(1);
      expect(r.summary).toBe((task.turns.at(-1)!.reference.at(-1) as { text: string }).text);
    }
    expect(run.requests).toBe(run.results.reduce((n, r) => n + r.steps!, 0));
  });

  it('prints the table per model and writes the results as JSON and Markdown', () => {
    const n = ALL_TASKS.length;
    expect(run.printed).toMatch(new RegExp(`${MODEL}\\s+${n}/${n}\\s+100%`));
    expect(run.printed).toContain('mintlify/add-page-webhooks');
    const [json, md] = run.files;
    expect(path.dirname(json!)).toBe(run.out);
    const saved = JSON.parse(fs.readFileSync(json!, 'utf8'));
    expect(saved.summary).toEqual([expect.objectContaining({ model: MODEL, tasks: n, passed: n, successRate: 1 })]);
    expect(saved.results).toHaveLength(n);
    const text = fs.readFileSync(md!, 'utf8');
    expect(text).toContain(`| ${MODEL} | ${n}/${n} | 100% |`);
    expect(text).not.toContain('## Failures');
  });
});

describe('eval with wrong scripts', () => {
  const WRONG_WEBHOOKS =
    '---\ntitle: Webhooks\ndescription: Webhooks.\n---\n\nAcme signs requests with `Acme-Signature` (HMAC-SHA256 of /v1/webhooks bodies), retried for three days.\nSee [Retries](/guides/retries).\n';
  const WEBHOOKS_NAV = edit('docs.json', '"guides/pagination", "guides/errors"]', '"guides/pagination", "guides/errors", "guides/webhooks"]');
  const PLUGINS = '# Plugins\n\nInstall with `pip install tern-docker` and list it under `plugins` in tern.toml.\n';
  const scripts: Record<string, ScriptStep[][]> = {
    // A broken link left in (the repair rounds get the same final reply, so it stays broken).
    'mintlify/add-page-webhooks': [[calls(write('guides/webhooks.mdx', WRONG_WEBHOOKS), WEBHOOKS_NAV), done('Add a webhooks guide', 'Done.')]],
    // The right edit, and an unrelated page changed with a justification: the scope check keeps it (an unjustified
    // one it would revert), the eval's "nothing else changed" still fails it.
    'mintlify/document-flag-dry-run': [
      [
        calls(
          edit(
            'cli/commands.mdx',
            '| `--file <path>` | The configuration file. Default: `acme.yaml`. |\n',
            '| `--file <path>` | The configuration file. Default: `acme.yaml`. |\n| `--dry-run` | Print the changes without making them. |\n',
          ),
          edit('README.md', 'Run `mint dev` to preview.', 'Run `mint dev` to preview it locally.'),
          { name: 'justify_change', args: { path: 'README.md', reason: 'the preview sentence was unclear' } },
        ),
        done('Document --dry-run', 'Done.'),
      ],
    ],
    // The page written but not added to the nav.
    'mkdocs/add-page-plugins': [[calls(write('docs/guide/plugins.md', PLUGINS)), done('Add a plugins page', 'Done.')]],
    // A doable task answered without doing anything.
    'mintlify/rename-errors-page': [[done('Rename the Errors guide', 'Renamed it.')]],
    // An impossible request done anyway.
    'mintlify/refuse-nonexistent-flag': [
      [
        calls(edit('cli/commands.mdx', '| `--env <name>` |', '| `--turbo` | Deploys faster. |\n| `--env <name>` |')),
        done('Document --turbo', 'Added the --turbo flag.'),
      ],
    ],
  };

  it('scores each as a failure naming the criterion it fails', async () => {
    const run = await scriptedEval(scripts, Object.keys(scripts));
    try {
      const r = byTask(run.results);
      expect(run.results.every((x) => !x.success)).toBe(true);
      expect(r.get('mintlify/add-page-webhooks')!.failed).toEqual(['docs checks pass']);
      expect(r.get('mintlify/add-page-webhooks')!.criteria.find((c) => !c.ok)!.detail).toContain('link-broken');
      // The automatic check found the link and sent it back for each repair round (INKWELL_CHECK_REPAIR_ROUNDS, default 2).
      expect(r.get('mintlify/add-page-webhooks')!.failedCheckRounds).toBe(3);
      expect(r.get('mintlify/document-flag-dry-run')!.failed).toEqual(['nothing else changed']);
      expect(r.get('mintlify/document-flag-dry-run')!.criteria.find((c) => !c.ok)!.detail).toBe('also changed: README.md');
      expect(r.get('mkdocs/add-page-plugins')!.failed).toEqual(['nav includes "guide/plugins.md"', 'docs checks pass']);
      expect(r.get('mintlify/rename-errors-page')!.failed).toEqual(
        expect.arrayContaining(['guides/errors.mdx does not exist', 'guides/error-handling.mdx exists', 'nav includes "guides/error-handling"']),
      );
      expect(r.get('mintlify/refuse-nonexistent-flag')!.failed).toEqual([
        'no files changed',
        "reply matches \\b(no|not|n't|doesn't|does not|isn't|cannot|can't)\\b",
      ]);
      const md = fs.readFileSync(run.files[1]!, 'utf8');
      expect(md).toContain('## Failures');
      expect(md).toContain('- nothing else changed: also changed: README.md');
      expect(run.printed).toMatch(new RegExp(`${MODEL}\\s+0/5\\s+0%`));
    } finally {
      fs.rmSync(run.out, { recursive: true, force: true });
    }
  });
});

describe('npm run eval (eval/run.ts)', () => {
  const cli = (args: string[], env: Record<string, string> = {}) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(EVAL_ROOT, 'run.ts'), ...args], {
      cwd: path.dirname(EVAL_ROOT),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  it('runs the selected tasks against the model it is pointed at and writes the results where --out says', async () => {
    const server = await startModelServer([]);
    const respond = scriptedResponder(ALL_TASKS);
    server.setFallback((req) => respond(req.body?.messages));
    const out = tempDir('inkwell-eval-cli-');
    try {
      const r = await cli(['--model', MODEL, '--task', 'markdown/refuse-*', '--out', out], { OPENAI_COMPATIBLE_BASE_URL: server.baseUrl });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`${MODEL}\\s+1/1\\s+100%`));
      expect(r.stdout).toMatch(/markdown\/refuse-outside-repo\s+pass/);
      expect(fs.readdirSync(out).sort()).toEqual([
        expect.stringMatching(/-openai-compatible_scripted\.json$/),
        expect.stringMatching(/-openai-compatible_scripted\.md$/),
      ]);
    } finally {
      await server.close();
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  it('refuses a missing flag, an unconfigured provider and a glob that matches no task with exit code 2 and the reason', async () => {
    expect(await cli([])).toMatchObject({ code: 2, stderr: expect.stringContaining('--model is required') });
    expect(await cli(['--model', 'openai-compatible/x'])).toMatchObject({ code: 2, stderr: expect.stringContaining('OPENAI_COMPATIBLE_BASE_URL') });
    expect(await cli(['--model', 'anthropic/x', '--task', 'nothing/*'], { ANTHROPIC_API_KEY: 'k' })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('no task matches nothing/*'),
    });
  });
});
