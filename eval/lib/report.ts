// Results as figures: one summary row per model and one detail row per task run, as aligned text for the
// terminal and as Markdown for eval/results/. Pure.
import type { TaskResult } from './runner.ts';

export interface ModelSummary {
  model: string;
  tasks: number;
  passed: number;
  /** passed / tasks, 0–1. */
  successRate: number;
  /** Median model steps per task (tasks whose steps are known). */
  medianSteps: number | null;
  inputTokens: number;
  outputTokens: number;
  /** Median wall time of a task (all its turns), ms. */
  medianWallMs: number;
  /** Sum over tasks, USD; null when the model's price is unknown. */
  costUsd: number | null;
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function summarize(results: readonly TaskResult[]): ModelSummary[] {
  const models = [...new Set(results.map((r) => r.model))];
  return models.map((model) => {
    const rs = results.filter((r) => r.model === model);
    const passed = rs.filter((r) => r.success).length;
    const costs = rs.map((r) => r.costUsd);
    return {
      model,
      tasks: rs.length,
      passed,
      successRate: rs.length ? passed / rs.length : 0,
      medianSteps: median(rs.flatMap((r) => (r.steps === null ? [] : [r.steps]))),
      inputTokens: rs.reduce((n, r) => n + r.inputTokens, 0),
      outputTokens: rs.reduce((n, r) => n + r.outputTokens, 0),
      medianWallMs: median(rs.map((r) => r.wallMs)) ?? 0,
      costUsd: costs.some((c) => c === null) ? null : costs.reduce((n: number, c) => n + (c ?? 0), 0),
    };
  });
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const usd = (c: number | null) => (c === null ? 'n/a' : `$${c.toFixed(c < 1 ? 4 : 2)}`);
const int = (n: number) => n.toLocaleString('en-US');

function summaryRows(summaries: readonly ModelSummary[]): string[][] {
  return [
    ['model', 'passed', 'success', 'median steps', 'input tokens', 'output tokens', 'median wall', 'cost'],
    ...summaries.map((s) => [
      s.model,
      `${s.passed}/${s.tasks}`,
      pct(s.successRate),
      s.medianSteps === null ? 'n/a' : String(s.medianSteps),
      int(s.inputTokens),
      int(s.outputTokens),
      secs(s.medianWallMs),
      usd(s.costUsd),
    ]),
  ];
}

function detailRows(results: readonly TaskResult[], multiModel: boolean): string[][] {
  return [
    [...(multiModel ? ['model'] : []), 'task', 'result', 'steps', 'tokens in/out', 'wall', 'cost', 'failed criteria'],
    ...results.map((r) => [
      ...(multiModel ? [r.model] : []),
      r.task,
      r.success ? 'pass' : 'FAIL',
      r.steps === null ? '-' : String(r.steps),
      `${int(r.inputTokens)}/${int(r.outputTokens)}`,
      secs(r.wallMs),
      usd(r.costUsd),
      r.failed.join('; '),
    ]),
  ];
}

function textTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const mdCell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function mdTable(rows: string[][]): string {
  const [head, ...body] = rows;
  return [head!, head!.map(() => '---'), ...body].map((r) => `| ${r.map(mdCell).join(' | ')} |`).join('\n');
}

/** Tasks passed per kind and model: where a model is weak. */
function kindRows(results: readonly TaskResult[]): string[][] {
  const models = [...new Set(results.map((r) => r.model))];
  const kinds = [...new Set(results.map((r) => r.kind))];
  return [
    ['kind', ...models],
    ...kinds.map((kind) => [
      kind,
      ...models.map((m) => {
        const rs = results.filter((r) => r.model === m && r.kind === kind);
        return `${rs.filter((r) => r.success).length}/${rs.length}`;
      }),
    ]),
  ];
}

/** What the terminal shows: the summary table, passes per kind, then each task. */
export function formatText(results: readonly TaskResult[]): string {
  const multi = new Set(results.map((r) => r.model)).size > 1;
  return `${textTable(summaryRows(summarize(results)))}\n\n${textTable(kindRows(results))}\n\n${textTable(detailRows(results, multi))}\n`;
}

export interface RunMeta {
  startedAt: string;
  finishedAt: string;
  concurrency: number;
  /** Inkwell's commit, when known. */
  commit: string | null;
  node: string;
}

/** The Markdown results file: summary, per-task detail, and each failure's criteria and final reply. */
export function formatMarkdown(results: readonly TaskResult[], meta: RunMeta): string {
  const multi = new Set(results.map((r) => r.model)).size > 1;
  const failures = results.filter((r) => !r.success);
  const lines = [
    `# Eval results ${meta.startedAt}`,
    '',
    `Inkwell ${meta.commit ?? '(commit unknown)'}, Node ${meta.node}, concurrency ${meta.concurrency}; finished ${meta.finishedAt}.`,
    '',
    mdTable(summaryRows(summarize(results))),
    '',
    '## By kind',
    '',
    mdTable(kindRows(results)),
    '',
    '## Tasks',
    '',
    mdTable(detailRows(results, multi)),
  ];
  if (failures.length > 0) {
    lines.push('', '## Failures', '');
    for (const r of failures) {
      lines.push(`### ${r.task}${multi ? ` (${r.model})` : ''}`, '');
      for (const c of r.criteria.filter((c) => !c.ok)) lines.push(`- ${c.criterion}${c.detail ? `: ${c.detail}` : ''}`);
      if (r.summary) lines.push('', 'Final reply:', '', ...r.summary.split('\n').map((l) => `> ${l}`));
      lines.push('');
    }
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
