// What an evaluation task is: a fixture repository, one or more requests (turns), a reference solution for the
// scripted model, and machine-checked success criteria. All plain data: tasks live in eval/tasks/*.ts.
import type { ChangedFile, CheckReport } from '../../src/docs-checks/types.ts';

export const TASK_KINDS = ['add-page', 'document-flag', 'fix-links', 'rename-page', 'style-rule', 'follow-up', 'refuse'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

/** One tool call of a reference script, as the model would send it. */
export interface ScriptToolCall {
  name: string;
  args: Record<string, unknown>;
}

/** One model reply of a reference script: tool calls (and maybe text), or the final text (title line, blank line, body). */
export type ScriptStep = { toolCalls: ScriptToolCall[]; text?: string } | { text: string };

export interface TaskTurn {
  /** The user's request for this turn (unique across tasks for the first turn: the scripted model finds its task by it). */
  prompt: string;
  /** What a correct agent might do: the scripted model replies with these steps in order. */
  reference: ScriptStep[];
}

/**
 * A regular expression as data: `/source/flags` or a bare source (flag `m`). Matched against a file's text or
 * the run's final reply.
 */
export type Pattern = string;

export interface FileExpect {
  /** true: the file must exist; false: it must not. */
  exists?: boolean;
  contains?: string[];
  notContains?: string[];
  matches?: Pattern[];
  notMatches?: Pattern[];
}

export interface TaskExpect {
  /** Per file (repository-relative): existence and content assertions on the branch the agent pushed. */
  files?: Record<string, FileExpect>;
  /** Entries of the framework's navigation (docs.json pages, mkdocs.yml nav paths, sidebars doc ids). */
  nav?: { includes?: string[]; excludes?: string[] };
  /** The docs checks (src/docs-checks) pass on the changed files and on `alsoCheck` (pages whose links the task is about). */
  checks?: { alsoCheck?: string[] };
  /** 'none': nothing may change. Otherwise every changed path (both sides of a rename) must match one of `allowed` (globs). */
  changed?: 'none' | { allowed: string[] };
  /** The final reply must match each pattern (default flag `i`). */
  reply?: { matches: Pattern[] };
}

export interface EvalTask {
  /** `<fixture>/<what>`; what --task globs match. */
  name: string;
  kind: TaskKind;
  /** Folder under eval/fixtures/. */
  fixture: string;
  /** Files added to or replacing the fixture's for this task (e.g. a page with broken links). */
  files?: Record<string, string>;
  turns: TaskTurn[];
  expect: TaskExpect;
}

/** What a run left behind, as the checker sees it: read from the pushed branch (or the base when nothing was pushed). */
export interface Outcome {
  /** The branch's text files (path → content). */
  files: ReadonlyMap<string, string>;
  /** What changed against the base (renames detected). */
  changed: readonly ChangedFile[];
  /** The navigation's entries on the branch; null when the site has no navigation file. */
  nav: readonly string[] | null;
  /** The docs checks on the branch; null when they were not run. */
  checks: CheckReport | null;
  /** The agent's final reply (the last turn's summary). */
  reply: string;
  /** Why the run failed (RunError code and message), or null. */
  error: string | null;
}

export interface CriterionResult {
  /** Names the criterion, e.g. `nav includes "guides/webhooks"`, `docs checks pass`. */
  criterion: string;
  ok: boolean;
  /** What was wrong, when it failed. */
  detail?: string;
}
