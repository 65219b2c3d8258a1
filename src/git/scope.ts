// The git facts the scope check needs (src/agent/scope.ts): which changed paths the base's .gitattributes mark
// `linguist-generated`, the first bytes of a file as staged or as it is at the base, and putting a path back as it
// is at the base. Every call runs the hardened git of the workspace in the job's worktree; paths are literal.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GitError } from './run.ts';
import type { Workspace, WorkspaceGitOptions } from './workspace.ts';

/** Most bytes of .gitattributes files (at the base, in the folders of the paths asked about) that are read. */
export const MAX_ATTRIBUTES_BYTES = 128 * 1024;
/** Most paths whose attributes are asked for in one check. */
export const MAX_ATTRIBUTE_PATHS = 500;
/** Most characters of paths given to one git command (well under the system's argument limit). */
const MAX_ARG_CHARS = 200_000;
const ATTRIBUTES_TIMEOUT_MS = 10_000;

// Paths given on the command line are names, never patterns.
const LITERAL = { GIT_LITERAL_PATHSPECS: '1' };

function inTree(ws: Workspace, args: string[], opts: WorkspaceGitOptions = {}) {
  return ws.git(args, { cwd: ws.dir, ...opts, env: { ...LITERAL, ...opts.env } });
}

/** The .gitattributes files that can apply to `paths`: the root's and one per folder on the way. Pure. */
export function attributeFilesFor(paths: readonly string[]): string[] {
  const out = new Set<string>(['.gitattributes']);
  for (const p of paths) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) out.add(`${parts.slice(0, i).join('/')}/.gitattributes`);
  }
  return [...out].sort();
}

/** The first items of `items` whose lengths add up to at most `max` characters. Pure. */
function withinChars(items: readonly string[], max: number): string[] {
  const out: string[] = [];
  let total = 0;
  for (const item of items) {
    total += item.length + 1;
    if (total > max) break;
    out.push(item);
  }
  return out;
}

export interface GeneratedMarks {
  /** Paths the base's attributes mark `linguist-generated` (set or `=true`). */
  generated: Set<string>;
  /** Why some paths were not looked at, or null. */
  note: string | null;
}

/**
 * Which of `paths` the .gitattributes files of commit `base` mark `linguist-generated`, read by git itself
 * (`check-attr --cached` over a temporary index of `base`, so edits the run made to .gitattributes do not
 * count). Bounded: the attribute files that apply must total at most MAX_ATTRIBUTES_BYTES (else none are
 * read), at most MAX_ATTRIBUTE_PATHS paths are asked about, and git gets 10 s (a hostile file of many
 * patterns costs git time per path and pattern).
 */
export async function generatedByAttributes(ws: Workspace, base: string, paths: readonly string[]): Promise<GeneratedMarks> {
  const generated = new Set<string>();
  const asked = withinChars(paths.slice(0, MAX_ATTRIBUTE_PATHS), MAX_ARG_CHARS);
  let note = asked.length < paths.length ? `only the first ${asked.length} changed files were looked up in .gitattributes` : null;
  if (asked.length === 0) return { generated, note };
  const candidates = attributeFilesFor(asked);
  const files = withinChars(candidates, MAX_ARG_CHARS);
  if (files.length < candidates.length) return { generated, note: 'the changed files sit in too many folders to read their .gitattributes' };
  const listed = await inTree(ws, ['ls-tree', '-l', '-z', base, '--', ...files]);
  let bytes = 0;
  let found = 0;
  for (const entry of listed.stdout.split('\0')) {
    const m = /^\d+ blob [0-9a-f]+ +(\d+)\t/.exec(entry);
    if (!m) continue;
    found++;
    bytes += Number(m[1]);
  }
  if (found === 0) return { generated, note };
  if (bytes > MAX_ATTRIBUTES_BYTES) {
    return {
      generated,
      note: `the .gitattributes files are ${bytes} bytes (over ${MAX_ATTRIBUTES_BYTES}): files marked linguist-generated there were not detected`,
    };
  }
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'inkwell-attr-'));
  try {
    const env = { GIT_INDEX_FILE: path.join(tmp, 'index') };
    await inTree(ws, ['read-tree', base], { env });
    const out = await inTree(ws, ['check-attr', '--cached', '-z', 'linguist-generated', '--', ...asked], { env, timeoutMs: ATTRIBUTES_TIMEOUT_MS });
    const tokens = out.stdout.split('\0');
    for (let i = 0; i + 2 < tokens.length; i += 3) {
      const value = tokens[i + 2];
      if (value === 'set' || value === 'true') generated.add(tokens[i]!);
    }
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    note = 'git could not read the .gitattributes files in time: files marked linguist-generated there were not detected';
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
  return { generated, note };
}

/**
 * The first `bytes` bytes of a blob as text: `:path` for the staged file, `<commit>:path` for the file at a
 * commit; null when there is none.
 */
export async function blobHead(ws: Workspace, spec: string, bytes: number): Promise<string | null> {
  const r = await inTree(ws, ['cat-file', 'blob', spec], { maxOutputBytes: bytes, okCodes: [128] });
  return r.code === 0 ? r.stdout : null;
}

/** Which of `paths` are entries of commit `base` (one `ls-tree`). */
export async function listedAt(ws: Workspace, base: string, paths: readonly string[]): Promise<string[]> {
  const r = await inTree(ws, ['ls-tree', '--name-only', '-z', base, '--', ...paths]);
  return r.stdout.split('\0').filter((p) => p !== '');
}

/**
 * Puts `rel` back as it is at `base` in the index and the worktree (git writes it without following a link on
 * the way). A path absent at `base` is only dropped from the index: the caller removes the worktree's file.
 */
export async function restoreFromBase(ws: Workspace, base: string, rel: string, atBase: boolean): Promise<void> {
  if (atBase) await inTree(ws, ['checkout', base, '--', rel]);
  else await inTree(ws, ['rm', '--cached', '--quiet', '--ignore-unmatch', '--', rel]);
}
