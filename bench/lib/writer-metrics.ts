// The ingest writer's group commits as the service reports them in /metrics (src/http/metrics.ts,
// inkwell_analytics_ingest_*), read around each round: how many requests shared a group, how long its transaction
// took and how long its writes waited for the WAL sync. What a page view's 202 waited for, from the service itself.

const NAMES = {
  groups: 'inkwell_analytics_ingest_groups_total',
  events: 'inkwell_analytics_ingest_group_events_total',
  transactionSum: 'inkwell_analytics_ingest_transaction_seconds_sum',
  transactionCount: 'inkwell_analytics_ingest_transaction_seconds_count',
  syncSum: 'inkwell_analytics_ingest_sync_seconds_sum',
  syncCount: 'inkwell_analytics_ingest_sync_seconds_count',
} as const;

export type WriterCounts = Record<keyof typeof NAMES, number>;

/** The counts in a /metrics text; null when it has none (an older checkout, or a store without them). */
export function parseWriterCounts(text: string): WriterCounts | null {
  const out: Partial<WriterCounts> = {};
  for (const [key, name] of Object.entries(NAMES) as [keyof typeof NAMES, string][]) {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    if (!m) return null;
    out[key] = Number(m[1]);
  }
  return out as WriterCounts;
}

export async function readWriterCounts(baseUrl: string): Promise<WriterCounts | null> {
  try {
    const r = await fetch(`${baseUrl}/metrics`);
    return r.ok ? parseWriterCounts(await r.text()) : null;
  } catch {
    return null;
  }
}

export interface WriterRound {
  groups: number;
  /** Events per group transaction (one event per request: requests per group). */
  eventsPerGroup: number;
  /** Mean transaction of a group, ms. */
  transactionMs: number;
  /** Mean wait for the WAL sync after COMMIT, ms (null: none measured, e.g. PostgreSQL). */
  syncMs: number | null;
}

/** What the writer did between two readings; null without both, or when it committed nothing. */
export function writerRound(before: WriterCounts | null, after: WriterCounts | null): WriterRound | null {
  if (!before || !after) return null;
  const groups = after.groups - before.groups;
  if (groups <= 0) return null;
  const syncs = after.syncCount - before.syncCount;
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return {
    groups,
    eventsPerGroup: r2((after.events - before.events) / groups),
    transactionMs: r2(((after.transactionSum - before.transactionSum) * 1000) / Math.max(1, after.transactionCount - before.transactionCount)),
    syncMs: syncs > 0 ? r2(((after.syncSum - before.syncSum) * 1000) / syncs) : null,
  };
}
