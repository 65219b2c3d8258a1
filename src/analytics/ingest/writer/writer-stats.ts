// What an ingest writer did since it started, for /metrics (inkwell_analytics_ingest_*): the group transactions it
// committed and the events in them, how long each group's transaction took (first statement to COMMIT), and how
// long a group's writes then waited for the WAL sync that made them durable (wal-sync.ts; none where COMMIT
// syncs itself). What an operator needs to tell a slow disk from a busy writer when 202s slow down. Plain numbers:
// the worker thread's writer sends a copy to the serving thread (ingest-worker.ts).

/** Upper bounds (seconds) of the histograms' buckets. */
export const WRITER_SECONDS_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];

export interface SecondsHistogram {
  /** Observations per bucket of WRITER_SECONDS_BUCKETS (not cumulative); the last slot counts those above the highest bound. */
  counts: number[];
  sum: number;
  count: number;
}

export interface IngestWriterStats {
  /** Group transactions committed. */
  groups: number;
  /** Events in them (an import's duplicates included). */
  events: number;
  transactionSeconds: SecondsHistogram;
  syncSeconds: SecondsHistogram;
}

const histogram = (): SecondsHistogram => ({ counts: new Array<number>(WRITER_SECONDS_BUCKETS.length + 1).fill(0), sum: 0, count: 0 });

export function newWriterStats(): IngestWriterStats {
  return { groups: 0, events: 0, transactionSeconds: histogram(), syncSeconds: histogram() };
}

export function observeSeconds(h: SecondsHistogram, seconds: number): void {
  let i = 0;
  while (i < WRITER_SECONDS_BUCKETS.length && seconds > (WRITER_SECONDS_BUCKETS[i] as number)) i++;
  h.counts[i] = (h.counts[i] as number) + 1;
  h.sum += seconds;
  h.count++;
}

/** A copy (what a reader may keep while the writer goes on counting). */
export function copyWriterStats(s: IngestWriterStats): IngestWriterStats {
  const copy = (h: SecondsHistogram): SecondsHistogram => ({ counts: [...h.counts], sum: h.sum, count: h.count });
  return { groups: s.groups, events: s.events, transactionSeconds: copy(s.transactionSeconds), syncSeconds: copy(s.syncSeconds) };
}

/** The counts of `a` and `b` together (a new object). */
export function addWriterStats(a: IngestWriterStats, b: IngestWriterStats): IngestWriterStats {
  const add = (x: SecondsHistogram, y: SecondsHistogram): SecondsHistogram => ({
    counts: x.counts.map((c, i) => c + (y.counts[i] ?? 0)),
    sum: x.sum + y.sum,
    count: x.count + y.count,
  });
  return {
    groups: a.groups + b.groups,
    events: a.events + b.events,
    transactionSeconds: add(a.transactionSeconds, b.transactionSeconds),
    syncSeconds: add(a.syncSeconds, b.syncSeconds),
  };
}
