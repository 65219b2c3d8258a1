// The pull-request title and the turn's commit message, from the agent's final summary (the body: pr-body.ts).
// Pure.
import type { CheckOutcome } from './checks.ts';

const TITLE_MAX = 72;
const COMMIT_BODY_MAX = 4000;
const COMMIT_REQUEST_MAX = 1000;

/**
 * C0 and C1 controls but tab and newline, and the Unicode bidirectional and invisible formatting marks that make
 * text read differently from what it is.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `text` without control characters (CR becomes a newline). */
export function withoutControls(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(CONTROL, '');
}

function firstLine(text: string): string {
  for (const raw of withoutControls(text).split('\n')) {
    const line = raw
      .replace(/^\s*#{1,6}\s+/, '')
      .replace(/\*\*|__|`/g, '')
      .replace(/^\s*(title|summary)\s*:\s*/i, '')
      .trim();
    if (line !== '') return line;
  }
  return '';
}

function clipTitle(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim();
  if (one.length <= TITLE_MAX) return one;
  const cut = one.slice(0, TITLE_MAX - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > 40 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

export interface ChangeText {
  /** The pull request's title: the summary's first line (else the request's), one line, clipped. */
  title: string;
  /** The summary without its title line. */
  body: string;
  /** The summary's first line says `Title:` (on a follow-up: rename the pull request). */
  explicitTitle: boolean;
}

/** The title and the rest of the summary. */
export function describeChange(summary: string, prompt: string): ChangeText {
  const title = clipTitle(firstLine(summary) || firstLine(prompt) || 'Update documentation');
  const lines = withoutControls(summary).trim().split('\n');
  const titleIdx = lines.findIndex((l) => l.trim() !== '');
  const rest =
    titleIdx >= 0 && clipTitle(firstLine(lines[titleIdx]!)) === title
      ? lines
          .slice(titleIdx + 1)
          .join('\n')
          .trim()
      : lines.join('\n').trim();
  const body = rest.length > 20_000 ? `${rest.slice(0, 20_000)}…` : rest;
  const explicitTitle = titleIdx >= 0 && /^\s*(#{1,6}\s+)?(\*\*|__)?title\s*:/i.test(lines[titleIdx]!) && firstLine(lines[titleIdx]!) !== '';
  return { title, body, explicitTitle };
}

/**
 * Text for a commit message, inert where code hosts act on commit messages: no @mention (`@\u200b`), no issue,
 * merge-request or commit reference that a closing keyword could act on (`#\u200b12`, `!\u200b3`).
 */
function inertCommitText(text: string): string {
  return withoutControls(text)
    .replace(/@/g, '@\u200b')
    .replace(/([#!])(?=[0-9A-Za-z])/g, '$1\u200b');
}

/** The checks' result for the commit message. */
export function checksResult(outcome: CheckOutcome | null): string {
  if (!outcome) return 'not run';
  const pages = outcome.report.checkedFiles.length;
  const onPages = `${pages} page${pages === 1 ? '' : 's'}`;
  if (outcome.status === 'passed') return `passed (${outcome.report.checks.join(', ')}; ${onPages})`;
  const n = outcome.report.findings.length;
  const rounds = `${outcome.repairs} repair round${outcome.repairs === 1 ? '' : 's'}`;
  return `failed (${n} finding${n === 1 ? '' : 's'} on ${onPages} after ${rounds})`;
}

export interface CommitMessageInput {
  change: ChangeText;
  /** This turn's request. */
  request: string;
  checks: CheckOutcome | null;
  jobId: string;
  turn: number;
}

/**
 * One turn's commit message: the title as its subject (one line, clipped, inert), what changed and why, the
 * request quoted (clipped; every line behind `> ` so none of it reads as a trailer), the checks' result, and the
 * `Inkwell-Job` and `Inkwell-Turn` trailers that a retried turn recognises its own commit by.
 */
export function commitMessage(input: CommitMessageInput): string {
  const subject = inertCommitText(input.change.title).replace(/\s+/g, ' ').trim() || 'Update documentation';
  const request = clip(withoutControls(input.request).trim(), COMMIT_REQUEST_MAX)
    .split('\n')
    .map((l) => `> ${inertCommitText(l)}`.trimEnd())
    .join('\n');
  const body = input.change.body
    ? clip(inertCommitText(input.change.body), COMMIT_BODY_MAX)
        .split('\n')
        // A line of the model's that looks like a trailer would be read as one: indent it.
        .map((l) => (/^[A-Za-z][A-Za-z0-9-]*:/.test(l) ? ` ${l}` : l))
        .join('\n')
    : '';
  const paragraphs = [
    subject,
    body,
    `Request:\n${request}`,
    `Checks: ${checksResult(input.checks)}`,
    `Inkwell-Job: ${input.jobId}\nInkwell-Turn: ${input.turn}`,
  ];
  return `${paragraphs.filter((p) => p.trim() !== '').join('\n\n')}\n`;
}

/** The job and turn a commit message's `Inkwell-Job` and `Inkwell-Turn` trailers name, or null. */
export function commitTurn(message: string): { jobId: string; turn: number } | null {
  const last =
    message
      .trimEnd()
      .split(/\n\s*\n/)
      .at(-1) ?? '';
  const job = /^Inkwell-Job: (\S+)$/m.exec(last)?.[1];
  const turn = /^Inkwell-Turn: (\d+)$/m.exec(last)?.[1];
  return job && turn ? { jobId: job, turn: Number(turn) } : null;
}
