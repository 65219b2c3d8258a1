// A check run over the files a job changed: each changed page parses and has the front matter its framework
// requires; its links, images, imports and anchors resolve; a new page is reachable from the navigation; a
// deleted or moved page leaves no navigation entry and no link to it. Reads only through the confined
// DocsReader, within its budget; runs no repository code.
import path from 'node:path';
import { detectDocsFramework } from '../agent/prompt.ts';
import { docusaurusSite } from './docusaurus.ts';
import { checkRef, type LinkContext } from './links.ts';
import { mintlifySite } from './mintlify.ts';
import { mkdocsSite } from './mkdocs.ts';
import { isPagePath, type ParsedPage, parsePage } from './page.ts';
import { ChecksAbortedError, DocsReader } from './reader.ts';
import { plainSite, type Site } from './site.ts';
import { type ChangedFile, type CheckLimits, type CheckReport, DEFAULT_CHECK_LIMITS, type Finding } from './types.ts';

export interface CheckInput {
  /** The worktree (a real path). */
  root: string;
  changes: readonly ChangedFile[];
  /** Aborts the run (its time budget): the report then has a `check-timeout` finding. */
  signal?: AbortSignal;
  limits?: Partial<CheckLimits>;
}

export const CHECK_GROUPS = ['pages parse', 'front matter', 'links, images and anchors', 'navigation'] as const;

/** The site the files describe: its framework's routes and navigation, or plain Markdown. */
export async function loadSite(reader: DocsReader, files: ReadonlySet<string>): Promise<Site> {
  const detected = detectDocsFramework([...files].filter((f) => !f.includes('/')).concat([...files].filter((f) => f.startsWith('.vitepress/'))));
  if (detected?.name === 'Mintlify') return mintlifySite(reader, files, detected.evidence);
  if (detected?.name === 'MkDocs') return mkdocsSite(reader, files, detected.evidence);
  if (detected?.name === 'Docusaurus') return docusaurusSite(reader, files, detected.evidence);
  return plainSite();
}

class Run {
  readonly findings: Finding[] = [];
  readonly checked = new Set<string>();
  private readonly pages = new Map<string, Promise<ParsedPage | null>>();
  readonly ctx: LinkContext;

  constructor(
    readonly reader: DocsReader,
    readonly site: Site,
    readonly files: ReadonlySet<string>,
  ) {
    this.ctx = { site, reader, files, parsed: (f) => this.parsed(f) };
  }

  isMdx(file: string): boolean {
    return /\.mdx$/i.test(file) || (this.site.mdAsMdx && /\.md$/i.test(file));
  }

  parsed(file: string): Promise<ParsedPage | null> {
    let p = this.pages.get(file);
    if (!p) {
      p = this.reader.read(file).then((r) => (r.ok ? parsePage(r.text, this.isMdx(file), this.site.framework === 'docusaurus') : null));
      this.pages.set(file, p);
    }
    return p;
  }

  /** Every check of one page; `only` keeps the link findings whose URL mentions one of those names. */
  async checkPage(file: string, only?: string[]): Promise<void> {
    const read = await this.reader.read(file);
    if (!read.ok) {
      if (read.reason === 'too-large') this.findings.push({ file, line: 0, column: 0, rule: 'file-too-large', message: `${read.message}; split the page` });
      return;
    }
    this.checked.add(file);
    const page = await this.parsed(file);
    if (!page) return;
    if (page.parseError && !only) {
      this.findings.push({
        file,
        line: page.parseError.line,
        column: page.parseError.column,
        rule: 'parse-error',
        message: `${this.isMdx(file) ? 'MDX' : 'Markdown'}: ${page.parseError.message}`,
      });
      return;
    }
    const fm = page.frontMatter;
    if (fm?.data && typeof fm.data === 'object') this.site.learn?.(file, fm.data as Record<string, unknown>);
    if (!only) this.checkFrontMatter(file, page);
    for (const ref of page.refs) {
      this.reader.throwIfAborted();
      if (only && !only.some((name) => ref.url.includes(name))) continue;
      const finding = await checkRef(this.ctx, file, page, ref);
      if (finding) this.findings.push(finding);
    }
  }

  private checkFrontMatter(file: string, page: ParsedPage): void {
    const fm = page.frontMatter;
    if (fm?.error) {
      this.findings.push({ file, line: fm.error.line, column: fm.error.column, rule: 'frontmatter-invalid', message: `front matter: ${fm.error.message}` });
      return;
    }
    const { fields, exempt } = this.site.requiredFields;
    if (exempt(file)) return;
    const data = (fm?.data ?? {}) as Record<string, unknown>;
    const missing = fields.filter((f) => data[f] === undefined || data[f] === null || data[f] === '');
    if (missing.length > 0) {
      this.findings.push({
        file,
        line: 1,
        column: 1,
        rule: 'frontmatter-field',
        message: `front matter needs ${missing.map((m) => `"${m}"`).join(', ')} (${this.site.framework})`,
      });
    }
  }
}

