// `inkwell analytics …`: import access logs and reclassify (straight on the database), and walk the
// visitors / views exports through the HTTP API.
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { ImportStats, LogFormat } from '../analytics/ingest/import.ts';
import { ApiError, createAnalyticsClient, type PathCounts } from '../client/analytics.ts';
import { withContext } from './db.ts';
import { fail, printJson, printTable } from './output.ts';
import { createProgress, MIN_LIVE_COLUMNS } from './progress.ts';
import { registerProjectSettingsCommands } from './project-settings.ts';

const DEFAULT_URL = 'http://127.0.0.1:3000';
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

function registerExportCommand(analytics: Command, kind: 'visitors' | 'views'): void {
  analytics
    .command(kind)
    .description(
      kind === 'visitors'
        ? 'Unique visitors per page and site-wide (human / AI), every page of the export through the API'
        : 'Qualifying page views per page and site-wide (human / AI), every page of the export through the API',
    )
    .requiredOption('--project <id>', 'project id')
    .option('--from <date>', 'dateFrom: YYYY-MM-DD or ISO 8601 date-time (inclusive)')
    .option('--to <date>', 'dateTo: YYYY-MM-DD or ISO 8601 date-time (exclusive)')
    .option('--format <format>', 'table, csv or json', 'table')
    .option('--page-size <n>', 'rows per request (1–250)', '250')
    .option('--url <url>', `API base URL (env INKWELL_URL, default ${DEFAULT_URL})`)
    .option('--key <key>', 'admin key (env INKWELL_API_KEY)')
    .action(async (opts: { project: string; from?: string; to?: string; format: string; pageSize: string; url?: string; key?: string }) => {
      if (!['table', 'csv', 'json'].includes(opts.format)) fail(`--format must be table, csv or json (got ${JSON.stringify(opts.format)})`);
      if (!/^\d+$/.test(opts.pageSize) || Number(opts.pageSize) < 1 || Number(opts.pageSize) > 250) fail('--page-size must be an integer from 1 to 250');
      const url = opts.url ?? process.env.INKWELL_URL ?? DEFAULT_URL;
      const key = opts.key ?? process.env.INKWELL_API_KEY;
      if (!key) fail('an admin key is needed: pass --key or set INKWELL_API_KEY');
      try {
        new URL(url);
      } catch {
        fail(`--url / INKWELL_URL must be an absolute http(s) URL (got ${JSON.stringify(url)})`);
      }
      const client = createAnalyticsClient({ baseUrl: url, key });
      const spinner = process.stderr.isTTY ? createProgress(`Fetching ${kind}…`) : null;
      const rows: PathCounts[] = [];
      let totals = { human: 0, ai: 0, total: 0 };
      let pages = 0;
      try {
        for await (const page of client.walk(opts.project, kind, {
          ...(opts.from ? { dateFrom: opts.from } : {}),
          ...(opts.to ? { dateTo: opts.to } : {}),
          limit: Number(opts.pageSize),
        })) {
          pages++;
          totals = page.totals;
          rows.push(...page.rows);
          spinner?.status(`Fetched ${rows.length} paths (${pages} page${pages === 1 ? '' : 's'})`);
        }
        spinner?.end('ok', `Fetched ${rows.length} paths in ${pages} page${pages === 1 ? '' : 's'}`);
      } catch (err) {
        spinner?.stop();
        if (err instanceof ApiError) {
          const lines = [`${err.message} (HTTP ${err.status}, ${err.code})`];
          for (const d of err.details) if (d.message !== err.message) lines.push(`  - ${d.path ? `${d.path}: ` : ''}${d.message}`);
          fail(lines.join('\n'));
        }
        const cause = (err as { cause?: { code?: string } })?.cause;
        if (cause?.code) fail(`cannot reach the Inkwell API at ${url} (${cause.code}); is \`inkwell serve\` running? Set --url or INKWELL_URL.`);
        throw err;
      }
      if (opts.format === 'json') printJson({ totals, [kind]: rows });
      else if (opts.format === 'csv') {
        const out = ['path,human,ai,total', ...rows.map((r) => [r.path, r.human, r.ai, r.total].map(csvCell).join(','))];
        process.stdout.write(`${out.join('\n')}\n`);
      } else {
        process.stdout.write(`Site-wide: ${totals.human} human, ${totals.ai} AI, ${totals.total} total${kind === 'visitors' ? ' (distinct)' : ''}\n\n`);
        printTable(rows as unknown as Record<string, unknown>[], ['path', 'human', 'ai', 'total']);
      }
    });
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
      const [{ createAnalyticsService }, { importFile }] = await Promise.all([import('../analytics/service.ts'), import('../analytics/ingest/import.ts')]);
      const results = await withContext(async (ctx) => {
        await requireProject(opts.project, ctx);
        const svc = createAnalyticsService(ctx);
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
      const { createAnalyticsService } = await import('../analytics/service.ts');
      const result = await withContext(async (ctx) => {
        await requireProject(opts.project, ctx);
        const svc = createAnalyticsService(ctx);
        const bar = await progress('reclassify', 'events');
        try {
          return await svc.reclassify(opts.project, (done, total) => bar.update(done, total, `${done} of ${total} events`));
        } finally {
          bar.stop();
        }
      });
      if (opts.json) printJson(result);
      else process.stdout.write(`Reclassified ${result.scanned} events: ${result.changed} changed; daily visitor sets rebuilt.\n`);
    });

  registerExportCommand(analytics, 'visitors');
  registerExportCommand(analytics, 'views');
  registerProjectSettingsCommands(program);
}
