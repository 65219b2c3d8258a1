// The system prompt: the repository's own instructions, a compact file tree and the detected docs
// framework. Everything but `gatherRepoContext` is pure.
import path from 'node:path';
import { ConfinedTree } from './confined-fs.ts';

export const INSTRUCTION_FILES = ['AGENTS.md', 'CLAUDE.md', 'CONTRIBUTING.md', '.github/CONTRIBUTING.md', 'docs/CONTRIBUTING.md'] as const;

export const PROMPT_LIMITS = {
  perInstructionChars: 8_000,
  instructionsTotalChars: 20_000,
  treeLines: 200,
  treeFilesFlat: 150,
} as const;

export interface RepoContext {
  files: string[];
  instructions: Array<{ path: string; content: string }>;
}

export interface DocsFramework {
  name: string;
  /** The file that gave it away. */
  evidence: string;
  hint: string;
}

type Rule = { name: string; test: (f: string) => boolean; hint: string };

const RULES: Rule[] = [
  {
    name: 'Mintlify',
    test: (f) => f === 'docs.json' || f === 'mint.json',
    hint: 'Pages are .mdx files; navigation lives in docs.json (or mint.json). Add new pages to the navigation.',
  },
  {
    name: 'Docusaurus',
    test: (f) => /^docusaurus\.config\.(js|ts|mjs|cjs)$/.test(f),
    hint: 'Pages are Markdown/MDX under docs/; sidebars are in sidebars.js/ts.',
  },
  { name: 'MkDocs', test: (f) => f === 'mkdocs.yml' || f === 'mkdocs.yaml', hint: 'Pages are Markdown under docs/; navigation is the nav: key in mkdocs.yml.' },
  {
    name: 'VitePress',
    test: (f) => /^(.+\/)?\.vitepress\/config\.(js|ts|mjs|mts)$/.test(f),
    hint: 'Pages are Markdown; the sidebar is configured in .vitepress/config.',
  },
  {
    name: 'Starlight / Astro',
    test: (f) => /^astro\.config\.(js|ts|mjs|mts)$/.test(f),
    hint: 'Content lives under src/content/docs/; the sidebar is in astro.config.',
  },
  { name: 'Nextra', test: (f) => /^theme\.config\.(jsx|tsx|js|ts)$/.test(f), hint: 'Pages are MDX under pages/ (or app/); _meta files order the navigation.' },
  {
    name: 'Sphinx',
    test: (f) => /^(docs\/|doc\/)?(source\/)?conf\.py$/.test(f),
    hint: 'Pages are reStructuredText (or MyST Markdown); toctree directives build the navigation.',
  },
  { name: 'mdBook', test: (f) => f === 'book.toml', hint: 'Pages are Markdown under src/; SUMMARY.md is the table of contents.' },
  { name: 'Antora', test: (f) => /(^|\/)antora\.yml$/.test(f), hint: 'Pages are AsciiDoc under modules/*/pages; nav.adoc files hold navigation.' },
  { name: 'Fern', test: (f) => /^fern\/docs\.yml$/.test(f), hint: 'Pages are MDX; navigation is in fern/docs.yml.' },
  { name: 'GitBook', test: (f) => f === '.gitbook.yaml' || f === 'SUMMARY.md', hint: 'Pages are Markdown; SUMMARY.md is the table of contents.' },
  { name: 'Hugo', test: (f) => /^hugo\.(toml|yaml|yml|json)$/.test(f), hint: 'Pages are Markdown under content/ with front matter.' },
  { name: 'Jekyll', test: (f) => f === '_config.yml', hint: 'Pages are Markdown with front matter; _config.yml configures the site.' },
];

/** The docs framework a file list suggests, or null. First rule wins (most specific first). */
export function detectDocsFramework(files: readonly string[]): DocsFramework | null {
  for (const rule of RULES) {
    const hit = files.find(rule.test);
    if (hit) return { name: rule.name, evidence: hit, hint: rule.hint };
  }
  return null;
}