/** The name a link to a removed or changed page would contain: its file name without extension (its folder's for an index). */
function namesOf(file: string): string[] {
  const stem = path.posix.basename(file).replace(/\.(mdx?|markdown)$/i, '');
  return /^(index|readme)$/i.test(stem) ? [path.posix.basename(path.posix.dirname(file))].filter((n) => n !== '.' && n !== '') : [stem];
}

async function checkNavigation(run: Run, changes: readonly ChangedFile[]): Promise<void> {
  const { site, files } = run;
  const nav = site.navigation;
  if (!nav) return;
  for (const c of changes) {
    if (c.status !== 'added' && c.status !== 'renamed') continue;
    if (!isPagePath(c.path) || !files.has(c.path) || (site.docsRoot && !c.path.startsWith(`${site.docsRoot}/`))) continue;
    if (site.requiredFields.exempt(c.path) && site.framework === 'mintlify') continue;
    const covered = nav.covers(c.path);
    if (covered === 'unknown') site.notes.push(`whether ${c.path} is in ${nav.file} could not be decided statically`);
    else if (!covered)
      run.findings.push({
        file: c.path,
        line: 1,
        column: 1,
        rule: 'nav-missing-page',
        message: `${c.path} is a new page that no entry of ${nav.file} reaches; add it to the navigation`,
      });
  }
  const removed = changes.some((c) => c.status === 'deleted' || c.status === 'renamed');
  if (!removed && !changes.some((c) => site.configFiles.includes(c.path) || c.path === nav.file)) return;
  await nav.resolve?.();
  for (const e of nav.entries) {
    if (e.file === null)
      run.findings.push({ file: nav.file, line: e.line, column: e.column, rule: 'nav-dangling', message: `navigation entry "${e.raw}" names no page` });
  }
}

/** Pages that link to a removed, moved or changed page: their links to it are checked too. */
async function checkAffected(run: Run, changes: readonly ChangedFile[], changedPages: Set<string>): Promise<void> {
  const targets = changes.flatMap((c) =>
    c.status === 'deleted' ? [c.path] : c.status === 'renamed' && c.oldPath ? [c.oldPath, c.path] : c.status === 'modified' ? [c.path] : [],
  );
  const names = [...new Set(targets.filter(isPagePath).flatMap((t) => namesOf(t)))];
  if (names.length === 0) return;
  const pages = [...run.files].filter((f) => isPagePath(f) && !changedPages.has(f)).sort();
  const found = await run.reader.mentioning(pages, names);
  if (!found) {
    run.site.notes.push('the pages linking to the changed ones could not be searched in time; their links were not checked');
    return;
  }
  if (!found.complete) run.site.notes.push('too many pages mention the changed ones; only the first were checked');
  for (const file of pages.filter((f) => found.files.has(f))) {
    await run.checkPage(file, names);
    if (run.reader.budgetHit) {
      run.site.notes.push('the file budget ran out before every page linking to the changed ones was checked');
      return;
    }
  }
}

export async function runDocsChecks(input: CheckInput): Promise<CheckReport> {
  const limits = { ...DEFAULT_CHECK_LIMITS, ...input.limits };
  const reader = new DocsReader(input.root, limits, input.signal);
  let framework: CheckReport['framework'] = 'markdown';
  let run: Run | null = null;
  try {
    const files = await reader.files();
    const site = await loadSite(reader, files);
    framework = site.framework;
    run = new Run(reader, site, files);
    run.findings.push(...site.findings);
    const changedPages = new Set(input.changes.filter((c) => c.status !== 'deleted' && isPagePath(c.path) && files.has(c.path)).map((c) => c.path));
    for (const file of [...changedPages].sort()) await run.checkPage(file);
    await checkNavigation(run, input.changes);
    await checkAffected(run, input.changes, changedPages);
    if (reader.listTruncated) site.notes.push(`the repository has more than ${limits.maxListed} files; only the first were considered`);
  } catch (err) {
    if (!(err instanceof ChecksAbortedError)) throw err;
    (run?.findings ?? []).push({ file: '', line: 0, column: 0, rule: 'check-timeout', message: 'the checks ran out of time before they were done' });
    if (!run)
      return {
        framework,
        checkedFiles: [],
        checks: [...CHECK_GROUPS],
        findings: [{ file: '', line: 0, column: 0, rule: 'check-timeout', message: 'the checks ran out of time before they were done' }],
        notes: [],
      };
  }
  return {
    framework,
    checkedFiles: [...run.checked].sort(),
    checks: [...CHECK_GROUPS],
    findings: dedupe(run.findings),
    notes: [...new Set(run.site.notes)],
  };
}

function dedupe(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.file}:${f.line}:${f.column}:${f.rule}:${f.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
