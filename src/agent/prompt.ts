// The system prompt: the repository's own instructions and style guide, the detected docs framework, its
// navigation, and the part of the file tree the request concerns (tree.ts). Everything the repository supplies is
// quoted under its own heading as the repository's text, bounded. Pure: repo-context.ts reads the repository.
import { type OutlineItem, renderOutline } from '../docs-checks/outline.ts';
import { pathLine, compactTree as treeFor } from './tree.ts';

export const INSTRUCTION_FILES = ['AGENTS.md', 'CLAUDE.md', 'CONTRIBUTING.md', '.github/CONTRIBUTING.md', 'docs/CONTRIBUTING.md'] as const;

/** Where repositories keep a style guide (matched without regard to case), in the order looked at. */
export const STYLE_GUIDE_FILES = [
  'STYLE.md',
  'STYLEGUIDE.md',
  'STYLE_GUIDE.md',
  'style-guide.md',
  'docs/style-guide.md',
  'docs/STYLE.md',
  'docs/styleguide.md',
  'docs/style_guide.md',
  '.github/STYLE_GUIDE.md',
  '.github/STYLE.md',
  '.github/style-guide.md',
] as const;

/** Vale's config file names at the root. */
export const VALE_CONFIGS = ['.vale.ini', '_vale.ini', 'vale.ini'];

export const PROMPT_LIMITS = {
  perInstructionChars: 8_000,
  instructionsTotalChars: 20_000,
  styleGuideChars: 8_000,
  treeLines: 200,
  treeFilesFlat: 150,
  navLines: 150,
  navChars: 8_000,
  /** A Vale config is read up to this (its style names are all that is shown). */
  valeBytes: 64 * 1024,
} as const;

export interface RepoContext {
  files: string[];
  instructions: Array<{ path: string; content: string }>;
  /** The docs navigation as an outline, with the config file it is in. */
  navigation?: { file: string; outline: OutlineItem[] } | null;
  styleGuide?: { path: string; content: string } | null;
  /** A Vale config's styles folder and style names (names only). */
  vale?: { file: string; stylesPath: string | null; styles: string[] } | null;
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

/** A bounded view of the file list for a request: small trees whole, else counts and the folders it concerns (tree.ts). */
export function compactTree(files: readonly string[], request = ''): string {
  return treeFor(files, request);
}

/** A Vale config's `StylesPath` and `BasedOnStyles` names (letters, digits, `._-/` only; at most 20). Pure. */
export function valeStyles(text: string): { stylesPath: string | null; styles: string[] } {
  const name = (v: string) =>
    v
      .replace(/[^\w.\-/ ]/g, '')
      .trim()
      .slice(0, 60);
  let stylesPath: string | null = null;
  const styles = new Set<string>();
  for (const line of text.split(/\r?\n/).slice(0, 2000)) {
    const m = /^\s*(StylesPath|BasedOnStyles)\s*=\s*(.*)$/i.exec(line);
    if (!m) continue;
    if (m[1]!.toLowerCase() === 'stylespath') stylesPath = name(m[2]!) || null;
    else for (const s of m[2]!.split(',')) if (name(s) && styles.size < 20) styles.add(name(s));
  }
  return { stylesPath, styles: [...styles] };
}

function truncate(text: string, max: number, file: string): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[… truncated: ${text.length - max} more characters; read_file "${file}" for the rest]`;
}

export interface PromptInput {
  ref: string;
  branch: string;
  context: RepoContext;
  /** This turn's request: the tree lists the folders whose names share its words. */
  request?: string;
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
Do not change lockfiles, generated files, build output, binary files or pages the request does not name (a page
that links to one you add, move or delete is fine) unless the request needs it: the scope check flags them; revert such a change with revert_file, or say why the request needs it with justify_change. Inkwell
reverts unjustified ones before the commit${input.maxChangedFiles ? `, and a branch that changes more than ${input.maxChangedFiles} files opens its pull request as a draft` : ''}.

When you finish, Inkwell may run the docs checks on your changes and send any problem back to you to fix.
When you are done, reply with a summary of what you changed: the first line is a short title in the imperative mood
("Add …", "Fix …"; at most 72 characters, no Markdown heading marks), then a blank line, then a few lines describing
the change. On a follow-up the pull request keeps its first title; start the first line with "Title: " only when the
follow-up changes what the pull request is about, and that line becomes its new title.`,
  ];
  if (framework) parts.push(`## Docs framework\n${framework.name} (detected from ${framework.evidence}). ${framework.hint}`);
  else parts.push('## Docs framework\nNo known docs framework detected; follow the structure you find.');
  if (context.navigation && context.navigation.outline.length > 0) {
    const outline = renderOutline(context.navigation.outline, { maxLines: PROMPT_LIMITS.navLines, maxChars: PROMPT_LIMITS.navChars });
    parts.push(`## Navigation: ${pathLine(context.navigation.file)}\nThe site's navigation as the repository's config has it (labels and pages):\n${outline}`);
  }
  parts.push(`## Files\n${context.files.length === 0 ? '(the repository is empty)' : compactTree(context.files, input.request ?? '')}`);
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
  if (context.styleGuide) {
    const text = truncate(context.styleGuide.content.trim(), PROMPT_LIMITS.styleGuideChars, context.styleGuide.path);
    parts.push(`## Repository style guide: ${pathLine(context.styleGuide.path)}\n${text}`);
  }
  if (context.vale && (context.vale.stylesPath || context.vale.styles.length > 0)) {
    const { file, stylesPath, styles } = context.vale;
    const where = stylesPath ? ` Its styles are in ${stylesPath}/.` : '';
    const based = styles.length > 0 ? ` It uses the styles ${styles.join(', ')}.` : '';
    parts.push(`## Vale\nThe repository checks its prose with Vale (${pathLine(file)}).${where}${based}`);
  }
  return parts.join('\n\n');
}
