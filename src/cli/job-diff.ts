// `inkwell job diff` output: the unified diff (+ green, - red on a terminal) or a per-file summary like
// `git diff --stat`. The text is repository content written by anyone: exact bytes when piped (so it can be
// saved and applied), control characters made visible on a terminal (no escape sequence from a file runs there).
import type { JobDiff, JobDiffFile } from '../client/index.ts';
import type { Colors } from './output.ts';

/** Control characters other than tab (C0, DEL, C1) written as `\xNN`: what a terminal shows instead of obeying. Pure. */
export function visible(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
  return text.replace(/[\x00-\x08\x0a-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The unified diff for a terminal: each line made visible and coloured by its kind. Pure. */
export function colourDiff(diff: string, c: Colors): string {
  const lines = diff.split('\n');
  const last = lines.pop(); // '' after the final newline
  const out = lines.map((raw) => {
    const line = visible(raw);
    if (line.startsWith('+++ ') || line.startsWith('--- ')) return line;
    if (line.startsWith('+')) return c.green(line);
    if (line.startsWith('-')) return c.red(line);
    if (line.startsWith('@@')) return c.cyan(line);
    if (line.startsWith('diff --git ')) return c.yellow(line);
    return line;
  });
  return `${out.join('\n')}\n${last ? visible(last) : ''}`;
}

function fileLabel(f: JobDiffFile): string {
  return f.oldPath ? `${f.oldPath} → ${f.path}` : f.path;
}

/** One line per file (status, path, +added -removed or "binary") and the totals, like `git diff --stat`. Pure. */
export function statText(d: Pick<JobDiff, 'files' | 'totals'>, c: Colors, safe: (s: string) => string = (s) => s): string {
  if (d.files.length === 0) return '';
  const labels = d.files.map((f) => safe(fileLabel(f)));
  const width = Math.min(60, Math.max(...labels.map((l) => l.length)));
  const lines = d.files.map((f, i) => {
    const change = f.binary ? 'binary' : `${c.green(`+${f.additions}`)} ${c.red(`-${f.deletions}`)}`;
    return ` ${f.status.padEnd(8)} ${labels[i]!.padEnd(width)} | ${change}`;
  });
  const { files, additions, deletions } = d.totals;
  lines.push(
    ` ${files} file${files === 1 ? '' : 's'} changed, ${additions} insertion${additions === 1 ? '' : 's'}(+), ${deletions} deletion${deletions === 1 ? '' : 's'}(-)`,
  );
  return `${lines.join('\n')}\n`;
}
