// The analytics service: ingest (preparing events for the store) in front of one analytics store
// (src/analytics/store/analytics-store.ts), which answers everything else. Built in the composition root.
import type { ProjectService } from '../projects/service.ts';
import { createIngestService } from './ingest/ingest.ts';
import type { AnalyticsStore } from './store/analytics-store.ts';

export type { ReclassifyResult } from './store/analytics-store.ts';

export interface AnalyticsDeps<S extends AnalyticsStore> {
  store: S;
  projects: Pick<ProjectService, 'getProject'>;
  now: () => number;
}

export function createAnalyticsService<S extends AnalyticsStore>(deps: AnalyticsDeps<S>) {
  const { store } = deps;
  const ingest = createIngestService({ store, getProject: (id) => deps.projects.getProject(id), now: deps.now });
  return {
    /** Validates, prepares and appends events (routes, log import). */
    ingest,
    /** Every read and reclassification. */
    store,
    /** Starts the store's background upkeep (API processes). */
    startBackground(): void {
      store.startBackground();
    },
    /** Waits for the batches being ingested, then closes the store. */
    async close(): Promise<void> {
      await ingest.close();
      await store.close();
    },
  };
}

export type AnalyticsService<S extends AnalyticsStore = AnalyticsStore> = ReturnType<typeof createAnalyticsService<S>>;
