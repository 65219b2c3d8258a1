// A unified diff (as `git diff` writes it) cut into its files and lines, for display.

export type LineKind = 'add' | 'del' | 'ctx' | 'hunk' | 'meta';

export interface DiffLine {
  kind: LineKind;
  /** The line without its +/-/space prefix (hunk and meta lines: whole). */
  text: string;
}

export interface DiffFileText {
  /** The path on the `diff --git a/… b/…` line's new side. */
  path: string;
  lines: DiffLine[];
}

function lineOf(raw: string, inHunk: boolean): DiffLine {
  if (raw.startsWith('@@')) return { kind: 'hunk', text: raw };
  if (!inHunk) return { kind: 'meta', text: raw };
  if (raw.startsWith('+')) return { kind: 'add', text: raw.slice(1) };
  if (raw.startsWith('-')) return { kind: 'del', text: raw.slice(1) };
  if (raw.startsWith('\\')) return { kind: 'meta', text: raw };
  return { kind: 'ctx', text: raw.slice(1) };
}

/** The files of a unified diff, each with its lines (the last, unfinished one of a truncated diff too). */
export function parseDiff(text: string): DiffFileText[] {
  const files: DiffFileText[] = [];
  let current: DiffFileText | null = null;
  let inHunk = false;
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const raw of lines) {
    if (raw.startsWith('diff --git ')) {
      // `diff --git a/path b/path`: the new side (paths with spaces keep them; quoted paths stay quoted).
      const path = / b\/(.*)$/.exec(raw)?.[1] ?? raw.slice('diff --git '.length);
      current = { path, lines: [] };
      files.push(current);
      inHunk = false;
      continue;
    }
    if (!current) continue;
    if (raw.startsWith('@@')) inHunk = true;
    current.lines.push(lineOf(raw, inHunk));
  }
  return files;
}
