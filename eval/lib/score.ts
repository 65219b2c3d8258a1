// The checker: a task's success criteria against what the run left behind. Pure: the Outcome is read from the
// real repository the real agent pushed (eval/lib/outcome.ts); nothing here knows what the answer should be
// beyond the task's declared criteria.
import { findingLine } from '../../src/docs-checks/format.ts';
import { matchesAny } from './glob.ts';
import type { CriterionResult, Outcome, Pattern, TaskExpect } from './types.ts';

/** `/source/flags` or a bare source (with `defaultFlags`) as a RegExp; throws on an invalid one. */
export function patternOf(p: Pattern, defaultFlags = 'm'): RegExp {
  const m = /^\/([\s\S]*)\/([a-z]*)$/.exec(p);
  return m ? new RegExp(m[1]!, m[2]) : new RegExp(p, defaultFlags);
}

const quote = (s: string) => JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s);

/** Changed paths, both sides of a rename. */
export function changedPaths(outcome: Pick<Outcome, 'changed'>): string[] {
  return [...new Set(outcome.changed.flatMap((c) => (c.oldPath ? [c.oldPath, c.path] : [c.path])))].sort();
}

function fileCriteria(path: string, expect: NonNullable<TaskExpect['files']>[string], outcome: Outcome): CriterionResult[] {
  const out: CriterionResult[] = [];
  const text = outcome.files.get(path);
  if (expect.exists !== undefined) {
    const ok = expect.exists === (text !== undefined);
    out.push({ criterion: `${path} ${expect.exists ? 'exists' : 'does not exist'}`, ok, ...(ok ? {} : { detail: expect.exists ? 'missing' : 'still there' }) });
  }
  const content = (name: string, test: (t: string) => boolean) => {
    if (text === undefined) out.push({ criterion: `${path} ${name}`, ok: false, detail: 'the file does not exist' });
    else out.push({ criterion: `${path} ${name}`, ok: test(text) });
  };
  for (const s of expect.contains ?? []) content(`contains ${quote(s)}`, (t) => t.includes(s));
  for (const p of expect.matches ?? []) content(`matches ${p}`, (t) => patternOf(p).test(t));
  // Absent text is absent from a file that does not exist: not-contains holds then.
  for (const s of expect.notContains ?? []) {
    const ok = text === undefined || !text.includes(s);
    out.push({ criterion: `${path} does not contain ${quote(s)}`, ok, ...(ok ? {} : { detail: `line ${lineOf(text!, text!.indexOf(s))}` }) });
  }
  for (const p of expect.notMatches ?? []) {
    const m = text === undefined ? null : patternOf(p).exec(text);
    out.push({ criterion: `${path} does not match ${p}`, ok: m === null, ...(m ? { detail: `line ${lineOf(text!, m.index)}: ${quote(m[0])}` } : {}) });
  }
  return out;
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

const navKey = (entry: string) => entry.replace(/^\/+/, '').replace(/\/+$/, '');

/** Every criterion of `expect` against `outcome`, in a stable order; the run's own completion first. */
export function scoreTask(expect: TaskExpect, outcome: Outcome): CriterionResult[] {
  const out: CriterionResult[] = [];
  out.push({ criterion: 'run completed', ok: outcome.error === null, ...(outcome.error ? { detail: outcome.error } : {}) });
  for (const [path, fileExpect] of Object.entries(expect.files ?? {})) out.push(...fileCriteria(path, fileExpect, outcome));
  const nav = outcome.nav?.map(navKey) ?? null;
  for (const entry of expect.nav?.includes ?? []) {
    const ok = nav?.includes(navKey(entry)) ?? false;
    out.push({ criterion: `nav includes ${quote(entry)}`, ok, ...(ok ? {} : { detail: nav ? 'not in the navigation' : 'the site has no navigation' }) });
  }
  for (const entry of expect.nav?.excludes ?? []) {
    const ok = !(nav?.includes(navKey(entry)) ?? false);
    out.push({ criterion: `nav excludes ${quote(entry)}`, ok, ...(ok ? {} : { detail: 'still in the navigation' }) });
  }
  if (expect.checks) {
    const report = outcome.checks;
    const ok = report !== null && report.findings.length === 0;
    const detail = report === null ? 'the checks did not run' : report.findings.slice(0, 5).map(findingLine).join('; ');
    out.push({ criterion: 'docs checks pass', ok, ...(ok ? {} : { detail }) });
  }
  const changed = changedPaths(outcome);
  if (expect.changed === 'none') {
    out.push({ criterion: 'no files changed', ok: changed.length === 0, ...(changed.length ? { detail: changed.join(', ') } : {}) });
  } else if (expect.changed) {
    const allowed = expect.changed.allowed;
    const extra = changed.filter((p) => !matchesAny(p, allowed));
    out.push({ criterion: 'nothing else changed', ok: extra.length === 0, ...(extra.length ? { detail: `also changed: ${extra.join(', ')}` } : {}) });
  }
  for (const p of expect.reply?.matches ?? []) {
    const ok = patternOf(p, 'i').test(outcome.reply);
    out.push({ criterion: `reply matches ${p}`, ok, ...(ok ? {} : { detail: quote(outcome.reply.replace(/\s+/g, ' ')) }) });
  }
  return out;
}

/** The failed criteria's names. */
export function failedCriteria(results: readonly CriterionResult[]): string[] {
  return results.filter((r) => !r.ok).map((r) => r.criterion);
}
