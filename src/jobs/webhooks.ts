// Webhooks: project configuration, the outbox the job system writes to, and the dispatcher that
// signs (Standard Webhooks) and delivers with retries persisted in the database.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { Config } from '../config.ts';
import type { Database } from '../db/index.ts';
import type { DB } from '../db/schema.ts';
import type { AppContext } from '../http/context.ts';
import { base62 } from '../lib/ids.ts';
import { scrubSecrets } from '../lib/logger.ts';
import { iso, isoOrNull } from '../lib/time.ts';
import { NotFoundError, type ProjectService, type ProjectSettings } from '../projects/service.ts';
import { createProjectsStore } from '../projects/store.ts';
import { postWebhook, RefusedAddressError, validateWebhookUrl } from './webhook-delivery.ts';
import { type AttemptOutcome, isSuccessStatus, nextState, type WebhookEvent, webhookPayload } from './webhook-policy.ts';
import { createWebhookStore, type DeliveryRow } from './webhook-store.ts';
import type { WebhookDeliveryStatus } from './webhook-tables.ts';

export { WebhookUrlError } from './webhook-delivery.ts';
export type { WebhookEvent, WebhookEventType } from './webhook-policy.ts';

/** A Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

export interface WebhookView {
  projectId: string;
  url: string;
}

export interface WebhookDeliveryView {
  id: string;
  eventType: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  deliveredAt: string | null;
}

function toView(r: DeliveryRow): WebhookDeliveryView {
  return {
    id: r.id,
    eventType: r.event_type,
    status: r.status,
    attempts: r.attempts,
    nextAttemptAt: r.status === 'pending' ? isoOrNull(r.next_attempt_at) : null,
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    deliveredAt: isoOrNull(r.delivered_at),
  };
}

/** A redelivery that cannot happen now (the delivery is still pending, or the project has no webhook). */
export class RedeliverConflictError extends Error {}

interface ServiceDeps {
  config: Pick<Config, 'webhooks'>;
  db: Database;
  projects: ProjectService;
  now?: () => number;
}

