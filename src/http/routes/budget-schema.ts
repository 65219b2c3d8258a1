// The `budget` of POST …/job: every field of src/agent/budget.ts with its bounds (a value out of them is a 400
// naming the field).
import { type TNumber, type TOptional, Type } from 'typebox';
import { BUDGET_FIELD_NAMES, BUDGET_FIELDS, type BudgetField } from '../../agent/budget.ts';
import { JOB_ERROR_CODES } from '../../agent/run-error.ts';

const fields = Object.fromEntries(
  BUDGET_FIELD_NAMES.map((name: BudgetField) => {
    const rule = BUDGET_FIELDS[name];
    const bounds = { minimum: rule.minimum, maximum: rule.maximum, description: rule.description };
    return [name, Type.Optional(rule.integer ? Type.Integer(bounds) : Type.Number(bounds))];
  }),
) as Record<BudgetField, TOptional<TNumber>>;

export const JobBudgetSchema = Type.Object(fields, {
  additionalProperties: false,
  description:
    "The job's own budgets; each unset one falls back to the project's default, then the server's. A job that reaches one fails with `budget_exhausted` at the next step boundary; that turn's changes are not committed. `maxChangedFiles` is not a stop: a turn that ends over it opens its pull request as a draft.",
});

/** The job's `error` with the codes a failed job may carry. */
export const JobErrorSchema = Type.Object({
  code: Type.String({ description: `Why the job failed: ${JOB_ERROR_CODES.join(', ')}.` }),
  message: Type.String({ description: 'For a person; for `budget_exhausted` it names the budget ("output tokens: 20,000 of 20,000 used").' }),
});
