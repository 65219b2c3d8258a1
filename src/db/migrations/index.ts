// Numbered, append-only migrations. Never edit one that has shipped; add the next number.
import type { Kysely } from 'kysely';
import type { DialectCaps } from '../dialect.ts';
import * as m0001 from './0001_core.ts';
import * as m0002 from './0002_jobs.ts';
import * as m0003 from './0003_analytics.ts';
import * as m0004 from './0004_jobs_production.ts';
import * as m0005 from './0005_webhooks.ts';
import * as m0006 from './0006_analytics_daysets.ts';
import * as m0007 from './0007_analytics_ingest.ts';
import * as m0008 from './0008_analytics_visitor_index.ts';
import * as m0009 from './0009_analytics_daily_views.ts';
import * as m0010 from './0010_analytics_daily_facets.ts';
import * as m0011 from './0011_dashboard_sessions.ts';
import * as m0012 from './0012_code_host_deliveries.ts';
import * as m0013 from './0013_job_diffs.ts';
import * as m0014 from './0014_job_budgets.ts';
import * as m0015 from './0015_code_host_threads.ts';
import * as m0016 from './0016_analytics_segments.ts';
import * as m0017 from './0017_analytics_day_summaries.ts';
import * as m0018 from './0018_analytics_visitor_bytes.ts';
import * as m0019 from './0019_analytics_visitor_chunks.ts';

export type MigrationFn = (db: Kysely<any>, caps: DialectCaps) => Promise<void>;

export const MIGRATIONS: Record<string, MigrationFn> = {
  '0001_core': m0001.up,
  '0002_jobs': m0002.up,
  '0003_analytics': m0003.up,
  '0004_jobs_production': m0004.up,
  '0005_webhooks': m0005.up,
  '0006_analytics_daysets': m0006.up,
  '0007_analytics_ingest': m0007.up,
  '0008_analytics_visitor_index': m0008.up,
  '0009_analytics_daily_views': m0009.up,
  '0010_analytics_daily_facets': m0010.up,
  '0011_dashboard_sessions': m0011.up,
  '0012_code_host_deliveries': m0012.up,
  '0013_job_diffs': m0013.up,
  '0014_job_budgets': m0014.up,
  '0015_code_host_threads': m0015.up,
  '0016_analytics_segments': m0016.up,
  '0017_analytics_day_summaries': m0017.up,
  '0018_analytics_visitor_bytes': m0018.up,
  '0019_analytics_visitor_chunks': m0019.up,
};
