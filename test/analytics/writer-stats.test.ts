// The ingest writer's counts (src/analytics/ingest/writer/writer-stats.ts): histogram buckets, copies and sums.
import { describe, expect, it } from 'vitest';
import { addWriterStats, copyWriterStats, newWriterStats, observeSeconds, WRITER_SECONDS_BUCKETS } from '../../src/analytics/ingest/writer/writer-stats.ts';

describe('writer stats', () => {
  it('counts an observation in the first bucket whose bound it does not exceed, above the highest in the last slot', () => {
    const s = newWriterStats();
    expect(s.transactionSeconds.counts).toHaveLength(WRITER_SECONDS_BUCKETS.length + 1);
    observeSeconds(s.transactionSeconds, 0.0005);
    observeSeconds(s.transactionSeconds, 0.0006);
    observeSeconds(s.transactionSeconds, 60);
    expect(s.transactionSeconds.counts[0]).toBe(1);
    expect(s.transactionSeconds.counts[1]).toBe(1);
    expect(s.transactionSeconds.counts.at(-1)).toBe(1);
    expect(s.transactionSeconds.count).toBe(3);
    expect(s.transactionSeconds.sum).toBeCloseTo(60.0011, 6);
  });

  it('copies (later counts do not reach a copy) and adds two writers’ counts', () => {
    const a = newWriterStats();
    a.groups = 2;
    a.events = 30;
    observeSeconds(a.syncSeconds, 0.003);
    const copy = copyWriterStats(a);
    observeSeconds(a.syncSeconds, 0.003);
    a.groups++;
    expect(copy.groups).toBe(2);
    expect(copy.syncSeconds.count).toBe(1);
    const b = newWriterStats();
    b.groups = 1;
    b.events = 5;
    observeSeconds(b.syncSeconds, 0.2);
    const sum = addWriterStats(copy, b);
    expect(sum.groups).toBe(3);
    expect(sum.events).toBe(35);
    expect(sum.syncSeconds.count).toBe(2);
    expect(sum.syncSeconds.counts.reduce((x, y) => x + y, 0)).toBe(2);
    expect(sum.transactionSeconds.count).toBe(0);
  });
});
