// `inkwell analytics …`: import access logs and reclassify (straight on the database); walk the visitors /
// views exports and read the series, agents and referrers through the HTTP API.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { ImportStats, LogFormat } from '../analytics/import/import.ts';
import { createAnalyticsClient, type PathCounts } from '../client/analytics.ts';
import { type ConnectionOptions, connection, explainApiError, withConnectionOptions } from './api-connection.ts';
import { withContext } from './db.ts';
import { reexecWithNodeFlags, TWO_MALLOC_ARENAS } from './node-flags.ts';
import { fail, printJson, printTable } from './output.ts';
import { createProgress, MIN_LIVE_COLUMNS } from './progress.ts';
import { registerProjectSettingsCommands } from './project-settings.ts';

const PLAIN_PROGRESS_MS = 2000;

/**
 * A progress reporter: a bar on a terminal wide enough for one, a line every few seconds otherwise (logs, CI).
 * cli-progress is loaded only when a bar is drawn.
 */
async function progress(label: string, unit: string) {
  const tty = Boolean(process.stderr.isTTY) && (process.stderr.columns ?? 0) >= MIN_LIVE_COLUMNS && process.env.TERM !== 'dumb';
  const cliProgress = tty ? (await import('cli-progress')).default : null;
  const bar = cliProgress
    ? new cliProgress.SingleBar(
        { format: `${label} [{bar}] {percentage}% | {info}`, stream: process.stderr, hideCursor: true, etaBuffer: 20 },
        cliProgress.Presets.shades_classic,
      )
    : null;
  let started = false;
  let lastLine = 0;
  return {
    update(value: number, total: number, info: string) {
      if (bar) {
        if (!started) bar.start(Math.max(total, 1), 0, { info });
        started = true;
        bar.setTotal(Math.max(total, 1));
        bar.update(value, { info });
        return;
      }
      const now = Date.now();
      if (now - lastLine >= PLAIN_PROGRESS_MS) {
        lastLine = now;
        const pct = total > 0 ? Math.floor((100 * value) / total) : 100;
        process.stderr.write(`${label}: ${pct}% of ${total} ${unit} | ${info}\n`);
      }
    },
    stop() {
      if (bar && started) bar.stop();
    },
  };
}

function statsInfo(s: ImportStats, startedAt: number): string {
  const secs = Math.max(0.001, (Date.now() - startedAt) / 1000);
  return `${s.lines} lines, ${s.inserted} new, ${s.accepted - s.inserted} already imported, ${s.rejected + s.unparseable} skipped | ${Math.round(s.accepted / secs)} events/s`;
}

