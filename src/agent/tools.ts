// The agent's seven tools. Names and argument names are part of the contract (SPEC 3.4).
// Every failure is returned to the model as a readable "Error: …" result, never thrown, so one bad
// call does not end the run. Events carry summaries, never file contents.
import fs from 'node:fs/promises';
import path from 'node:path';
import { type ToolSet, tool } from 'ai';
import { z } from 'zod';
import { checkToolPath, isGitInternal, isInside, relativeTo } from './paths.ts';
import { searchFiles } from './search.ts';

export const TOOL_NAMES = ['list_files', 'read_file', 'search', 'write_file', 'edit_file', 'delete_file', 'move_file'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export const LIMITS = {
  listEntries: 500,
  readLines: 2000,
  readChars: 200_000,
  writeBytes: 2 * 1024 * 1024,
  searchMatches: 100,
  searchFileBytes: 1024 * 1024,
  searchLineChars: 300,
  searchTimeoutMs: 10_000,
  summaryChars: 300,
} as const;

export interface ToolEventSink {
  toolCall(id: string, tool: ToolName, args: Record<string, unknown>): Promise<void>;
  toolResult(id: string, tool: ToolName, ok: boolean, summary: string): Promise<void>;
}

class ToolFailure extends Error {}

interface Outcome {
  /** What the model reads. */
  output: string;
  /** What events show (bounded, never whole files). */
  summary: string;
}

function fail(message: string): never {
  throw new ToolFailure(message);
}

function clip(s: string, n: number = LIMITS.summaryChars): string {
  return s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s;
}

async function lstatOrNull(p: string) {
  try {
    return await fs.lstat(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw err;
  }
}

/**
 * Resolves a checked relative path inside `root` (a real path), following symlinks in every parent
 * component (and in the last one when `followLast`). Refuses anything that resolves outside `root` or
 * into `.git`. Missing components are fine (the file may be about to be created).
 */
export async function resolveInRoot(
  root: string,
  input: unknown,
  opts: { followLast: boolean; allowRoot?: boolean },
  depth = 0,
): Promise<{ abs: string; rel: string }> {
  const checked = checkToolPath(input, { allowRoot: opts.allowRoot });
  if (!checked.ok) fail(checked.error);
  if (depth > 20) fail(`path "${String(input)}" has too many levels of symbolic links`);
  if (checked.rel === '') return { abs: root, rel: '' };
  const parts = checked.rel.split('/');
  let current = root;
  for (let i = 0; i < parts.length; i++) {
    const next = path.join(current, parts[i]!);
    const isLast = i === parts.length - 1;
    const st = await lstatOrNull(next);
    if (!st) {
      current = path.join(next, ...parts.slice(i + 1));
      break;
    }
    if (st.isSymbolicLink() && (!isLast || opts.followLast)) {
      const target = path.resolve(current, await fs.readlink(next));
      if (!isInside(root, target)) fail(`path "${String(input)}" goes through the symlink "${relativeTo(root, next)}", which points outside the repository`);
      const targetRel = relativeTo(root, target);
      if (isGitInternal(targetRel)) fail(`path "${String(input)}" goes through the symlink "${relativeTo(root, next)}", which points into .git`);
      const rest = [targetRel, ...parts.slice(i + 1)].filter((p) => p !== '').join('/');
      return resolveInRoot(root, rest === '' ? '.' : rest, { ...opts, allowRoot: true }, depth + 1);
    }
    if (!isLast && !st.isDirectory()) fail(`path "${String(input)}": "${relativeTo(root, next)}" is a file, not a directory`);
    current = next;
  }
  if (!isInside(root, current)) fail(`path "${String(input)}" is outside the repository`);
  const rel = relativeTo(root, current);
  if (isGitInternal(rel)) fail(`path "${String(input)}" is inside .git, which the agent may not read or change`);
  return { abs: current, rel };
}

/** Files under `dir` (relative to root), sorted; skips `.git`; does not follow symlinked directories. */
async function walk(root: string, dir: string, limit: number): Promise<{ files: string[]; truncated: boolean }> {
  const files: string[] = [];
  let truncated = false;
  async function visit(abs: string): Promise<void> {
    const entries = await fs.readdir(abs, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (files.length >= limit) {
        truncated = true;
        return;
      }
      if (e.name.toLowerCase() === '.git') continue;
      const child = path.join(abs, e.name);
      if (e.isDirectory()) await visit(child);
      else files.push(relativeTo(root, child));
    }
  }
  await visit(dir);
  return { files, truncated };
}

function isBinary(buf: Buffer): boolean {
  return buf.subarray(0, 8000).includes(0);
}

async function readText(abs: string, rel: string): Promise<string> {
  const st = await lstatOrNull(abs);
  if (!st) fail(`file "${rel}" does not exist`);
  if (st.isDirectory()) fail(`"${rel}" is a directory; use list_files to see what it contains`);
  const buf = await fs.readFile(abs);
  if (isBinary(buf)) fail(`"${rel}" is a binary file and cannot be read as text`);
  return buf.toString('utf8');
}

function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

export function createToolImplementations(root: string, signal?: AbortSignal) {
  return {
    async list_files(args: { path?: string }): Promise<Outcome> {
      const { abs, rel } = await resolveInRoot(root, args.path ?? '.', { followLast: true, allowRoot: true });
      const st = await lstatOrNull(abs);
      if (!st) fail(`"${rel}" does not exist`);
      if (!st.isDirectory()) return { output: rel, summary: `"${rel}" is a file` };
      const { files, truncated } = await walk(root, abs, LIMITS.listEntries);
      const where = rel === '' ? 'the repository' : `"${rel}"`;
      if (files.length === 0) return { output: `${where} has no files`, summary: `0 files in ${where}` };
      const note = truncated ? `\n… more files not shown (limit ${LIMITS.listEntries}); list a subdirectory to see them` : '';
      return { output: files.join('\n') + note, summary: `${files.length}${truncated ? '+' : ''} files in ${where}` };
    },

    async read_file(args: { path: string; offset?: number; limit?: number }): Promise<Outcome> {
      const { abs, rel } = await resolveInRoot(root, args.path, { followLast: true });
      const text = await readText(abs, rel);
      const lines = text.split('\n');
      if (text.endsWith('\n')) lines.pop();
      const total = lines.length;
      const offset = args.offset ?? 1;
      const limit = args.limit ?? LIMITS.readLines;
      if (!Number.isInteger(offset) || offset < 1) fail('offset must be a whole number ≥ 1 (the first line is 1)');
      if (!Number.isInteger(limit) || limit < 1) fail('limit must be a whole number ≥ 1');
      if (total === 0) return { output: `(file "${rel}" is empty)`, summary: `read "${rel}" (empty)` };
      if (offset > total) fail(`offset ${offset} is past the end of "${rel}" (${total} lines)`);
      let slice = lines.slice(offset - 1, offset - 1 + Math.min(limit, LIMITS.readLines));
      let body = slice.join('\n');
      if (body.length > LIMITS.readChars) {
        body = body.slice(0, LIMITS.readChars);
        slice = body.split('\n');
      }
      const last = offset - 1 + slice.length;
      const more = last < total ? `\n[lines ${offset}–${last} of ${total}; read on with offset ${last + 1}]` : '';
      return { output: body + more, summary: `read "${rel}" lines ${offset}–${last} of ${total}` };
    },

    async search(args: { query: string; path?: string }): Promise<Outcome> {
      try {
        new RegExp(args.query);
      } catch (err) {
        fail(`query is not a valid regular expression: ${(err as Error).message}`);
      }
      const { abs, rel } = await resolveInRoot(root, args.path ?? '.', { followLast: true, allowRoot: true });
      const st = await lstatOrNull(abs);
      if (!st) fail(`"${rel}" does not exist`);
      const files = st.isDirectory() ? (await walk(root, abs, 20_000)).files : [rel];
      const found = await searchFiles(
        {
          root,
          files,
          query: args.query,
          maxMatches: LIMITS.searchMatches,
          maxFileBytes: LIMITS.searchFileBytes,
          maxLineChars: 4 * LIMITS.searchLineChars,
        },
        LIMITS.searchTimeoutMs,
        signal,
      );
      if (!found.ok) fail(found.error);
      const matches = found.matches.map((m) => `${m.file}:${m.line}: ${clip(m.text.trim(), LIMITS.searchLineChars)}`);
      const hitFiles = new Set(found.matches.map((m) => m.file));
      const summary = `${matches.length}${found.capped ? '+' : ''} matches for /${clip(args.query, 80)}/ in ${hitFiles.size} files`;
      if (matches.length === 0) return { output: `no matches for /${args.query}/${rel ? ` under "${rel}"` : ''}`, summary };
      const note = found.capped ? `\n… more matches not shown (limit ${LIMITS.searchMatches}); narrow the query or the path` : '';
      return { output: matches.join('\n') + note, summary };
    },

    async write_file(args: { path: string; content: string }): Promise<Outcome> {
      const { abs, rel } = await resolveInRoot(root, args.path, { followLast: true });
      const bytes = Buffer.byteLength(args.content, 'utf8');
      if (bytes > LIMITS.writeBytes) fail(`content is ${bytes} bytes; the limit is ${LIMITS.writeBytes}`);
      const st = await lstatOrNull(abs);
      if (st?.isDirectory()) fail(`"${rel}" is a directory`);
      await fs.mkdir(path.dirname(abs), { recursive: true });
      await fs.writeFile(abs, args.content, 'utf8');
      const what = `${st ? 'updated' : 'created'} "${rel}" (${lineCount(args.content)} lines, ${bytes} bytes)`;
      return { output: `OK: ${what}`, summary: what };
    },

    async edit_file(args: { path: string; old_string: string; new_string: string }): Promise<Outcome> {
      if (args.old_string === '') fail('old_string must not be empty; use write_file to create or replace a whole file');
      if (args.old_string === args.new_string) fail('old_string and new_string are the same; nothing would change');
      const { abs, rel } = await resolveInRoot(root, args.path, { followLast: true });
      const text = await readText(abs, rel);
      const first = text.indexOf(args.old_string);
      if (first < 0) fail(`old_string was not found in "${rel}"; read the file and copy the exact text (including whitespace)`);
      let count = 0;
      for (let i = first; i >= 0; i = text.indexOf(args.old_string, i + 1)) count++;
      if (count > 1) fail(`old_string matches ${count} places in "${rel}"; include more surrounding text so it matches exactly one`);
      const updated = text.slice(0, first) + args.new_string + text.slice(first + args.old_string.length);
      await fs.writeFile(abs, updated, 'utf8');
      const line = lineCount(text.slice(0, first)) + 1;
      const what = `edited "${rel}" at line ${line} (-${lineCount(args.old_string) || 1} +${lineCount(args.new_string)} lines)`;
      return { output: `OK: ${what}`, summary: what };
    },

    async delete_file(args: { path: string }): Promise<Outcome> {
      const { abs, rel } = await resolveInRoot(root, args.path, { followLast: false });
      const st = await lstatOrNull(abs);
      if (!st) fail(`file "${rel}" does not exist`);
      if (st.isDirectory()) fail(`"${rel}" is a directory; delete the files in it one by one`);
      await fs.unlink(abs);
      return { output: `OK: deleted "${rel}"`, summary: `deleted "${rel}"` };
    },

    async move_file(args: { from: string; to: string }): Promise<Outcome> {
      const src = await resolveInRoot(root, args.from, { followLast: false });
      const dst = await resolveInRoot(root, args.to, { followLast: true });
      const st = await lstatOrNull(src.abs);
      if (!st) fail(`file "${src.rel}" does not exist`);
      if (st.isDirectory()) fail(`"${src.rel}" is a directory; move the files in it one by one`);
      if (await lstatOrNull(dst.abs)) fail(`"${dst.rel}" already exists; delete it first or choose another name`);
      await fs.mkdir(path.dirname(dst.abs), { recursive: true });
      await fs.rename(src.abs, dst.abs);
      return { output: `OK: moved "${src.rel}" to "${dst.rel}"`, summary: `moved "${src.rel}" to "${dst.rel}"` };
    },
  };
}

/** Bounded view of tool arguments for events: paths and sizes, never file contents. */
export function summarizeArgs(name: ToolName, args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    if (name === 'write_file' && k === 'content') out.contentLength = typeof v === 'string' ? v.length : 0;
    else if (name === 'edit_file' && (k === 'old_string' || k === 'new_string')) out[`${k}Length`] = typeof v === 'string' ? v.length : 0;
    else out[k] = typeof v === 'string' ? clip(v, 200) : v;
  }
  return out;
}

const pathArg = (what: string) => z.string().describe(`${what}, relative to the repository root (e.g. "docs/intro.md")`);

const descriptions: Record<ToolName, string> = {
  list_files: 'List the files under a directory of the repository (recursively). Omit path for the whole repository.',
  read_file: 'Read a text file. offset is the first line to read (1-based), limit the number of lines (default 2000).',
  search: 'Search file contents with a JavaScript regular expression; returns "path:line: text" matches. Optionally limit to a directory or file.',
  write_file: 'Create a file or replace its whole content. Parent directories are created.',
  edit_file:
    'Replace exactly one occurrence of old_string with new_string in a file. old_string must match exactly once (include surrounding lines to make it unique).',
  delete_file: 'Delete a file.',
  move_file: 'Move or rename a file. The destination must not exist.',
};

const schemas = {
  list_files: z.object({ path: pathArg('Directory').optional() }),
  read_file: z.object({
    path: pathArg('File'),
    offset: z.number().int().min(1).optional().describe('First line to read, 1-based'),
    limit: z.number().int().min(1).optional().describe('Number of lines to read'),
  }),
  search: z.object({ query: z.string().min(1).describe('JavaScript regular expression'), path: pathArg('Directory or file to search').optional() }),
  write_file: z.object({ path: pathArg('File'), content: z.string().describe('The complete new content of the file') }),
  edit_file: z.object({
    path: pathArg('File'),
    old_string: z.string().describe('Exact text to replace; must occur exactly once'),
    new_string: z.string().describe('Replacement text'),
  }),
  delete_file: z.object({ path: pathArg('File') }),
  move_file: z.object({ from: pathArg('Existing file'), to: pathArg('New path') }),
};

/** The AI SDK tool set over the worktree at `root` (a real path). */
export function createTools(root: string, sink: ToolEventSink, signal?: AbortSignal): ToolSet {
  const impl = createToolImplementations(root, signal);
  const tools: ToolSet = {};
  for (const name of TOOL_NAMES) {
    tools[name] = tool({
      description: descriptions[name],
      inputSchema: schemas[name] as z.ZodType<Record<string, unknown>>,
      execute: async (args: Record<string, unknown>, { toolCallId, abortSignal }) => {
        // A stopped run does not touch files any more.
        signal?.throwIfAborted();
        abortSignal?.throwIfAborted();
        await sink.toolCall(toolCallId, name, summarizeArgs(name, args));
        try {
          const out = await (impl[name] as (a: Record<string, unknown>) => Promise<Outcome>)(args);
          await sink.toolResult(toolCallId, name, true, out.summary);
          return out.output;
        } catch (err) {
          if (!(err instanceof ToolFailure)) {
            const code = (err as NodeJS.ErrnoException).code;
            const message = `${name} failed${code ? ` (${code})` : ''}: ${String((err as Error).message ?? err).replaceAll(root, '<repo>')}`;
            await sink.toolResult(toolCallId, name, false, clip(message));
            return `Error: ${message}`;
          }
          await sink.toolResult(toolCallId, name, false, clip(err.message));
          return `Error: ${err.message}`;
        }
      },
    });
  }
  return tools;
}
