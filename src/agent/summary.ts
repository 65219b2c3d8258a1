// Commit message and pull-request title from the agent's final summary (the body: pr-body.ts). Pure.

const TITLE_MAX = 72;

function firstLine(text: string): string {
  for (const raw of text.split('\n')) {
    const line = raw
      .replace(/^\s*#{1,6}\s+/, '')
      .replace(/^\s*(title|summary)\s*:\s*/i, '')
      .replace(/\*\*|__|`/g, '')
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

export interface ChangeText {
  title: string;
  /** The summary without its title line. */
  body: string;
  commitMessage: string;
}

/** Commit message and pull-request title. */
export function describeChange(summary: string, prompt: string, jobId: string): ChangeText {
  const title = clipTitle(firstLine(summary) || firstLine(prompt) || 'Update documentation');
  const lines = summary.trim().split('\n');
  const titleIdx = lines.findIndex((l) => l.trim() !== '');
  const rest =
    titleIdx >= 0 && clipTitle(firstLine(lines[titleIdx]!)) === title
      ? lines
          .slice(titleIdx + 1)
          .join('\n')
          .trim()
      : summary.trim();
  const body = rest.length > 20_000 ? `${rest.slice(0, 20_000)}…` : rest;
  const commitMessage = `${title}\n\n${body ? `${body}\n\n` : ''}Inkwell-Job: ${jobId}\n`;
  return { title, body, commitMessage };
}