function csvCell(v: string | number): string {
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

async function requireProject(projectId: string, ctx: Parameters<Parameters<typeof withContext>[0]>[0]): Promise<void> {
  if (!(await ctx.projects.getProject(projectId))) fail(`project ${projectId} not found`);
}

interface ApiCommandOptions extends ConnectionOptions {
  project: string;
  from?: string;
  to?: string;
  format: string;
}

/** A command that reads from the API: project, range, output format, URL and key. */
function apiCommand(analytics: Command, name: string, description: string): Command {
  return withConnectionOptions(
    analytics
      .command(name)
      .description(description)
      .requiredOption('--project <id>', 'project id')
      .option('--from <date>', 'dateFrom: YYYY-MM-DD or ISO 8601 date-time (inclusive)')
      .option('--to <date>', 'dateTo: YYYY-MM-DD or ISO 8601 date-time (exclusive)')
      .option('--format <format>', 'table, csv or json', 'table'),
  );
}

/** The client for an API command's options (checked first, each failure naming its option), and the range query. */
function apiClient(opts: ApiCommandOptions) {
  if (!['table', 'csv', 'json'].includes(opts.format)) fail(`--format must be table, csv or json (got ${JSON.stringify(opts.format)})`);
  const { url, key } = connection(opts);
  const range = { ...(opts.from ? { dateFrom: opts.from } : {}), ...(opts.to ? { dateTo: opts.to } : {}) };
  return { client: createAnalyticsClient({ baseUrl: url, key }), url, range };
}

function printCsv(rows: readonly Record<string, unknown>[], columns: readonly string[]): void {
  const cell = (v: unknown) => csvCell(v === null || v === undefined ? '' : typeof v === 'number' ? v : String(v));
  process.stdout.write(`${[columns.join(','), ...rows.map((r) => columns.map((c) => cell(r[c])).join(','))].join('\n')}\n`);
}

/** Every row of a paged list (agents, referrers), offset += limit while hasMore. */
async function allPages<T>(fetchPage: (offset: number, limit: number) => Promise<{ rows: T[]; hasMore: boolean }>): Promise<T[]> {
  const rows: T[] = [];
  for (let offset = 0; ; offset += 250) {
    const page = await fetchPage(offset, 250);
    rows.push(...page.rows);
    if (!page.hasMore || page.rows.length === 0) return rows;
  }
}

function registerExportCommand(analytics: Command, kind: 'visitors' | 'views'): void {
  apiCommand(
    analytics,
    kind,
    kind === 'visitors'
      ? 'Unique visitors per page and site-wide (human / AI), every page of the export through the API'
      : 'Qualifying page views per page and site-wide (human / AI), every page of the export through the API',
  )
    .option('--page-size <n>', 'rows per request (1–250)', '250')
    .action(async (opts: ApiCommandOptions & { pageSize: string }) => {
      if (!/^\d+$/.test(opts.pageSize) || Number(opts.pageSize) < 1 || Number(opts.pageSize) > 250) fail('--page-size must be an integer from 1 to 250');
      const { client, url, range } = apiClient(opts);
      const spinner = process.stderr.isTTY ? createProgress(`Fetching ${kind}…`) : null;
      const rows: PathCounts[] = [];
      let totals = { human: 0, ai: 0, total: 0 };
      let pages = 0;
      try {
        for await (const page of client.walk(opts.project, kind, { ...range, limit: Number(opts.pageSize) })) {
          pages++;
          totals = page.totals;
          rows.push(...page.rows);
          spinner?.status(`Fetched ${rows.length} paths (${pages} page${pages === 1 ? '' : 's'})`);
        }
        spinner?.end('ok', `Fetched ${rows.length} paths in ${pages} page${pages === 1 ? '' : 's'}`);
      } catch (err) {
        spinner?.stop();
        explainApiError(err, url);
      }
      if (opts.format === 'json') printJson({ totals, [kind]: rows });
      else if (opts.format === 'csv') printCsv(rows, ['path', 'human', 'ai', 'total']);
      else {
        process.stdout.write(`Site-wide: ${totals.human} human, ${totals.ai} AI, ${totals.total} total${kind === 'visitors' ? ' (distinct)' : ''}\n\n`);
        printTable(rows as unknown as Record<string, unknown>[], ['path', 'human', 'ai', 'total']);
      }
    });
}

/** `analytics series`, `agents` and `referrers`: the dashboard's reads on the command line. */
function registerInsightCommands(analytics: Command): void {
  apiCommand(analytics, 'series', 'Unique visitors (human / AI / total) and crawler requests per day, week or month')
    .option('--interval <interval>', 'day, week or month', 'day')
    .action(async (opts: ApiCommandOptions & { interval: string }) => {
      const { client, url, range } = apiClient(opts);
      if (!['day', 'week', 'month'].includes(opts.interval)) fail(`--interval must be day, week or month (got ${JSON.stringify(opts.interval)})`);
      const series = await client
        .series(opts.project, { ...range, interval: opts.interval as 'day' | 'week' | 'month' })
        .catch((err) => explainApiError(err, url));
      const columns = ['date', 'human', 'ai', 'total', 'crawlerRequests'];
      if (opts.format === 'json') printJson(series);
      else if (opts.format === 'csv') printCsv(series.series, columns);
      else {
        const t = series.totals;
        process.stdout.write(`Whole range: ${t.human} human, ${t.ai} AI, ${t.total} total (distinct); ${t.crawlerRequests} crawler requests\n\n`);
        printTable(series.series as unknown as Record<string, unknown>[], columns);
      }
    });

  apiCommand(analytics, 'agents', 'AI assistants and crawlers by name: distinct visitors, page views and requests').action(async (opts: ApiCommandOptions) => {
    const { client, url, range } = apiClient(opts);
    const rows = await allPages(async (offset, limit) => {
      const page = await client.agents(opts.project, { ...range, offset, limit });
      return { rows: page.agents, hasMore: page.hasMore };
    }).catch((err) => explainApiError(err, url));
    const columns = ['agent', 'class', 'category', 'visitors', 'views', 'requests'];
    if (opts.format === 'json') printJson({ agents: rows });
    else if (opts.format === 'csv') printCsv(rows, columns);
    else printTable(rows.map((r) => ({ ...r, category: r.category ?? '-' })) as unknown as Record<string, unknown>[], columns);
  });

  apiCommand(analytics, 'referrers', 'Qualifying views by referrer host: distinct visitors and views').action(async (opts: ApiCommandOptions) => {
    const { client, url, range } = apiClient(opts);
    const rows = await allPages(async (offset, limit) => {
      const page = await client.referrers(opts.project, { ...range, offset, limit });
      return { rows: page.referrers, hasMore: page.hasMore };
    }).catch((err) => explainApiError(err, url));
    const columns = ['host', 'visitors', 'views'];
    if (opts.format === 'json') printJson({ referrers: rows });
    else if (opts.format === 'csv') printCsv(rows, columns);
    else printTable(rows as unknown as Record<string, unknown>[], columns);
  });
}

/**
 * V8 settings of an import's process: semi-spaces of 8 MiB (Node's default lets the young generation of this thread
 * grow to 134 MB) and old-space growth of 30% over what each full GC leaves (the default lets it reach several times
 * the live data). An import allocates a lot of short-lived data at a steady rate, so a small, often-collected heap
 * suffices: with import.ts IMPORT_WRITER's bounds, peak RSS of a 1M-line import (bench:import) fell from 577 to
 * 358 MB for about a sixth more CPU (one run each on the loaded 2-core machine; bench/README.md has the figures).
 */
const IMPORT_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=30'];

/**
 * The environment an import's process is re-executed with (unless set already): two malloc arenas (node-flags.ts).
 * Peak RSS of the 1M-line import (bench:import's log, one process, 2-core machine): 305–314 MB without, 283–291 MB
 * with two (CPU within the runs' noise).
 */
const IMPORT_ENV = TWO_MALLOC_ARENAS;

/** `inkwell analytics import` runs with IMPORT_NODE_FLAGS and IMPORT_ENV (node-flags.ts; INKWELL_IMPORT_NODE_FLAGS=0 keeps the defaults). */
function reexecWithImportHeap(): void {
  reexecWithNodeFlags(IMPORT_NODE_FLAGS, 'INKWELL_IMPORT_NODE_FLAGS', IMPORT_ENV);
}

export function registerAnalyticsCommands(program: Command): void {
  const analytics = program.command('analytics').description('Visitor analytics: import logs, reclassify, export');

  analytics
    .command('import')
    .description('Import web-server access logs (nginx/Apache combined format, or JSON lines of events); importing the same file twice adds nothing')
    .requiredOption('--project <id>', 'project id')
    .option('--format <format>', 'combined or jsonl', 'combined')
    .option('--json', 'print one JSON object')
    .argument('<files...>', 'log files')
    .action(async (files: string[], opts: { project: string; format: string; json?: boolean }) => {
      reexecWithImportHeap();
      if (opts.format !== 'combined' && opts.format !== 'jsonl') fail(`--format must be combined or jsonl (got ${JSON.stringify(opts.format)})`);
      for (const f of files) {
        let st: fs.Stats;
        try {
          st = fs.statSync(f);
        } catch {
          fail(`cannot read ${f}: no such file`);
        }
        if (!st.isFile()) fail(`${f} is not a file`);
      }
      const [{ wireAnalytics }, { importFile, IMPORT_DICTIONARY_CACHE, IMPORT_WRITER }] = await Promise.all([
        import('../context.ts'),
        import('../analytics/import/import.ts'),
      ]);
      const results = await withContext(async (ctx) => {
        await requireProject(opts.project, ctx);
        // Bounded memory for the import (import.ts IMPORT_WRITER says why these settings).
        const analytics = { ...ctx.config.analytics, dictionaryCacheEntries: Math.min(ctx.config.analytics.dictionaryCacheEntries, IMPORT_DICTIONARY_CACHE) };
        const svc = await wireAnalytics({ ...ctx, config: { ...ctx.config, analytics } }, undefined, { writerThread: IMPORT_WRITER });
        const out: { file: string; stats: ImportStats }[] = [];
        for (const file of files) {
          const startedAt = Date.now();
          const bar = await progress(`import ${path.basename(file)}`, 'bytes');
          try {
            const stats = await importFile(svc.ingest, {
              projectId: opts.project,
              format: opts.format as LogFormat,
              file,
              onProgress: (done, total, s) => bar.update(done, total, statsInfo(s, startedAt)),
            });
            out.push({ file, stats });
          } finally {
            bar.stop();
          }
        }
        return out;
      });
      if (opts.json) {
        printJson({ files: results });
        return;
      }
      for (const { file, stats } of results) {
        process.stdout.write(
          `${file}: ${stats.lines} lines, ${stats.inserted} events imported, ${stats.accepted - stats.inserted} already imported, ${stats.unparseable} unparseable, ${stats.rejected} rejected\n`,
        );
        for (const s of stats.samples) process.stdout.write(`  line ${s.line}: ${s.error}\n`);
      }
    });

  analytics
    .command('reclassify')
    .description('Re-derive the class of every stored event from its user agent, path and Accept header with the current rules')
    .requiredOption('--project <id>', 'project id')
    .option('--json', 'print one JSON object')
    .action(async (opts: { project: string; json?: boolean }) => {
      const { wireAnalytics } = await import('../context.ts');
      const result = await withContext(async (ctx) => {
        await requireProject(opts.project, ctx);
        const svc = await wireAnalytics(ctx);
        const bar = await progress('reclassify', 'events');
        try {
          return await svc.store.reclassify(opts.project, (done, total) => bar.update(done, total, `${done} of ${total} events`));
        } finally {
          bar.stop();
        }
      });
      if (opts.json) printJson(result);
      else process.stdout.write(`Reclassified ${result.scanned} events: ${result.changed} changed; daily visitor sets rebuilt.\n`);
    });

  registerExportCommand(analytics, 'visitors');
  registerExportCommand(analytics, 'views');
  registerInsightCommands(analytics);
  registerProjectSettingsCommands(program);
}
