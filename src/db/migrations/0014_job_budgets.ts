import type { Kysely } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// Job budgets (src/agent/budget.ts): a job's own budget (JSON), the spend so far (USD, null while no turn had a
// known price), and each turn's tokens, from which a project's daily usage is counted.
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('budget', 'text').execute();
  await db.schema.alterTable('jobs').addColumn('cost_usd', 'double precision').execute();
  await db.schema
    .alterTable('job_turns')
    .addColumn('input_tokens', caps.bigintType, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('job_turns')
    .addColumn('output_tokens', caps.bigintType, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('job_turns_finished').on('job_turns').column('finished_at').execute();
}
