// The agent's tools: seven file tools, `check` (the docs checks) and the scope tools `revert_file` and
// `justify_change` (src/agent/scope.ts). Names and argument names are part of the contract (SPEC 3.4).
// Every failure is returned to the model as a readable "Error: …" result, never thrown, so one bad
// call does not end the run. Events carry summaries, never file contents.
import { type JSONSchema7, jsonSchema, type ToolSet, tool } from 'ai';
import { type TObject, Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { formatReport } from '../docs-checks/format.ts';
import { clipCheckText, type DocsChecker } from './checks.ts';
import { ConfinedError, ConfinedTree } from './confined-fs.ts';
import type { TurnScope } from './scope.ts';
import { searchFiles } from './search.ts';

export const TOOL_NAMES = [
  'list_files',
  'read_file',
  'search',
  'write_file',
  'edit_file',
  'delete_file',
  'move_file',
  'check',
  'revert_file',
  'justify_change',
] as const;
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

interface ToolEventSink {
  toolCall(id: string, tool: ToolName, args: Record<string, unknown>): Promise<void>;
  toolResult(id: string, tool: ToolName, ok: boolean, summary: string): Promise<void>;
}

/** A readable refusal: the same kind as the confined file system's own. */
const ToolFailure = ConfinedError;

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

function isBinary(buf: Buffer): boolean {
  return buf.subarray(0, 8000).includes(0);
}

function asText(buf: Buffer, rel: string): string {
  if (isBinary(buf)) fail(`"${rel}" is a binary file and cannot be read as text`);
  return buf.toString('utf8');
}

function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/**
 * The tools over the worktree at `root`. Every file operation goes through `ConfinedTree`, which
 * resolves paths without letting the kernel follow a link, at the moment of the operation: tool calls
 * of one step may run in parallel and still cannot reach outside the worktree or into `.git`.
 */
export function createToolImplementations(root: string, signal?: AbortSignal, checker?: DocsChecker, scope?: TurnScope) {
  const tree = new ConfinedTree(root);
  return {
    async list_files(args: { path?: string }): Promise<Outcome> {
      const { rel, kind, files, truncated } = await tree.list(args.path ?? '.', LIMITS.listEntries);
      if (kind === null) fail(`"${rel}" does not exist`);
      if (kind !== 'directory') return { output: rel, summary: `"${rel}" is a file` };
      const where = rel === '' ? 'the repository' : `"${rel}"`;
      if (files.length === 0) return { output: `${where} has no files`, summary: `0 files in ${where}` };
      const note = truncated ? `\n… more files not shown (limit ${LIMITS.listEntries}); list a subdirectory to see them` : '';
      return { output: files.join('\n') + note, summary: `${files.length}${truncated ? '+' : ''} files in ${where}` };
    },

    async read_file(args: { path: string; offset?: number; limit?: number }): Promise<Outcome> {
      const read = await tree.read(args.path);
      const rel = read.rel;
      const text = asText(read.content, rel);
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
      const listed = await tree.list(args.path ?? '.', 20_000);
      const rel = listed.rel;
      if (listed.kind === null) fail(`"${rel}" does not exist`);
      const files = listed.kind === 'directory' ? listed.files : [rel];
      const found = await tree.withRootRef((rootRef) =>
        searchFiles(
          {
            root: rootRef,
            files,
            query: args.query,
            maxMatches: LIMITS.searchMatches,
            maxFileBytes: LIMITS.searchFileBytes,
            maxLineChars: 4 * LIMITS.searchLineChars,
          },
          LIMITS.searchTimeoutMs,
          signal,
        ),
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
      const bytes = Buffer.byteLength(args.content, 'utf8');
      if (bytes > LIMITS.writeBytes) fail(`content is ${bytes} bytes; the limit is ${LIMITS.writeBytes}`);
      const { rel, created } = await tree.write(args.path, args.content);
      const what = `${created ? 'created' : 'updated'} "${rel}" (${lineCount(args.content)} lines, ${bytes} bytes)`;
      return { output: `OK: ${what}`, summary: what };
    },

    async edit_file(args: { path: string; old_string: string; new_string: string }): Promise<Outcome> {
      if (args.old_string === '') fail('old_string must not be empty; use write_file to create or replace a whole file');
      if (args.old_string === args.new_string) fail('old_string and new_string are the same; nothing would change');
      let first = -1;
      let text = '';
      const { rel } = await tree.update(args.path, (content, rel) => {
        text = asText(content, rel);
        first = text.indexOf(args.old_string);
        if (first < 0) fail(`old_string was not found in "${rel}"; read the file and copy the exact text (including whitespace)`);
        let count = 0;
        for (let i = first; i >= 0; i = text.indexOf(args.old_string, i + 1)) count++;
        if (count > 1) fail(`old_string matches ${count} places in "${rel}"; include more surrounding text so it matches exactly one`);
        return text.slice(0, first) + args.new_string + text.slice(first + args.old_string.length);
      });
      const line = lineCount(text.slice(0, first)) + 1;
      const what = `edited "${rel}" at line ${line} (-${lineCount(args.old_string) || 1} +${lineCount(args.new_string)} lines)`;
      return { output: `OK: ${what}`, summary: what };
    },

    async delete_file(args: { path: string }): Promise<Outcome> {
      const { rel } = await tree.remove(args.path);
      return { output: `OK: deleted "${rel}"`, summary: `deleted "${rel}"` };
    },

    async move_file(args: { from: string; to: string }): Promise<Outcome> {
      const { from, to } = await tree.move(args.from, args.to);
      return { output: `OK: moved "${from}" to "${to}"`, summary: `moved "${from}" to "${to}"` };
    },

    async check(): Promise<Outcome> {
      if (!checker) fail('the docs checks are not available in this run');
      const report = await checker();
      const rules = [...new Set(report.findings.map((f) => f.rule))].join(', ');
      const pages = `${report.checkedFiles.length} page${report.checkedFiles.length === 1 ? '' : 's'}`;
      const summary = report.findings.length === 0 ? `docs checks passed (${pages})` : `docs checks: ${report.findings.length} problems in ${pages} (${rules})`;
      return { output: clipCheckText(formatReport(report)), summary: clip(summary) };
    },

    async revert_file(args: { path: string }): Promise<Outcome> {
      if (!scope) fail('reverting is not available in this run');
      const what = await scope.revert(args.path);
      return { output: `OK: ${what}`, summary: clip(what) };
    },

    async justify_change(args: { path: string; reason: string }): Promise<Outcome> {
      if (!scope) fail('justifications are not available in this run');
      const what = await scope.justify(args.path, args.reason);
      return { output: `OK: ${what}`, summary: clip(what) };
    },
  };
}

/** Bounded view of tool arguments for events: paths and sizes, never file contents. */
function summarizeArgs(name: ToolName, args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    if (name === 'write_file' && k === 'content') out.contentLength = typeof v === 'string' ? v.length : 0;
    else if (name === 'edit_file' && (k === 'old_string' || k === 'new_string')) out[`${k}Length`] = typeof v === 'string' ? v.length : 0;
    else out[k] = typeof v === 'string' ? clip(v, 200) : v;
  }
  return out;
}

const pathArg = (what: string) => Type.String({ description: `${what}, relative to the repository root (e.g. "docs/intro.md")` });
const lineNumber = (description: string) => Type.Integer({ minimum: 1, description });

const descriptions: Record<ToolName, string> = {
  list_files: 'List the files under a directory of the repository (recursively). Omit path for the whole repository.',
  read_file: 'Read a text file. offset is the first line to read (1-based), limit the number of lines (default 2000).',
  search: 'Search file contents with a JavaScript regular expression; returns "path:line: text" matches. Optionally limit to a directory or file.',
  write_file: 'Create a file or replace its whole content. Parent directories are created.',
  edit_file:
    'Replace exactly one occurrence of old_string with new_string in a file. old_string must match exactly once (include surrounding lines to make it unique).',
  delete_file: 'Delete a file.',
  move_file: 'Move or rename a file. The destination must not exist.',
  check:
    "Run the docs checks on every file changed so far (pages parse, front matter, links, images and anchors, navigation), as the repository's docs framework builds them, and the scope check (lockfiles, generated files, build output, binary files, unrelated pages, the changed-files budget). Returns the problems with file:line:column.",
  revert_file: 'Put a changed file back as it is on the base branch (a moved file goes back to its old path). Use it for changes the request does not need.',
  justify_change:
    'Keep a change the scope check flags (a lockfile, generated file, build output, binary file or unrelated page) and say why the request needs it, in one sentence. The pull request lists it with the reason; unjustified ones are reverted before the commit.',
};

const strict = { additionalProperties: false };

/** The arguments of each tool: the JSON Schema the model is given, and what a call is checked against. */
const schemas: Record<ToolName, TObject> = {
  list_files: Type.Object({ path: Type.Optional(pathArg('Directory')) }, strict),
  read_file: Type.Object(
    { path: pathArg('File'), offset: Type.Optional(lineNumber('First line to read, 1-based')), limit: Type.Optional(lineNumber('Number of lines to read')) },
    strict,
  ),
  search: Type.Object(
    { query: Type.String({ minLength: 1, description: 'JavaScript regular expression' }), path: Type.Optional(pathArg('Directory or file to search')) },
    strict,
  ),
  write_file: Type.Object({ path: pathArg('File'), content: Type.String({ description: 'The complete new content of the file' }) }, strict),
  edit_file: Type.Object(
    {
      path: pathArg('File'),
      old_string: Type.String({ description: 'Exact text to replace; must occur exactly once' }),
      new_string: Type.String({ description: 'Replacement text' }),
    },
    strict,
  ),
  delete_file: Type.Object({ path: pathArg('File') }, strict),
  move_file: Type.Object({ from: pathArg('Existing file'), to: pathArg('New path') }, strict),
  check: Type.Object({}, strict),
  revert_file: Type.Object({ path: pathArg('Changed file') }, strict),
  justify_change: Type.Object(
    { path: pathArg('Changed file'), reason: Type.String({ minLength: 1, maxLength: 2000, description: 'Why the request needs this change' }) },
    strict,
  ),
};

/**
 * The SDK schema of one tool: its JSON Schema, and a check whose failure the SDK hands back to the model as
 * "Invalid input for tool <name>: <what is wrong>" (the call is not run). Arguments the schema does not name
 * are dropped rather than refused: a stray key from a model is harmless.
 */
function toolInput(schema: TObject) {
  const check = Compile(schema);
  return jsonSchema<Record<string, unknown>>(schema as JSONSchema7, {
    validate(value) {
      const known =
        typeof value === 'object' && value !== null && !Array.isArray(value)
          ? Object.fromEntries(Object.entries(value).filter(([k]) => Object.hasOwn(schema.properties, k)))
          : value;
      if (check.Check(known)) return { success: true, value: known as Record<string, unknown> };
      const problems = [...check.Errors(known)].map((e) => `${e.instancePath.slice(1).replaceAll('/', '.') || 'arguments'} ${e.message}`);
      return { success: false, error: new Error([...new Set(problems)].join('; ')) };
    },
  });
}

// revert_file changes files too, and justify_change judges the files as the calls sent before it left them.
const CHANGES_FILES: ReadonlySet<ToolName> = new Set(['write_file', 'edit_file', 'delete_file', 'move_file', 'revert_file', 'justify_change']);

/** The AI SDK tool set over the worktree at `root` (a real path). */
export function createTools(root: string, sink: ToolEventSink, signal?: AbortSignal, checker?: DocsChecker, scope?: TurnScope): ToolSet {
  const impl = createToolImplementations(root, signal, checker, scope);
  // The SDK runs a step's tool calls in parallel, and models send several edits of one file in one step: the
  // calls that change files run one at a time, in the order they were sent, so each reads what the one before
  // it wrote (two edit_file calls racing on one file would otherwise lose one of the edits). A call takes its
  // place in line synchronously, before its first await, so the order is the order the SDK called `execute`
  // in (the model's), whatever the event sink's writes take.
  let tail: Promise<void> = Promise.resolve();
  const takePlace = (): { ready: Promise<void>; leave: () => void } => {
    const ready = tail;
    let leave = () => {};
    tail = new Promise<void>((resolve) => {
      leave = resolve;
    });
    return { ready, leave };
  };
  async function runCall(name: ToolName, args: Record<string, unknown>, toolCallId: string, abortSignal: AbortSignal | undefined, turn?: Promise<void>) {
    // A stopped run does not touch files any more.
    signal?.throwIfAborted();
    abortSignal?.throwIfAborted();
    await sink.toolCall(toolCallId, name, summarizeArgs(name, args));
    if (turn) {
      await turn;
      signal?.throwIfAborted();
      abortSignal?.throwIfAborted();
    }
    try {
      const out = await (impl[name] as (a: Record<string, unknown>) => Promise<Outcome>)(args);
      await sink.toolResult(toolCallId, name, true, out.summary);
      return out.output;
    } catch (err) {
      if (!(err instanceof ToolFailure)) {
        const code = (err as NodeJS.ErrnoException).code;
        const message = `${name} failed${code ? ` (${code})` : ''}: ${String((err as Error).message ?? err)
          .replaceAll(root, '<repo>')
          .replace(/\/proc\/self\/fd\/\d+/g, '<repo>')}`;
        await sink.toolResult(toolCallId, name, false, clip(message));
        return `Error: ${message}`;
      }
      await sink.toolResult(toolCallId, name, false, clip(err.message));
      return `Error: ${err.message}`;
    }
  }
  const tools: ToolSet = {};
  for (const name of TOOL_NAMES) {
    tools[name] = tool({
      description: descriptions[name],
      inputSchema: toolInput(schemas[name]),
      execute: async (args: Record<string, unknown>, { toolCallId, abortSignal }) => {
        const place = CHANGES_FILES.has(name) ? takePlace() : null;
        try {
          return await runCall(name, args, toolCallId, abortSignal, place?.ready);
        } finally {
          // A call that changes files makes what the scope check read before out of date.
          if (place && name !== 'justify_change') scope?.touch();
          place?.leave();
        }
      },
    });
  }
  return tools;
}
