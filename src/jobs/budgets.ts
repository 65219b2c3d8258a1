// The budgets a turn runs under (src/agent/budget.ts): per field the job's own, else the project's default, else
// the server's; the project's daily token budget with what its jobs used today (UTC), counted from the stored
// turns; and what the job used before this turn.
import { type BudgetLimits, type RunBudget, resolveBudget } from '../agent/budget.ts';
import type { Config } from '../config.ts';
import type { ProjectService } from '../projects/service.ts';
import type { Claim } from './queue.ts';
import type { JobsStore } from './store.ts';

const DAY_MS = 86_400_000;

export interface BudgetSourceDeps {
  store: Pick<JobsStore, 'projectTokensBetween'>;
  /** Where the project's budget defaults are read (its settings). */
  projects: Pick<ProjectService, 'getProject'>;
  defaults: Config['budget'];
  now: () => number;
}

export type BudgetSource = (claim: Claim) => Promise<RunBudget>;

function parseJobBudget(text: string | null): BudgetLimits | null {
  return text === null ? null : (JSON.parse(text) as BudgetLimits);
}

export function createBudgetSource(deps: BudgetSourceDeps): BudgetSource {
  return async ({ job }) => {
    const project = (await deps.projects.getProject(job.project_id))?.settings.budget;
    const limits = resolveBudget(parseJobBudget(job.budget), project, deps.defaults);
    const dailyLimit = project?.dailyTokens ?? deps.defaults.projectDailyTokens;
    let daily: RunBudget['daily'];
    if (dailyLimit !== undefined) {
      const dayStart = Math.floor(deps.now() / DAY_MS) * DAY_MS;
      daily = { limit: dailyLimit, used: await deps.store.projectTokensBetween(job.project_id, dayStart, dayStart + DAY_MS) };
    }
    const before = {
      inputTokens: Number(job.input_tokens),
      outputTokens: Number(job.output_tokens),
      costUsd: job.cost_usd === null ? null : Number(job.cost_usd),
    };
    return { limits, before, daily };
  };
}
