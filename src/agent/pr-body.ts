// The pull request's body and a follow-up turn's comment, written from the run: what changed and why (the agent's
// summary), the request that asked for it (quoted as data), the files touched with their line counts and the docs
// checks, fitted into the repository's own pull-request template (pr-template.ts). Pure, but for reading the template.
import type { DiffFile } from '../git/diff.ts';
import { inert } from '../lib/inert-text.ts';
import { ConfinedError, ConfinedTree } from './confined-fs.ts';
import { CHECKS_DRAFT_MARKER } from './pr-state.ts';
import { type BodySection, clipMarkdown, fitTemplate, inertMarkdown, type SectionKind } from './pr-template.ts';

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
/** The body before its footer, at most (GitHub refuses a body over 65,536 characters; GitLab takes a megabyte). */
export const MAX_BODY_CHARS = 60_000;
const MAX_FILES_LISTED = 50;

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
export function filesSection(files: readonly DiffFile[]): BodySection {
  const shown = files.slice(0, MAX_FILES_LISTED).map(fileLine);
  const more = files.length > MAX_FILES_LISTED ? `\n- … ${files.length - MAX_FILES_LISTED} more` : '';
  return { kind: 'files', parts: [{ title: `Files changed (${files.length})`, text: `${shown.join('\n')}${more}` }] };
}

/** A Markdown section written elsewhere (the docs checks'): its leading heading becomes the part's title. */
export function markdownSection(kind: SectionKind, markdown: string): BodySection {
  const m = /^#{1,6}[ \t]+(.+)\n+/.exec(markdown);
  return { kind, parts: [m ? { title: m[1]!.trim(), text: markdown.slice(m[0].length) } : { title: null, text: markdown }] };
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
  /** Out-of-scope files kept (with the agent's reason) or reverted, and the changed-files budget (src/agent/scope.ts). */
  scope?: BodySection | null;
  /** The repository's pull-request template (see pr-template.ts), or null. */
  template: string | null;
  jobId: string;
  /** The pull request is a draft because its checks fail: the body carries CHECKS_DRAFT_MARKER (pr-state.ts). */
  checksDraft?: boolean;
}

/** The pull request's body for the branch's state after this turn, fitted into the repository's template. */
export function pullRequestBody(input: PullRequestBodyInput): string {
  const request: BodySection =
    input.firstRequest !== null && input.firstRequest !== input.request
      ? {
          kind: 'request',
          parts: [
            { title: 'Request', text: quoteAsData(input.firstRequest) },
            { title: 'Latest follow-up', text: quoteAsData(input.request) },
          ],
        }
      : { kind: 'request', parts: [{ title: 'Request', text: quoteAsData(input.request) }] };
  const sections: BodySection[] = [
    { kind: 'summary', parts: [{ title: null, text: inertMarkdown(input.summary) }] },
    request,
    ...(input.files && input.files.length > 0 ? [filesSection(input.files)] : []),
    ...(input.checks.trim() !== '' ? [markdownSection('checks', input.checks)] : []),
    ...(input.scope ? [input.scope] : []),
  ];
  const footer = `---\nOpened by Inkwell (job \`${input.jobId}\`). Reply to the job to update this pull request.${input.checksDraft ? `\n${CHECKS_DRAFT_MARKER}` : ''}`;
  return [clipMarkdown(fitTemplate(input.template, sections).join('\n\n'), MAX_BODY_CHARS), footer].join('\n\n');
}

/** The hidden marker of a turn's comment, by which a retried turn finds the comment it posted already. */
export function turnMarker(jobId: string, turn: number): string {
  return `<!-- inkwell:turn:${jobId}:${turn} -->`;
}

/** The comment a follow-up turn adds to the pull request (its request, what it did, its commit) and its marker. */
export function followUpComment(input: {
  summary: string;
  request: string;
  commitSha: string | null;
  jobId: string;
  turn: number;
  /** What happened to the pull request's state (marked ready, stays ready with failing checks), or null. */
  note?: string | null;
}): {
  body: string;
  marker: string;
} {
  const outcome = input.commitSha
    ? `Pushed \`${input.commitSha.slice(0, 12)}\`; the description above now lists every file the branch changes.`
    : 'This turn changed no files.';
  const marker = turnMarker(input.jobId, input.turn);
  const body = [
    `**Inkwell follow-up** (job \`${input.jobId}\`, turn ${input.turn})`,
    `Request:\n\n${quoteAsData(input.request)}`,
    inertMarkdown(input.summary),
    outcome,
    input.note ?? '',
    marker,
  ]
    .filter((s) => s.trim() !== '')
    .join('\n\n');
  return { body, marker };
}
