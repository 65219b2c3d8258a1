// Shared CLI output: one JSON object with --json, or a readable table for people; colours only for a terminal.
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printTable(rows: Record<string, unknown>[], columns: string[]): void {
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${line(columns)}\n${line(widths.map((w) => '-'.repeat(w)))}\n`);
  for (const r of rows) process.stdout.write(`${line(columns.map((c) => cell(r[c])))}\n`);
}

/** Reports a user-facing failure and exits non-zero, without a stack trace. */
export function fail(message: string, code = 1): never {
  process.stderr.write(`inkwell: ${message}\n`);
  process.exit(code);
}

export interface Colors {
  green(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

/**
 * Whether to colour what goes to `stream`: never with NO_COLOR set (https://no-color.org), always with
 * FORCE_COLOR set to anything but 0/false, otherwise only on a terminal that has colours (not TERM=dumb).
 */
export function wantsColor(stream: { isTTY?: boolean; hasColors?: () => boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  return Boolean(stream.isTTY) && env.TERM !== 'dumb' && (stream.hasColors?.() ?? false);
}

/** ANSI colour functions for `stream`, or functions that return the text as it is. */
export function colorsFor(stream: { isTTY?: boolean; hasColors?: () => boolean }, env: NodeJS.ProcessEnv = process.env): Colors {
  const on = wantsColor(stream, env);
  const sgr = (open: number) => (s: string) => (on ? `\x1b[${open}m${s}\x1b[39m` : s);
  return { green: sgr(32), red: sgr(31), yellow: sgr(33), cyan: sgr(36) };
}
