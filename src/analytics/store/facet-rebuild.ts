// Deriving a project's daily facets from its stored events: what reclassification does after changing classes
// (events read from the day segments), and what migration 0010 did for the event rows stored before the table
// existed. Runs inside the caller's write transaction; `events` gives the project's events a page at a time,
// `write` adds a batch of rows (flat, analytics_daily_facets column order, distinct keys) to the stored counts.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { FacetAccumulator } from '../classify/facets.ts';
import { isStaticAsset } from '../classify/normalize.ts';
import { type FacetSourceRow, facetStore } from './facet-store.ts';

/** Rows accumulated in memory before they are written. */
const FLUSH_ROWS = 50_000;

export async function rebuildFacets(
  trx: Kysely<DB>,
  projectOrd: number,
  events: AsyncIterable<readonly FacetSourceRow[]>,
  write: (values: unknown[]) => Promise<unknown>,
): Promise<void> {
  await facetStore.deleteFacets(trx, projectOrd);
  const acc = new FacetAccumulator();
  const days = new Set<number>();
  const flush = async () => {
    if (acc.size > 0) await write(acc.flat(projectOrd));
    for (const d of acc.days) days.add(d);
    acc.clear();
  };
  for await (const rows of events) {
    for (const r of rows) {
      acc.add({
        day: r.day,
        visitor: r.visitor_ord,
        cls: r.class,
        rule: r.rule,
        qualifying: Number(r.qualifying),
        method: r.method,
        status: r.status === null ? null : Number(r.status),
        referrer: r.referrer,
        staticAsset: () => isStaticAsset(r.path),
      });
    }
    if (acc.size >= FLUSH_ROWS) await flush();
  }
  await flush();
  // Every day that had facets may have changed (or lost them all): a new version for each, and for new days.
  await facetStore.bumpAllDayVersions(trx, projectOrd);
  await facetStore.bumpDayVersions(
    trx,
    projectOrd,
    [...days].sort((a, b) => a - b),
  );
}
