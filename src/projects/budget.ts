// A project's budget defaults (settings.budget): the job budgets of src/agent/budget.ts plus the project's daily
// token budget. Pure: parses what `inkwell project set` was given.
import { BUDGET_FIELD_NAMES, BUDGET_FIELDS, type BudgetLimits, budgetValueProblem, DAILY_TOKENS_RULE } from '../agent/budget.ts';
import { ProjectInputError } from './validate.ts';

export interface ProjectBudget extends BudgetLimits {
  /** Input + output tokens of all the project's jobs per UTC day. */
  dailyTokens?: number;
}

export type ProjectBudgetField = keyof ProjectBudget;

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Each project budget field, the CLI option that sets it and its rule. */
export const PROJECT_BUDGET_OPTIONS = [
  ...BUDGET_FIELD_NAMES.map((field) => ({ field: field as ProjectBudgetField, flag: kebab(field), rule: BUDGET_FIELDS[field] })),
  { field: 'dailyTokens' as ProjectBudgetField, flag: 'daily-tokens', rule: DAILY_TOKENS_RULE },
];

/**
 * The budget after the changes (field → text as typed; `none` removes the default). Throws ProjectInputError
 * naming the option and the rule.
 */
export function changeProjectBudget(current: ProjectBudget | undefined, change: Partial<Record<ProjectBudgetField, string>>): ProjectBudget {
  const next: ProjectBudget = { ...(current ?? {}) };
  for (const { field, flag, rule } of PROJECT_BUDGET_OPTIONS) {
    const text = change[field];
    if (text === undefined) continue;
    if (text.trim() === 'none') {
      delete next[field];
      continue;
    }
    const value = /^\s*\d+(\.\d+)?\s*$/.test(text) ? Number(text) : Number.NaN;
    const problem = budgetValueProblem(rule, value);
    if (problem) throw new ProjectInputError(flag, `${rule.name} ${problem}, or none to remove it (got ${JSON.stringify(text)})`);
    next[field] = value;
  }
  return next;
}
