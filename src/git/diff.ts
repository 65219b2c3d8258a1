// The diff of a job's branch against its base (the merge base with the ref it started from): per-file stats
// and the unified text, read from the mirror after a turn pushed. The text is repository content written by
// outsiders: callers store and serve it as data, never log it or put it in a message.
import { stageAll, type Workspace } from './workspace.ts';

export type DiffFileStatus = 'added' | 'modified' | 'deleted' | 'renamed';

export interface DiffFile {
  path: string;
  /** The path before a rename; null otherwise. */
  oldPath: string | null;
  status: DiffFileStatus;
  /** Lines added and removed (0 for a binary file). */
  additions: number;
  deletions: number;
  binary: boolean;
}

export interface BranchDiff {
  /** The merge base of the branch with its base ref. */
  base: string;
  head: string;
  /** Every changed file, whatever the size of the text. */
  files: DiffFile[];
  /** The unified diff (binary files as a "Binary files … differ" line), whole files up to the cap. */
  diff: string;
  /** The text stops before the end (it reached the cap); `files` is still complete. */
  truncated: boolean;
}

/** The most of the unified text kept (bytes of UTF-8). */
export const MAX_DIFF_TEXT_BYTES = 1024 * 1024;

/**
 * Flags for every diff read here: no program a config or attribute names (external diff, textconv), no
 * colour, the standard a/ b/ prefixes and whole-repository paths whatever the operator's config says.
 */
const DIFF_FLAGS = ['--no-ext-diff', '--no-textconv', '--no-color', '--no-relative', '--src-prefix=a/', '--dst-prefix=b/', '-M'];

const STATUS: Record<string, DiffFileStatus> = { A: 'added', M: 'modified', T: 'modified', D: 'deleted', R: 'renamed', C: 'added' };

/** `git diff --name-status -z` → path → status and old path. Pure. */
export function parseNameStatus(out: string): Map<string, { status: DiffFileStatus; oldPath: string | null }> {
  const tokens = out.split('\0');
  const files = new Map<string, { status: DiffFileStatus; oldPath: string | null }>();
  for (let i = 0; i < tokens.length; i++) {
    const code = tokens[i]!;
    if (code === '') continue;
    const status = STATUS[code[0]!] ?? 'modified';
    if (code[0] === 'R' || code[0] === 'C') {
      const from = tokens[++i] ?? '';
      const to = tokens[++i] ?? '';
      files.set(to, { status, oldPath: status === 'renamed' ? from : null });
    } else {
      files.set(tokens[++i] ?? '', { status, oldPath: null });
    }
  }
  return files;
}

/** `git diff --numstat -z` → path → added and deleted lines (null for a binary file). Pure. */
export function parseNumstat(out: string): Map<string, { additions: number; deletions: number } | null> {
  const tokens = out.split('\0');
  const stats = new Map<string, { additions: number; deletions: number } | null>();
  for (let i = 0; i < tokens.length; i++) {
    const m = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(tokens[i]!);
    if (!m) continue;
    // A rename: the path part is empty and the old and new paths follow as tokens of their own.
    let path = m[3]!;
    if (path === '') {
      i += 2;
      path = tokens[i] ?? '';
    }
    stats.set(path, m[1] === '-' ? null : { additions: Number(m[1]), deletions: Number(m[2]) });
  }
  return stats;
}

/** Both listings as one file list, in git's order. Pure. */
export function diffFiles(nameStatus: string, numstat: string): DiffFile[] {
  const stats = parseNumstat(numstat);
  return [...parseNameStatus(nameStatus)].map(([path, { status, oldPath }]) => {
    const s = stats.get(path);
    return { path, oldPath, status, additions: s?.additions ?? 0, deletions: s?.deletions ?? 0, binary: s === null };
  });
}

/**
 * The unified text cut to at most `maxBytes` bytes: whole files while at least one fits, else whole lines.
 * `cut` says git stopped early (its output reached the cap). Pure.
 */
export function capDiffText(text: string, maxBytes: number, cut = false): { diff: string; truncated: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (!cut && bytes.length <= maxBytes) return { diff: text, truncated: false };
  // The prefix may end inside a character (decoded as U+FFFD): the cut below is always before it.
  const prefix = bytes.subarray(0, maxBytes).toString('utf8');
  const fileEnd = prefix.lastIndexOf('\ndiff --git ');
  if (fileEnd >= 0) return { diff: prefix.slice(0, fileEnd + 1), truncated: true };
  const lineEnd = prefix.lastIndexOf('\n');
  return { diff: lineEnd >= 0 ? prefix.slice(0, lineEnd + 1) : '', truncated: true };
}

/** The commit the branch forked from `baseRef` (the tip of `baseRef` when their histories never met). */
async function mergeBase(run: Workspace['git'], baseRef: string, head: string): Promise<string> {
  const mb = await run(['merge-base', baseRef, head], { okCodes: [1] });
  if (mb.code === 0) return mb.stdout.trim();
  return (await run(['rev-parse', '--verify', `${baseRef}^{commit}`])).stdout.trim();
}

/** The diff of `head` against its merge base with `baseRef`, read in the mirror (`run` runs git there). */
export async function branchDiff(run: Workspace['git'], baseRef: string, head: string, maxBytes = MAX_DIFF_TEXT_BYTES): Promise<BranchDiff> {
  const base = await mergeBase(run, baseRef, head);
  const range = [base, head, '--'];
  const [nameStatus, numstat, text] = await Promise.all([
    run(['diff', ...DIFF_FLAGS, '--name-status', '-z', ...range]),
    run(['diff', ...DIFF_FLAGS, '--numstat', '-z', ...range]),
    // One byte over the cap tells a text of exactly the cap from a longer one.
    run(['diff', ...DIFF_FLAGS, ...range], { maxOutputBytes: maxBytes + 1 }),
  ]);
  return { base, head, files: diffFiles(nameStatus.stdout, numstat.stdout), ...capDiffText(text.stdout, maxBytes, text.truncated === true) };
}

/**
 * What the worktree holds now against the merge base of `baseRef` and its HEAD (earlier turns' commits and
 * this turn's edits, staged first): path → status and old path.
 */
export async function worktreeChanges(ws: Workspace, baseRef: string): Promise<Map<string, { status: DiffFileStatus; oldPath: string | null }>> {
  await stageAll(ws);
  const inTree: Workspace['git'] = (args, opts) => ws.git(args, { cwd: ws.dir, ...opts });
  const base = await mergeBase(inTree, baseRef, 'HEAD');
  const out = await inTree(['diff', ...DIFF_FLAGS, '--cached', '--name-status', '-z', base, '--']);
  return parseNameStatus(out.stdout);
}

/**
 * What the worktree holds now against the merge base of `baseRef` and its HEAD, staged first, as files with
 * their line counts (`binary` as git's numstat says), and that merge base.
 */
export async function worktreeDiff(ws: Workspace, baseRef: string): Promise<{ base: string; files: DiffFile[] }> {
  await stageAll(ws);
  const inTree: Workspace['git'] = (args, opts) => ws.git(args, { cwd: ws.dir, ...opts });
  const base = await mergeBase(inTree, baseRef, 'HEAD');
  const [nameStatus, numstat] = await Promise.all([
    inTree(['diff', ...DIFF_FLAGS, '--cached', '--name-status', '-z', base, '--']),
    inTree(['diff', ...DIFF_FLAGS, '--cached', '--numstat', '-z', base, '--']),
  ]);
  return { base, files: diffFiles(nameStatus.stdout, numstat.stdout) };
}