/** Configuration and the delivery log (used by the CLI). */
export function createWebhookService(deps: ServiceDeps) {
  const store = createWebhookStore(deps.db.kysely, deps.db.caps);
  const requireProject = async (projectId: string) => {
    const p = await deps.projects.getProject(projectId);
    if (!p) throw new NotFoundError(`Project ${projectId} not found`);
    return p;
  };
  return {
    /** Validates the URL (DNS included), stores it with a new secret, and returns the secret once. */
    async set(projectId: string, url: string): Promise<WebhookView & { secret: string }> {
      await requireProject(projectId);
      const normalised = await validateWebhookUrl(url, deps.config.webhooks.allowPrivate);
      const secret = generateWebhookSecret();
      await deps.projects.updateSettings(projectId, { webhook: { url: normalised, secret } } satisfies Partial<ProjectSettings>);
      return { projectId, url: normalised, secret };
    },
    async get(projectId: string): Promise<WebhookView | null> {
      const p = await requireProject(projectId);
      return p.settings.webhook ? { projectId, url: p.settings.webhook.url } : null;
    },
    /** Removes the webhook; deliveries still queued are cancelled when they come due. */
    async remove(projectId: string): Promise<boolean> {
      const p = await requireProject(projectId);
      if (!p.settings.webhook) return false;
      await deps.projects.updateSettings(projectId, { webhook: null });
      return true;
    },
    /**
     * Sends a finished delivery again (same id and body; attempts and the retry window start over). Throws
     * NotFoundError for an unknown delivery or one of another project, RedeliverConflictError while it is still
     * pending or when the project has no webhook.
     */
    async redeliver(projectId: string, deliveryId: string): Promise<WebhookDeliveryView> {
      const p = await requireProject(projectId);
      const d = await store.getDelivery(deliveryId);
      if (!d || d.project_id !== projectId) throw new NotFoundError(`Delivery ${deliveryId} not found`);
      if (!p.settings.webhook) throw new RedeliverConflictError('the project has no webhook: set one first');
      const requeued = await store.requeueDelivery(deliveryId, projectId, (deps.now ?? Date.now)());
      if (!requeued) throw new RedeliverConflictError(`delivery ${deliveryId} is still pending: it is retried on its own`);
      // The state this request made (queued again), not a later read: the dispatcher may already be sending it.
      return toView({ ...d, ...requeued });
    },
    async deliveries(projectId: string, opts: { limit?: number; status?: WebhookDeliveryStatus } = {}): Promise<WebhookDeliveryView[]> {
      await requireProject(projectId);
      return (await store.listDeliveries(projectId, opts.limit ?? 50, opts.status)).map(toView);
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;

/**
 * Queues an event for the project's webhook, if it has one. Call it after the job's state change is
 * stored (or inside the same transaction: `db` may be a Kysely transaction). `data` is `{job}` with
 * the job as the API shows it.
 */
export async function enqueueWebhook(db: Database | Kysely<DB>, projectId: string, event: WebhookEvent, now: number = Date.now()): Promise<void> {
  const kysely = 'kysely' in db ? db.kysely : db;
  const project = await createProjectsStore(kysely).getProject(projectId);
  if (!project) return;
  const settings = JSON.parse(project.settings) as ProjectSettings;
  if (!settings.webhook) return;
  // Only INSERT is used, so the dialect capabilities do not matter here.
  await createWebhookStore(kysely, { skipLocked: false }).insertDelivery({
    id: `msg_${base62(24)}`,
    project_id: projectId,
    event_type: event.type,
    payload: webhookPayload(event, now),
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    last_status_code: null,
    last_error: null,
    created_at: now,
    updated_at: now,
    delivered_at: null,
  });
}

export interface DispatcherOptions {
  /** Deliveries claimed per round. */
  batchSize?: number;
}

const MAX_ERROR_CHARS = 500;

function cleanError(text: string, secret?: string): string {
  let t = scrubSecrets(text);
  if (secret) t = t.split(secret).join('[redacted]');
  const bare = secret?.replace(/^whsec_/, '');
  if (bare) t = t.split(bare).join('[redacted]');
  return t.length > MAX_ERROR_CHARS ? `${t.slice(0, MAX_ERROR_CHARS)}…` : t;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid url)';
  }
}

/** One attempt for one claimed delivery; never throws. */
async function attempt(ctx: AppContext, row: DeliveryRow, log: Logger): Promise<{ outcome: AttemptOutcome; target: string | null }> {
  let secret: string | undefined;
  let target: string | null = null;
  try {
    const project = await ctx.projects.getProject(row.project_id);
    const hook = project?.settings.webhook;
    if (!hook) return { outcome: { kind: 'cancelled', error: 'the project has no webhook any more' }, target: null };
    secret = hook.secret;
    target = originOf(hook.url);
    const sentAt = new Date(ctx.now());
    const signature = new Webhook(hook.secret).sign(row.id, sentAt, row.payload);
    const res = await postWebhook({
      url: hook.url,
      headers: {
        'webhook-id': row.id,
        'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
        'webhook-signature': signature,
      },
      body: row.payload,
      timeoutMs: ctx.config.webhooks.timeoutMs,
      allowPrivate: ctx.config.webhooks.allowPrivate,
    });
    if (isSuccessStatus(res.statusCode)) return { outcome: { kind: 'delivered', statusCode: res.statusCode }, target };
    const snippet = res.bodySnippet.replace(/\s+/g, ' ').trim().slice(0, 200);
    return {
      outcome: { kind: 'retryable', statusCode: res.statusCode, error: cleanError(`HTTP ${res.statusCode}${snippet ? `: ${snippet}` : ''}`, secret) },
      target,
    };
  } catch (err) {
    const message = cleanError(err instanceof Error ? err.message : String(err), secret);
    if (err instanceof RefusedAddressError) return { outcome: { kind: 'permanent', statusCode: null, error: `refused: ${message}` }, target };
    if (err instanceof Error && err.name === 'WebhookUrlError') return { outcome: { kind: 'retryable', statusCode: null, error: message }, target };
    const code = (err as NodeJS.ErrnoException)?.code;
    log.debug({ deliveryId: row.id, code }, 'webhook attempt error');
    return { outcome: { kind: 'retryable', statusCode: null, error: code && !message.includes(code) ? `${code}: ${message}` : message }, target };
  }
}

/**
 * Drains due deliveries until stopped. Claims are atomic (SKIP LOCKED on PostgreSQL), so several
 * processes may run a dispatcher against one database. Never throws; `stop()` waits for attempts in
 * flight (each bounded by the webhook timeout).
 */
export function startWebhookDispatcher(ctx: AppContext, opts: DispatcherOptions = {}): { stop(): Promise<void> } {
  const log = ctx.logger.child({ component: 'webhooks' });
  const store = createWebhookStore(ctx.db.kysely, ctx.db.caps);
  const cfg = ctx.config.webhooks;
  const batchSize = opts.batchSize ?? 10;
  // A claimed attempt that never reports back (crash) becomes due again after this long.
  const leaseMs = cfg.timeoutMs + 30_000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;

  const deliverOne = async (row: DeliveryRow): Promise<void> => {
    const { outcome, target } = await attempt(ctx, row, log);
    const now = ctx.now();
    const next = nextState(outcome, row.attempts, row.created_at, now, cfg);
    const statusCode = 'statusCode' in outcome ? outcome.statusCode : null;
    const error = outcome.kind === 'delivered' ? null : outcome.error;
    await store.finishAttempt(row.id, row.attempts, {
      status: next.status,
      next_attempt_at: next.status === 'pending' ? next.nextAttemptAt : null,
      last_status_code: statusCode,
      last_error: error,
      delivered_at: next.status === 'delivered' ? next.deliveredAt : null,
      updated_at: now,
    });
    const fields = { deliveryId: row.id, projectId: row.project_id, eventType: row.event_type, attempt: row.attempts, target, statusCode };
    if (next.status === 'delivered') log.info(fields, 'webhook delivered');
    else if (next.status === 'pending') log.warn({ ...fields, error, nextAttemptAt: iso(next.nextAttemptAt) }, 'webhook attempt failed; will retry');
    else log.warn({ ...fields, error, status: next.status }, `webhook ${next.status}`);
  };

  const round = async (): Promise<number> => {
    const now = ctx.now();
    const rows = await store.claimDue(now, now + leaseMs, batchSize);
    await Promise.all(
      rows.map((r) =>
        deliverOne(r).catch((err) => {
          log.error({ err, deliveryId: r.id }, 'webhook delivery bookkeeping failed');
        }),
      ),
    );
    return rows.length;
  };

  const loop = async (): Promise<void> => {
    let delay = cfg.pollIntervalMs;
    try {
      const claimed = await round();
      // A full batch means more may be waiting: go again at once.
      if (claimed === batchSize) delay = 0;
    } catch (err) {
      log.error({ err }, 'webhook dispatcher round failed');
      delay = Math.min(cfg.pollIntervalMs * 5, 30_000);
    }
    if (!stopped) timer = setTimeout(tick, delay);
  };

  function tick(): void {
    current = loop();
  }

  timer = setTimeout(tick, 0);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