/** A bounded view of the file list: every file when small, else directories with file counts. */
export function compactTree(files: readonly string[], limits = { lines: PROMPT_LIMITS.treeLines, flat: PROMPT_LIMITS.treeFilesFlat }): string {
  const sorted = [...files].sort();
  if (sorted.length <= limits.flat) return sorted.join('\n');
  // Directory counts to depth 2; files at the root listed by name.
  const counts = new Map<string, number>();
  const rootFiles: string[] = [];
  for (const f of sorted) {
    const parts = f.split('/');
    if (parts.length === 1) {
      rootFiles.push(f);
      continue;
    }
    for (let d = 1; d <= Math.min(2, parts.length - 1); d++) {
      const dir = `${parts.slice(0, d).join('/')}/`;
      counts.set(dir, (counts.get(dir) ?? 0) + 1);
    }
  }
  const lines: string[] = [];
  for (const f of rootFiles) lines.push(f);
  for (const [dir, n] of [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) lines.push(`${dir} (${n} file${n === 1 ? '' : 's'})`);
  const shown = lines.slice(0, limits.lines);
  const more = lines.length - shown.length;
  return `${shown.join('\n')}${more > 0 ? `\n… ${more} more entries` : ''}\n(${sorted.length} files in total; use list_files to see a directory)`;
}

function truncate(text: string, max: number, file: string): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[… truncated: ${text.length - max} more characters; read_file "${file}" for the rest]`;
}

export interface PromptInput {
  ref: string;
  branch: string;
  context: RepoContext;
  /** The changed-files budget the turn runs under (src/agent/scope.ts). */
  maxChangedFiles?: number;
}

export function buildSystemPrompt(input: PromptInput): string {
  const { context } = input;
  const framework = detectDocsFramework(context.files);
  const parts: string[] = [
    `You are Inkwell, an agent that edits a git repository — usually a documentation site — on behalf of its maintainers.
You work in a checkout of branch "${input.branch}" (based on "${input.ref}"). Use the tools to look around and change files:
list_files, read_file, search (regular expressions), write_file, edit_file (exactly one match), delete_file, move_file,
check (the docs checks on your changes: pages parse, front matter, links and anchors, navigation, and the scope
check), revert_file (put a changed file back as it is on the base branch) and justify_change (keep a flagged change).
Paths are relative to the repository root. There is no shell and no network access. Do not try to commit or push:
when you finish, your changes are committed, pushed and proposed as a pull request automatically.

Work carefully: read a file before editing it, follow the repository's conventions and style, keep changes focused on
the request. If the request needs no change, change nothing and say why.
Do not change lockfiles, generated files, build output or binary files unless the request needs it: the scope check
flags them; revert such a change with revert_file, or say why the request needs it with justify_change. Inkwell
reverts unjustified ones before the commit${input.maxChangedFiles ? `, and a branch that changes more than ${input.maxChangedFiles} files opens its pull request as a draft` : ''}.

When you finish, Inkwell may run the docs checks on your changes and send any problem back to you to fix.
When you are done, reply with a summary of what you changed: the first line is a short title for the pull request
(at most 72 characters, no Markdown heading marks), then a blank line, then a few lines describing the change.`,
  ];
  if (framework) parts.push(`## Docs framework\n${framework.name} (detected from ${framework.evidence}). ${framework.hint}`);
  else parts.push('## Docs framework\nNo known docs framework detected; follow the structure you find.');
  parts.push(`## Files\n${context.files.length === 0 ? '(the repository is empty)' : compactTree(context.files)}`);
  let budget: number = PROMPT_LIMITS.instructionsTotalChars;
  for (const doc of context.instructions) {
    if (budget <= 0) {
      parts.push(`## Repository instructions: ${doc.path}\n[not included: read_file "${doc.path}"]`);
      continue;
    }
    const text = truncate(doc.content.trim(), Math.min(PROMPT_LIMITS.perInstructionChars, budget), doc.path);
    budget -= text.length;
    parts.push(`## Repository instructions: ${doc.path}\n${text}`);
  }
  return parts.join('\n\n');
}

/** Reads the file list and instruction files of a worktree (skips .git; confined like the tools, see `ConfinedTree`). */
export async function gatherRepoContext(root: string, maxFiles = 20_000): Promise<RepoContext> {
  const tree = new ConfinedTree(root);
  const { files } = await tree.list('.', maxFiles);
  files.sort();
  const instructions: RepoContext['instructions'] = [];
  const seenNames = new Set<string>();
  const listed = new Set(files);
  for (const name of INSTRUCTION_FILES) {
    const base = path.posix.basename(name);
    if (seenNames.has(base) || !listed.has(name)) continue;
    const read = await tree.read(name).catch(() => null);
    if (!read || read.content.length > 1024 * 1024) continue;
    instructions.push({ path: name, content: read.content.toString('utf8') });
    seenNames.add(base);
  }
  return { files, instructions };
}
