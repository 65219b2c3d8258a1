// The benchmarks' reading of the ingest writer's counts: parsed from the text the service's /metrics renders
// (src/http/metrics.ts), so a renamed series fails here rather than reading as "no figures".
import { describe, expect, it } from 'vitest';
import { parseWriterCounts, writerRound } from '../../bench/lib/writer-metrics.ts';
import { newWriterStats, observeSeconds } from '../../src/analytics/ingest/writer/writer-stats.ts';
import { createMetrics } from '../../src/http/metrics.ts';

describe('writer metrics in benchmarks', () => {
  it("reads the service's /metrics text and gives a round's requests per group, transaction and sync times", async () => {
    const stats = newWriterStats();
    const text = async () => createMetrics(() => ({ ingest: structuredClone(stats) })).registry.metrics();
    const before = parseWriterCounts(await text());
    expect(before).toEqual({ groups: 0, events: 0, transactionSum: 0, transactionCount: 0, syncSum: 0, syncCount: 0 });
    stats.groups = 4;
    stats.events = 92;
    for (const s of [0.001, 0.002, 0.001, 0.002]) observeSeconds(stats.transactionSeconds, s);
    for (const s of [0.003, 0.003, 0.002, 0.004]) observeSeconds(stats.syncSeconds, s);
    const after = parseWriterCounts(await text());
    expect(writerRound(before, after)).toEqual({ groups: 4, eventsPerGroup: 23, transactionMs: 1.5, syncMs: 3 });
  });

  it('has no figures without the series, without a reading, or when nothing was committed', async () => {
    expect(parseWriterCounts(await createMetrics().registry.metrics())).toBeNull();
    const zero = { groups: 3, events: 30, transactionSum: 0.01, transactionCount: 3, syncSum: 0, syncCount: 0 };
    expect(writerRound(null, zero)).toBeNull();
    expect(writerRound(zero, zero)).toBeNull();
    // PostgreSQL: groups and transactions, no WAL-sync waits.
    expect(writerRound(zero, { ...zero, groups: 5, events: 50, transactionSum: 0.014, transactionCount: 5 })).toEqual({
      groups: 2,
      eventsPerGroup: 10,
      transactionMs: 2,
      syncMs: null,
    });
  });
});
