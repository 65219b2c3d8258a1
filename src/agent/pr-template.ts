// The repository's pull-request template with Inkwell's sections fitted under its own headings: "## Summary" or
// "## Description" gets the summary, "## Testing" the docs checks, "## Related issues" the request, … The
// template's other headings and text are kept, made inert; a section with no matching heading is added after it.
// The template is repository content, so hostile: it can neither render markup (HTML, links, images), nor ping
// anyone, nor swallow Inkwell's sections (an unclosed comment or code fence). Pure.

/** Only this much of a template is used (real ones are a few hundred bytes). */
export const MAX_TEMPLATE_CHARS = 10_000;
/** At most this much text is kept from it once made inert (escaping can make a line longer). */
const MAX_KEPT_CHARS = 12_000;
const MAX_LINE_CHARS = 1_000;

/** What a section of the body is; each kind fills at most one heading of the template. */
export type SectionKind = 'summary' | 'request' | 'files' | 'checks' | 'other';

export interface BodySection {
  kind: SectionKind;
  /** Its parts; a part with a title gets a heading (level 3 when appended, one below the template's heading). */
  parts: { title: string | null; text: string }[];
}

interface Chunk {
  /** The template's heading line (made inert), its level and its text; null for the text before the first one. */
  heading: { line: string; level: number; text: string } | null;
  /** The lines under it, inert. */
  lines: string[];
  /** Its task-list items (also in `lines`), unchecked and inert: kept under a heading Inkwell fills. */
  tasks: string[];
}

/**
 * Which of Inkwell's sections a template heading asks for, or null. Checked in this order (so "Motivation and
 * context" is the request, "How has this been tested?" the checks); headings about the type of change, breaking
 * changes, screenshots or a checklist are the template's own.
 */
export function headingKind(text: string): SectionKind | null {
  const t = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
  if (t === '' || /\b(types?|kinds?|breaking|checklist|screenshots?|reviewers?|deploy\w*|release notes?)\b/.test(t)) return null;
  if (/^(files?|files? (changed|touched|modified)|changed files)$/.test(t)) return 'files';
  if (/\b(test|tests|testing|tested|test plan|checks?|checked|verification|verify|verified|validate|validation|qa)\b/.test(t)) return 'checks';
  if (/\b(related|issues?|tickets?|context|request|requested|references?|fixes|closes|resolves|links?)\b/.test(t)) return 'request';
  if (/\b(summary|description|describe|what|changes?|changed|overview|proposed|about|details|why|motivation|purpose|tl ?dr)\b/.test(t)) return 'summary';
  return null;
}

/**
 * `[`, `]`, `<`, `&`, `@` and bare URLs outside code spans made plain text: no link, image, HTML, entity or
 * @mention; and a leading `/` escaped, so GitLab runs no quick action (`/merge`, `/assign`) from it.
 */
