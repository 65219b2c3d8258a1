// Docs checks: what they take and what they find. Pure types and the rule registry.

/** Every rule a finding can name. Stable ids: clients and PR bodies show them. */
export const RULES = {
  'parse-error': 'the page does not parse (Markdown through a CommonMark parser, MDX through the MDX compiler)',
  'frontmatter-invalid': 'the front matter is not a YAML mapping',
  'frontmatter-field': 'the front matter lacks a field the framework requires',
  'link-broken': 'an internal link leads to no page or file',
  'link-outside': 'an internal link leads outside the repository (or through a link that does)',
  'anchor-missing': 'a #anchor names no heading or id of its target',
  'image-missing': 'an image names no file',
  'import-missing': 'an MDX import or snippet names no file',
  'nav-missing-page': 'a new page is not reachable from the navigation',
  'nav-dangling': 'a navigation entry names a page that does not exist',
  'config-invalid': 'the framework config (docs.json, mint.json, mkdocs.yml, sidebars) cannot be read',
  'file-too-large': 'a file is larger than the checks read',
  'check-timeout': 'the checks ran out of time before they were done',
  // The scope check of a run (src/agent/scope.ts), reported with the docs checks.
  'out-of-scope': 'a changed lockfile, generated file, build output or binary file the model did not justify',
  'changed-files-budget': 'the branch changes more files than its budget',
  'unrelated-page': 'a changed page the request does not name that links to no page the change adds, moves or deletes',
} as const;

/** The rules of the scope check: they decide reverts and the budget, not whether the docs checks passed. */
export const SCOPE_RULES: ReadonlySet<RuleId> = new Set<RuleId>(['out-of-scope', 'changed-files-budget', 'unrelated-page']);

export type RuleId = keyof typeof RULES;

export interface Finding {
  /** Repository-relative path of the file the problem is in. */
  file: string;
  /** 1-based; 0 when the problem is about the whole file. */
  line: number;
  column: number;
  rule: RuleId;
  message: string;
}

/** One changed path, as `git diff --name-status -M` reports it against the branch's base. */
export interface ChangedFile {
  path: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed';
  /** The path before a rename. */
  oldPath: string | null;
}

export type FrameworkId = 'mintlify' | 'mkdocs' | 'docusaurus' | 'markdown';

export interface CheckLimits {
  /** Files read (pages, configs, targets whose anchors are checked). */
  maxFiles: number;
  /** Bytes read in all. */
  maxBytes: number;
  /** Largest single file read; a larger page is a `file-too-large` finding. */
  maxFileBytes: number;
  /** Files listed from the worktree. */
  maxListed: number;
}

export const DEFAULT_CHECK_LIMITS: CheckLimits = {
  maxFiles: 2000,
  maxBytes: 64 * 1024 * 1024,
  maxFileBytes: 1024 * 1024,
  maxListed: 50_000,
};

export interface CheckReport {
  framework: FrameworkId;
  /** Repository-relative pages checked (changed pages and pages that link to changed ones). */
  checkedFiles: string[];
  /** Rule groups that ran, in order (what a passing PR body lists). */
  checks: string[];
  findings: Finding[];
  /** What could not be checked and why (not failures: code we do not run, budgets reached). */
  notes: string[];
}
