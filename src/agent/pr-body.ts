// The pull request's body and a follow-up turn's comment, written from the run: what changed and why (the agent's
// summary), the request that asked for it (quoted as data), the files touched with their line counts, the docs
// checks, and the repository's own pull-request template checklist. Pure, but for reading the template.
import type { DiffFile } from '../git/diff.ts';
import { inert } from '../lib/inert-text.ts';
import { ConfinedError, ConfinedTree } from './confined-fs.ts';

/** Where repositories keep their pull-request (GitLab: merge-request) template, in the order looked at. */
export const PR_TEMPLATE_PATHS = [
  '.github/pull_request_template.md',
  '.github/PULL_REQUEST_TEMPLATE.md',
  'docs/pull_request_template.md',
  'PULL_REQUEST_TEMPLATE.md',
  '.gitlab/merge_request_templates/Default.md',
];
/** A template over this is ignored (a bound on memory; real templates are a few hundred bytes). */
export const MAX_TEMPLATE_BYTES = 64 * 1024;
const MAX_REQUEST_CHARS = 2000;
const MAX_FILES_LISTED = 50;
const MAX_CHECKLIST_ITEMS = 30;

/** The first pull-request template found in the worktree at `root` (read confined, size-capped), or null. */
export async function readPullRequestTemplate(root: string): Promise<string | null> {
  const tree = new ConfinedTree(root);
  for (const p of PR_TEMPLATE_PATHS) {
    try {
      return (await tree.read(p, MAX_TEMPLATE_BYTES)).content.toString('utf8');
    } catch (err) {
      // Missing, a directory, a link out of the tree, too large: try the next place.
      if (!(err instanceof ConfinedError) && !(err as NodeJS.ErrnoException)?.code) throw err;
    }
  }
  return null;
}

/**
 * `text` clipped, in a fenced code block whose fence is longer than any run of backticks in it: nothing in the
 * text (Markdown, HTML, an @mention, a fence of its own) can close the block or be rendered.
 */
export function quoteAsData(text: string, max = MAX_REQUEST_CHARS): string {
  const clipped = text.length > max ? `${text.slice(0, max)}…` : text;
  const longest = Math.max(0, ...(clipped.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}text\n${clipped.replace(/\r\n?/g, '\n')}\n${fence}`;
}

function fileLine(f: DiffFile): string {
  const name = f.oldPath ? `\`${inert(f.oldPath)}\` → \`${inert(f.path)}\`` : `\`${inert(f.path)}\``;
  const counts = f.binary ? 'binary' : `+${f.additions} −${f.deletions}`;
  return `- ${name} (${f.status}, ${counts})`;
}

/** The files the branch changes against its base, with their line counts. */
export function filesSection(files: readonly DiffFile[]): string {
  const shown = files.slice(0, MAX_FILES_LISTED).map(fileLine);
  const more = files.length > MAX_FILES_LISTED ? `\n- … ${files.length - MAX_FILES_LISTED} more` : '';
  return `### Files changed (${files.length})\n\n${shown.join('\n')}${more}`;
}

/** The template's checklist items, unchecked and inert (no @mention, no code span break-out); '' without one. */
export function templateChecklist(template: string | null): string {
  if (!template) return '';
  const items: string[] = [];
  for (const line of template.split('\n')) {
    const m = /^\s*[-*]\s+\[[ xX]\]\s+(.+)$/.exec(line);
    if (m && items.length < MAX_CHECKLIST_ITEMS) items.push(`- [ ] ${inert(m[1]!)}`);
  }
  return items.length > 0 ? `### Checklist (from the repository's pull request template)\n\n${items.join('\n')}` : '';
}

export interface PullRequestBodyInput {
  /** What changed and why: the summary without its title line (or the title when there is no more). */
  summary: string;
  /** The job's first request; null on the first turn. */
  firstRequest: string | null;
  /** This turn's request. */
  request: string;
  /** The branch's changed files; null when they could not be read. */
  files: readonly DiffFile[] | null;
  /** The docs checks' section, or ''. */
  checks: string;
  template: string | null;
  jobId: string;
}

/** The pull request's body for the branch's state after this turn. */
export function pullRequestBody(input: PullRequestBodyInput): string {
  const requests =
    input.firstRequest !== null && input.firstRequest !== input.request
      ? `### Request\n\n${quoteAsData(input.firstRequest)}\n\n### Latest follow-up\n\n${quoteAsData(input.request)}`
      : `### Request\n\n${quoteAsData(input.request)}`;
  const sections = [
    input.summary,
    requests,
    input.files && input.files.length > 0 ? filesSection(input.files) : '',
    input.checks,
    templateChecklist(input.template),
  ];
  const footer = `---\nOpened by Inkwell (job \`${input.jobId}\`). Reply to the job to update this pull request.`;
  return [...sections.filter((s) => s.trim() !== ''), footer].join('\n\n');
}

/** The comment a follow-up turn adds to the pull request: its request, what it did, and its commit. */
export function followUpComment(input: { summary: string; request: string; commitSha: string | null; jobId: string }): string {
  const outcome = input.commitSha
    ? `Pushed \`${input.commitSha.slice(0, 12)}\`; the description above now lists every file the branch changes.`
    : 'This turn changed no files.';
  return [`**Inkwell follow-up** (job \`${input.jobId}\`)`, `Request:\n\n${quoteAsData(input.request)}`, input.summary, outcome]
    .filter((s) => s.trim() !== '')
    .join('\n\n');
}
