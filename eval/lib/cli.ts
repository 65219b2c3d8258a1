// `npm run eval -- --model <provider/model> [--model …] [--task <glob>] [--concurrency N] [--out DIR]`: runs the
// tasks of eval/tasks/ with each model through the worker's executor, prints the tables and writes
// <out>/<time>-<models>.json and .md (default out: eval/results/).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { modelConfigError } from '../../src/agent/models.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { ALL_TASKS } from '../tasks/index.ts';
import { matchesAny } from './glob.ts';
import { formatMarkdown, formatText, type RunMeta, summarize } from './report.ts';
import { runTask, type TaskResult } from './runner.ts';
import type { EvalTask } from './types.ts';

export const EVAL_ROOT = path.resolve(import.meta.dirname, '..');
const USAGE = 'usage: npm run eval -- --model <provider/model> [--model …] [--task <glob>] [--concurrency N] [--out DIR]';

export interface EvalOptions {
  models: string[];
  /** Globs over task names; empty: every task. */
  taskGlobs: string[];
  concurrency: number;
  outDir: string;
}

export class UsageError extends Error {}

/** The options from argv; throws UsageError naming what is wrong. Pure. */
export function parseEvalArgs(argv: string[]): EvalOptions {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const v = parsed.values;
  const models = v.model ?? [];
  if (models.length === 0) throw new UsageError(`--model is required\n${USAGE}`);
  const concurrency = v.concurrency === undefined ? 1 : Number(v.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 32) throw new UsageError('--concurrency must be a whole number from 1 to 32');
  return { models: [...new Set(models)], taskGlobs: v.task ?? [], concurrency, outDir: path.resolve(v.out ?? path.join(EVAL_ROOT, 'results')) };
}

const OPTIONS = {
  model: { type: 'string', multiple: true },
  task: { type: 'string', multiple: true },
  concurrency: { type: 'string' },
  out: { type: 'string' },
} as const;

export function selectTasks(tasks: readonly EvalTask[], globs: readonly string[]): EvalTask[] {
  return globs.length === 0 ? [...tasks] : tasks.filter((t) => matchesAny(t.name, globs));
}

/** Runs `fn` over `items` with at most `limit` at a time, results in input order; none is started once `signal` aborts. */
async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>, signal?: AbortSignal): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length && !signal?.aborted) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out.filter((r) => r !== undefined);
}

function commitOf(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: EVAL_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

export interface EvalRun {
  results: TaskResult[];
  /** The JSON and Markdown files written. */
  files: string[];
}

/**
 * Runs the eval. `env` gives the model keys and base URLs (the server's variables: ANTHROPIC_API_KEY,
 * OPENAI_COMPATIBLE_BASE_URL, INKWELL_MODEL_PRICES, …); jobs run in a temporary data directory.
 */
export async function runEval(options: EvalOptions, env: NodeJS.ProcessEnv, print: (line: string) => void, signal?: AbortSignal): Promise<EvalRun> {
  const tasks = selectTasks(ALL_TASKS, options.taskGlobs);
  if (tasks.length === 0) throw new UsageError(`no task matches ${options.taskGlobs.join(', ')}`);
  const dataDir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'inkwell-eval-data-')));
  const config: Config = loadConfig({
    ...env,
    LOG_LEVEL: env.INKWELL_EVAL_LOG_LEVEL ?? 'silent',
    INKWELL_LOG_PRETTY: '0',
    INKWELL_WORKTREE_POOL: '0',
    INKWELL_DATA_DIR: dataDir,
  });
  for (const model of options.models) {
    const problem = modelConfigError(model, config);
    if (problem) throw new UsageError(problem);
  }
  const logger = createLogger(config);
  const runId = Date.now().toString(36);
  const startedAt = new Date().toISOString();
  const pairs = options.models.flatMap((model) => tasks.map((task) => ({ model, task })));
  let done = 0;
  try {
    const results = await pool(
      pairs,
      options.concurrency,
      async ({ model, task }) => {
        const r = await runTask({
          task,
          model,
          fixtureDir: path.join(EVAL_ROOT, 'fixtures', task.fixture),
          config,
          logger,
          runId,
          signal: signal ?? new AbortController().signal,
        });
        done++;
        print(`[${done}/${pairs.length}] ${model} ${task.name}: ${r.success ? 'pass' : `FAIL (${r.failed.join('; ')})`} ${(r.wallMs / 1000).toFixed(1)} s`);
        return r;
      },
      signal,
    );
    if (signal?.aborted) print(`interrupted: ${results.length} of ${pairs.length} task runs done; saving those`);
    print('');
    print(formatText(results));
    const meta: RunMeta = {
      startedAt,
      finishedAt: new Date().toISOString(),
      concurrency: options.concurrency,
      commit: commitOf(),
      node: process.versions.node,
    };
    await fs.mkdir(options.outDir, { recursive: true });
    const stem = `${startedAt.replace(/[:.]/g, '-').slice(0, 19)}-${options.models.map((m) => m.replace(/[^a-z0-9.-]+/gi, '_')).join('+')}`.slice(0, 150);
    const json = path.join(options.outDir, `${stem}.json`);
    const md = path.join(options.outDir, `${stem}.md`);
    await fs.writeFile(json, `${JSON.stringify({ meta, summary: summarize(results), results }, null, 2)}\n`);
    await fs.writeFile(md, formatMarkdown(results, meta));
    print(`results: ${path.relative(process.cwd(), json)}, ${path.relative(process.cwd(), md)}`);
    return { results, files: [json, md] };
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/** The CLI: exit code 0 when the eval ran (failed tasks are results), 2 on a usage or configuration error. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const controller = new AbortController();
  const onSigint = () => controller.abort(new Error('interrupted'));
  process.once('SIGINT', onSigint);
  try {
    await runEval(parseEvalArgs(argv), env, (line) => console.log(line), controller.signal);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(err.message);
      return 2;
    }
    throw err;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
