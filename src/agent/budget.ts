// Budgets that stop a job: the limits, their names and bounds (one table, used by the HTTP schema, the CLI and
// the config), and the pure check made before a turn and at every step boundary. No I/O, no dependencies.

/** The budgets a job or project may set. Tokens and spend count over the whole job; steps and wall time per turn. */
export interface BudgetLimits {
  maxSteps?: number;
  maxInputTokens?: number;
  maxOutputTokens?: number;
  maxTurnMs?: number;
  maxCostUsd?: number;
  /** Not a stop: a branch that changes more files opens its pull request as a draft (src/agent/scope.ts). */
  maxChangedFiles?: number;
}

export type BudgetField = keyof BudgetLimits;

interface FieldRule {
  /** The budget's name in the job's error message. */
  name: string;
  integer: boolean;
  minimum: number;
  maximum: number;
  description: string;
}

const TOKENS_MAX = 1e12;

/** Every budget field with its bounds: the one place they are written. */
export const BUDGET_FIELDS: Record<BudgetField, FieldRule> = {
  maxSteps: { name: 'steps', integer: true, minimum: 1, maximum: 1000, description: 'Model steps per turn.' },
  maxInputTokens: { name: 'input tokens', integer: true, minimum: 1, maximum: TOKENS_MAX, description: 'Input tokens over the whole job.' },
  maxOutputTokens: { name: 'output tokens', integer: true, minimum: 1, maximum: TOKENS_MAX, description: 'Output tokens over the whole job.' },
  maxTurnMs: { name: 'wall time per turn', integer: true, minimum: 1, maximum: 7 * 86_400_000, description: 'Wall time of one turn, in milliseconds.' },
  maxCostUsd: {
    name: 'spend',
    integer: false,
    minimum: 0.000001,
    maximum: 1_000_000,
    description: "Spend over the whole job in US dollars (only where the model's price is known).",
  },
  maxChangedFiles: {
    name: 'changed files',
    integer: true,
    minimum: 1,
    maximum: 100_000,
    description:
      'Files the branch may change against its base (out-of-scope files reverted); not a stop: a turn that ends over it opens its pull request as a draft.',
  },
};

export const BUDGET_FIELD_NAMES = Object.keys(BUDGET_FIELDS) as BudgetField[];

/** The project's daily token budget (input + output tokens of all its jobs in a UTC day): its bounds. */
export const DAILY_TOKENS_RULE: FieldRule = {
  name: 'project daily tokens',
  integer: true,
  minimum: 1,
  maximum: 1e15,
  description: 'Input + output tokens of all jobs of the project in one UTC day.',
};

/** Why `value` is not a valid value of a budget rule (null when it is). */
export function budgetValueProblem(rule: FieldRule, value: unknown): string | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
  if (rule.integer && !Number.isInteger(value)) return 'must be a whole number';
  if (value < rule.minimum || value > rule.maximum) return `must be between ${rule.minimum} and ${rule.maximum}`;
  return null;
}

/** Per field, the first of the given layers that sets it (job, then project, then server). */
export function resolveBudget(...layers: ReadonlyArray<BudgetLimits | null | undefined>): BudgetLimits {
  const out: BudgetLimits = {};
  for (const field of BUDGET_FIELD_NAMES) {
    const value = layers.find((l) => l?.[field] !== undefined)?.[field];
    if (value !== undefined) out[field] = value;
  }
  return out;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Known when the model's price is (src/agent/prices.ts). */
  costUsd?: number | null;
}

/** What a turn runs under: its limits, what the job used before it, and the project's day. */
export interface RunBudget {
  limits: BudgetLimits;
  /** The job's usage before this turn (tokens and spend budgets count the whole job). */
  before: Usage;
  /** The project's daily token budget and what its jobs used today (UTC) before this turn. */
  daily?: { limit: number; used: number } | undefined;
}

/** This turn so far. */
export interface TurnProgress extends Usage {
  steps: number;
  elapsedMs: number;
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');
const usd = (n: number) => `$${n < 1 ? n.toFixed(4) : n.toFixed(2)}`;
const duration = (ms: number) => (ms < 1000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 100) / 10} s`);

/** The message of a reached budget: its name, then what was used of it. */
function reached(name: string, used: string, limit: string): string {
  return `${name}: ${used} of ${limit} used`;
}

/**
 * The first budget this turn has reached (used ≥ limit), as "<name>: <used> of <limit> used"; null while none
 * is. Spend is checked only when the cost is known.
 */
export function exhaustedBudget(budget: RunBudget, turn: TurnProgress): string | null {
  const { limits, before, daily } = budget;
  const input = before.inputTokens + turn.inputTokens;
  const output = before.outputTokens + turn.outputTokens;
  if (daily && daily.used + turn.inputTokens + turn.outputTokens >= daily.limit) {
    return `${reached(DAILY_TOKENS_RULE.name, count(daily.used + turn.inputTokens + turn.outputTokens), count(daily.limit))} today (UTC)`;
  }
  if (limits.maxInputTokens !== undefined && input >= limits.maxInputTokens)
    return reached(BUDGET_FIELDS.maxInputTokens.name, count(input), count(limits.maxInputTokens));
  if (limits.maxOutputTokens !== undefined && output >= limits.maxOutputTokens)
    return reached(BUDGET_FIELDS.maxOutputTokens.name, count(output), count(limits.maxOutputTokens));
  const cost = turn.costUsd == null ? null : (before.costUsd ?? 0) + turn.costUsd;
  if (limits.maxCostUsd !== undefined && cost !== null && cost >= limits.maxCostUsd)
    return reached(BUDGET_FIELDS.maxCostUsd.name, usd(cost), usd(limits.maxCostUsd));
  if (limits.maxTurnMs !== undefined && turn.elapsedMs >= limits.maxTurnMs) return wallTimeReached(turn.elapsedMs, limits.maxTurnMs);
  if (limits.maxSteps !== undefined && turn.steps >= limits.maxSteps) return reached(BUDGET_FIELDS.maxSteps.name, count(turn.steps), count(limits.maxSteps));
  return null;
}

/** The wall-time budget's message (also when its timer, not a step boundary, stopped the turn). */
export function wallTimeReached(elapsedMs: number, limitMs: number): string {
  return reached(BUDGET_FIELDS.maxTurnMs.name, duration(Math.max(elapsedMs, limitMs)), duration(limitMs));
}

/** The message a job fails with when a budget stops it. */
export function budgetMessage(reachedBudget: string): string {
  return `Budget exhausted: ${reachedBudget}; the turn stopped and its unfinished changes were not committed`;
}