export function inertInline(text: string): string {
  const clipped = text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}…` : text;
  const line = clipped.replace(/^(\s*)\//, '$1\\/');
  let out = '';
  let at = 0;
  // Code spans (a backtick run closed by one of the same length) render nothing: kept as they are.
  for (const m of line.matchAll(/(`+)(?!`)[\s\S]*?[^`]\1(?!`)/g)) {
    out += plain(line.slice(at, m.index)) + m[0];
    at = m.index + m[0].length;
  }
  return out + plain(line.slice(at));
}

function plain(s: string): string {
  return (
    s
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/([[\]])/g, '\\$1')
      .replace(/@/g, '@\u200b')
      // Bare URLs are links in GitHub-flavoured Markdown: a zero-width space keeps them text.
      .replace(/:\/\//g, ':/\u200b/')
      .replace(/\bwww\./gi, (w) => `${w.slice(0, 3)}\u200b.`)
  );
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const TASK = /^(\s*[-*+]\s+)\[[ xX]\](?:\s+(.*))?$/;
const LINK_DEFINITION = /^ {0,3}\[[^\]]+\]:/;

/** The template cut at its headings (outside code and comments), every line made inert. */
export function parseTemplate(template: string): Chunk[] {
  const source = template.length > MAX_TEMPLATE_CHARS ? template.slice(0, MAX_TEMPLATE_CHARS) : template;
  const chunks: Chunk[] = [{ heading: null, lines: [], tasks: [] }];
  let fence: { char: string; length: number } | null = null;
  let inComment = false;
  let kept = 0;
  const push = (chunk: Chunk, line: string) => {
    chunk.lines.push(line);
    kept += line.length + 1;
  };
  for (const raw of source.replace(/\r\n?/g, '\n').split('\n')) {
    if (kept > MAX_KEPT_CHARS) break;
    const chunk = chunks[chunks.length - 1]!;
    if (fence) {
      push(chunk, raw.length > MAX_LINE_CHARS ? raw.slice(0, MAX_LINE_CHARS) : raw);
      const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(raw);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length) fence = null;
      continue;
    }
    // HTML comments (a template's notes to whoever fills it in) are dropped, across lines.
    let line = raw;
    if (inComment) {
      const end = line.indexOf('-->');
      if (end < 0) continue;
      inComment = false;
      line = line.slice(end + 3);
    }
    for (let start = line.indexOf('<!--'); start >= 0; start = line.indexOf('<!--', start)) {
      const end = line.indexOf('-->', start + 4);
      if (end < 0) {
        line = line.slice(0, start);
        inComment = true;
        break;
      }
      line = line.slice(0, start) + line.slice(end + 3);
    }
    if (line.trim() === '' && raw.trim() !== '') continue;
    const open = FENCE.exec(line);
    if (open && !(open[1]![0] === '`' && open[2]!.includes('`'))) {
      fence = { char: open[1]![0]!, length: open[1]!.length };
      push(chunk, line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) : line);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const text = (heading[2] ?? '').trim();
      const headingLine = `${heading[1]} ${inertInline(text)}`.trimEnd();
      chunks.push({ heading: { line: headingLine, level: heading[1]!.length, text }, lines: [], tasks: [] });
      kept += headingLine.length + 1;
      continue;
    }
    if (LINK_DEFINITION.test(line)) continue;
    const task = TASK.exec(line);
    if (task) {
      const item = `${task[1]}[ ] ${inertInline(task[2] ?? '')}`.trimEnd();
      push(chunk, item);
      chunk.tasks.push(item);
      continue;
    }
    push(chunk, inertInline(line));
  }
  // A fence the template never closed would swallow what follows it: close it.
  if (fence) chunks[chunks.length - 1]!.lines.push(fence.char.repeat(fence.length));
  return chunks;
}

/**
 * Model text (a run's summary, which a hostile repository can steer) as Markdown that keeps its structure —
 * paragraphs, lists, emphasis, code spans and fenced code — but renders nothing active: outside code, every
 * line goes through `inertInline` (no link, image, HTML — an unclosed `<!--` included —, entity, @mention or
 * GitLab quick action), and a fence left open is closed, so it cannot swallow the sections after it.
 */
export function inertMarkdown(text: string): string {
  let fence: string | null = null;
  const lines = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => {
      const f = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
      if (fence) {
        if (f && f[1]![0] === fence[0] && f[1]!.length >= fence.length && f[2]!.trim() === '') fence = null;
        return line;
      }
      if (f && !(f[1]![0] === '`' && f[2]!.includes('`'))) {
        fence = f[1]!;
        return line;
      }
      return inertInline(line);
    });
  if (fence) lines.push(fence);
  return lines.join('\n');
}

/** `text` cut to at most about `max` characters, a code fence left open by the cut closed, and a note saying so. */
export function clipMarkdown(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  let fence: string | null = null;
  for (const line of cut.split('\n')) {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (!f) continue;
    if (!fence) fence = f;
    else if (f[0] === fence[0] && f.length >= fence.length && line.trim() === f) fence = null;
  }
  return `${cut}${fence ? `\n${fence}` : ''}\n\n… (clipped: the rest is longer than a pull request's description may be)`;
}

function trimBlank(lines: string[]): string {
  return lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\s*\n|\n\s*$/g, '')
    .trimEnd();
}

/** A section's parts, its titled parts as headings of `level`. */
export function renderSection(section: BodySection, level: number): string {
  const mark = '#'.repeat(Math.min(6, Math.max(1, level)));
  return section.parts
    .filter((p) => p.text.trim() !== '' || p.title)
    .map((p) => (p.title ? `${mark} ${p.title}\n\n${p.text}` : p.text))
    .join('\n\n');
}

/**
 * The body's blocks: the template (when there is one) with each of Inkwell's sections under the first heading
 * asking for its kind, and the sections no heading asked for after it — before it when the summary found no
 * heading, so that what changed always comes first. Under a heading Inkwell fills, the template's own text (its
 * instructions) gives way to Inkwell's section; its task-list items stay, unchecked.
 */
export function fitTemplate(template: string | null, sections: readonly BodySection[]): string[] {
  const present = sections.filter((s) => s.parts.some((p) => p.text.trim() !== ''));
  if (!template) return present.map((s) => renderSection(s, 3));
  const chunks = parseTemplate(template);
  const placed = new Map<Chunk, BodySection>();
  for (const section of present) {
    if (section.kind === 'other') continue;
    const home = chunks.find((c) => c.heading && !placed.has(c) && headingKind(c.heading.text) === section.kind);
    if (home) placed.set(home, section);
  }
  const fitted: string[] = [];
  for (const chunk of chunks) {
    const section = placed.get(chunk);
    if (!chunk.heading) {
      const text = trimBlank(chunk.lines);
      if (text) fitted.push(text);
      continue;
    }
    const body = section ? [renderSection(section, chunk.heading.level + 1), chunk.tasks.join('\n')] : [trimBlank(chunk.lines)];
    fitted.push([chunk.heading.line, ...body].filter((b) => b.trim() !== '').join('\n\n'));
  }
  const rest = present.filter((s) => ![...placed.values()].includes(s)).map((s) => renderSection(s, 3));
  const summaryPlaced = [...placed.values()].some((s) => s.kind === 'summary');
  return summaryPlaced ? [...fitted, ...rest] : [...rest, ...fitted];
}
