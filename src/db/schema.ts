// The whole database as Kysely sees it: each area declares its own tables.
import type { AnalyticsTables } from '../analytics/store/tables.ts';
import type { CodeHostEventTables } from '../code-host-events/tables.ts';
import type { JobsTables } from '../jobs/tables.ts';
import type { WebhookTables } from '../jobs/webhook-tables.ts';
import type { ProjectsTables } from '../projects/tables.ts';
import type { SessionsTables } from '../sessions/tables.ts';

export interface DB extends ProjectsTables, JobsTables, AnalyticsTables, WebhookTables, SessionsTables, CodeHostEventTables {}
