// Analytics endpoints: ingest (/v1/analytics/{projectId}/events, /v1/collect + /script.js) and the exports
// (/v1/analytics/{projectId}/visitors and …/views).
import crypto from 'node:crypto';
import cors from '@fastify/cors';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { parseDateRange } from '../../analytics/dates.ts';
import { SeriesTooLongError } from '../../analytics/export/answers.ts';
import { INTERVALS, type Interval } from '../../analytics/export/series.ts';
import { IngestEventSchema } from '../../analytics/ingest/event.ts';
import type { IngestResult } from '../../analytics/ingest/ingest.ts';
import { UnknownProjectError } from '../../analytics/ingest/ingest.ts';
import { TRACKER_JS } from '../../analytics/ingest/tracker.ts';
import type { AnalyticsService } from '../../analytics/service.ts';
import { AppError, type ErrorDetail } from '../../errors.ts';
import { INGEST_KEY_RE, INGEST_SECRET_KEY_RE, type KeyKind } from '../../lib/ids.ts';
import type { App } from '../app.ts';
import { requireKey } from '../auth.ts';
import type { AppContext } from '../context.ts';
import { documentedAs, errorResponses } from '../documented.ts';

const MAX_EVENTS = 1000;

/**
 * Event fields that rewrite history: a public ingest key (ink_pub_…, readable in any page that embeds the
 * tracker) may not set them, so that nobody can backdate events or choose visitor ids. With that key the
 * server's clock is the event time and the visitor is derived from IP and user agent. An ingest-secret key
 * (ink_ing_…) or an admin key may set them.
 */
const TRUSTED_EVENT_FIELDS = {
  timestamp: "the server's clock is the event time",
  visitorId: 'the visitor is derived from the IP address and user agent of the request',
  ip: 'the IP address is the one the request comes from',
  userAgent: "the user agent is the request's User-Agent header",
} as const;

/** 400 `field_not_allowed` naming each `events.<i>.<field>` a public ingest key may not send (at most 20 listed). */
function refuseTrustedFields(kind: KeyKind, events: unknown[]): void {
  if (kind !== 'ingest') return;
  const details: ErrorDetail[] = [];
  for (let i = 0; i < events.length && details.length < 20; i++) {
    const e = events[i];
    if (typeof e !== 'object' || e === null || Array.isArray(e)) continue;
    for (const field of Object.keys(TRUSTED_EVENT_FIELDS) as (keyof typeof TRUSTED_EVENT_FIELDS)[]) {
      if (Object.hasOwn(e, field)) {
        details.push({
          path: `events.${i}.${field}`,
          message: `field "${field}" is not allowed with a public ingest key (ink_pub_…): ${TRUSTED_EVENT_FIELDS[field]}; a trusted sender uses an ingest-secret key (ink_ing_…)`,
        });
      }
    }
  }
  if (details.length > 0) throw new AppError('field_not_allowed', (details[0] as ErrorDetail).message, details);
}

/** Events with the user agent and IP of the request that brought them (objects only; the rest is rejected later). */
function withRequestIdentity(events: unknown[], userAgent: string, ip: string): unknown[] {
  return events.map((e) => (typeof e === 'object' && e !== null && !Array.isArray(e) ? { ...e, userAgent, ip } : e));
}

const ProjectParams = Type.Object({ projectId: Type.String({ description: 'Project id' }) });

const IngestBody = Type.Object(
  {
    events: Type.Array(documentedAs('IngestEvent', IngestEventSchema), {
      minItems: 1,
      maxItems: MAX_EVENTS,
      description:
        'Page-view events, 1 to 1,000. Each is validated on its own: invalid ones are listed in `rejected`, the rest are stored. With a public ingest key (`ink_pub_…`) an event may not carry `timestamp`, `visitorId`, `ip` or `userAgent` (400 `field_not_allowed` naming the field; the server takes them from its clock and the request); an ingest-secret key (`ink_ing_…`) or an admin key may set them.',
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        events: [
          {
            path: '/docs/install',
            timestamp: '2026-11-25T10:00:00Z',
            ip: '203.0.113.7',
            userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
            referrer: 'https://www.google.com/',
            status: 200,
            method: 'GET',
          },
          { url: 'https://docs.example.com/quickstart.md', userAgent: 'Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)', ip: '20.171.206.1' },
        ],
      },
    ],
  },
);

const IngestResponse = Type.Object(
  {
    accepted: Type.Integer({ description: 'Events stored' }),
    rejected: Type.Array(Type.Object({ index: Type.Integer(), error: Type.String() }), { description: 'Events refused, by index in `events`' }),
  },
  {
    examples: [
      { accepted: 2, rejected: [] },
      { accepted: 1, rejected: [{ index: 1, error: 'status must be an integer from 100 to 599' }] },
    ],
  },
);

const CollectBody = Type.Object(
  {
    projectId: Type.String({ minLength: 1, maxLength: 64 }),
    key: Type.String({
      minLength: 1,
      maxLength: 128,
      description:
        'The project ingest key (ink_pub_…; an ingest-secret key ink_ing_… is also accepted). With ink_pub_… events may not carry `timestamp`, `visitorId`, `ip` or `userAgent`.',
    }),
    events: Type.Array(documentedAs('IngestEvent', IngestEventSchema), {
      minItems: 1,
      maxItems: 50,
      description:
        "Page views, 1 to 50, each validated on its own (invalid ones are listed in `rejected`). The tracker sends `path` (or `url`) and `referrer`; the user agent and IP are the request's.",
    }),
  },
  {
    additionalProperties: false,
    examples: [{ projectId: 'prj_7Hq2LmX9aB3c', key: 'ink_pub_…', events: [{ path: '/docs/install', referrer: 'https://www.google.com/' }] }],
  },
);

const ExportQuery = Type.Object({
  dateFrom: Type.Optional(
    Type.String({ description: 'Inclusive start: YYYY-MM-DD or an ISO 8601 date-time (counts by its UTC date). Default: the first event.' }),
  ),
  dateTo: Type.Optional(Type.String({ description: 'Exclusive end: YYYY-MM-DD or an ISO 8601 date-time (counts by its UTC date). Default: no upper bound.' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 250, default: 50, description: 'Rows per page, 1–250' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Rows to skip; increase by limit while hasMore' })),
});

const Totals = Type.Object({ human: Type.Integer(), ai: Type.Integer(), total: Type.Integer() });
const Row = Type.Object({ path: Type.String(), human: Type.Integer(), ai: Type.Integer(), total: Type.Integer() });
const VisitorsResponse = Type.Object(
  { totals: Totals, visitors: Type.Array(Row), hasMore: Type.Boolean() },
  {
    examples: [
      {
        totals: { human: 1840, ai: 412, total: 2209 },
        visitors: [
          { path: '/docs/install', human: 920, ai: 131, total: 1043 },
          { path: '/docs/quickstart', human: 610, ai: 204, total: 807 },
        ],
        hasMore: true,
      },
    ],
  },
);
const ViewsResponse = Type.Object(
  { totals: Totals, views: Type.Array(Row), hasMore: Type.Boolean() },
  {
    examples: [
      {
        totals: { human: 5120, ai: 1893, total: 7013 },
        views: [
          { path: '/docs/install', human: 2301, ai: 688, total: 2989 },
          { path: '/docs/quickstart', human: 1422, ai: 901, total: 2323 },
        ],
        hasMore: true,
      },
    ],
  },
);

const RangeParams = { dateFrom: ExportQuery.properties.dateFrom, dateTo: ExportQuery.properties.dateTo };
const SeriesQuery = Type.Object({
  ...RangeParams,
  interval: Type.Optional(
    Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month')], {
      default: 'day',
      description: 'Bucket size: a UTC day, an ISO week (Monday to Sunday) or a calendar month. Buckets are clipped to the range.',
    }),
  ),
});
const Count = Type.Integer({ minimum: 0 });
const SeriesCounts = {
  human: Type.Integer({ minimum: 0, description: 'Distinct visitors with a qualifying human view in the bucket' }),
  ai: Type.Integer({ minimum: 0, description: 'Distinct visitors with a qualifying AI view in the bucket' }),
  total: Type.Integer({ minimum: 0, description: 'Distinct visitors with any qualifying view (not human + ai)' }),
  crawlerRequests: Type.Integer({ minimum: 0, description: 'Requests classified as crawler in the bucket' }),
};
const SeriesResponse = Type.Object(
  {
    interval: Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month')]),
    series: Type.Array(Type.Object({ date: Type.String({ format: 'date', description: "The bucket's first day inside the range (UTC)" }), ...SeriesCounts })),
    totals: Type.Object(SeriesCounts, { description: 'Distinct over the whole range, not sums of the buckets' }),
  },
  {
    examples: [
      {
        interval: 'day',
        series: [
          { date: '2026-11-23', human: 412, ai: 96, total: 497, crawlerRequests: 3810 },
          { date: '2026-11-24', human: 455, ai: 120, total: 561, crawlerRequests: 2977 },
        ],
        totals: { human: 801, ai: 190, total: 968, crawlerRequests: 6787 },
      },
    ],
  },
);
const PagedRangeQuery = Type.Object({ ...RangeParams, limit: ExportQuery.properties.limit, offset: ExportQuery.properties.offset });
const AgentsResponse = Type.Object(
  {
    agents: Type.Array(
      Type.Object({
        agent: Type.String({
          description: 'Name of the classification rule (ChatGPT-User, GPTBot, …; markdown-fetch, isbot and empty-user-agent for the generic rules)',
        }),
        class: Type.Union([Type.Literal('ai'), Type.Literal('crawler')]),
        category: Type.Union([Type.Literal('search'), Type.Literal('training'), Type.Literal('other'), Type.Null()], {
          description: "A crawler's category; null for AI",
        }),
        visitors: Type.Integer({ minimum: 0, description: 'Distinct visitors (IP and user agent, or visitorId) with any request in the range' }),
        views: Type.Integer({ minimum: 0, description: 'Page views: GET (or no method), 2xx/304 (or no status), a page rather than a static asset' }),
        requests: Count,
      }),
    ),
    hasMore: Type.Boolean(),
  },
  {
    examples: [
      {
        agents: [
          { agent: 'ChatGPT-User', class: 'ai', category: null, visitors: 311, views: 1208, requests: 1240 },
          { agent: 'GPTBot', class: 'crawler', category: 'training', visitors: 12, views: 9810, requests: 10422 },
        ],
        hasMore: false,
      },
    ],
  },
);
const ReferrersResponse = Type.Object(
  {
    referrers: Type.Array(
      Type.Object({
        host: Type.String({ description: "The referrer's host, lower case, without a leading www." }),
        visitors: Type.Integer({ minimum: 0, description: 'Distinct visitors with a qualifying view from this host' }),
        views: Type.Integer({ minimum: 0, description: 'Qualifying views from this host' }),
      }),
    ),
    hasMore: Type.Boolean(),
  },
  {
    examples: [
      {
        referrers: [
          { host: 'google.com', visitors: 220, views: 301 },
          { host: 'news.ycombinator.com', visitors: 84, views: 90 },
        ],
        hasMore: true,
      },
    ],
  },
);

const QUERY_PARAMS = ['dateFrom', 'dateTo', 'limit', 'offset', 'interval'] as const;
const DIGITS_RE = /^\d{1,15}$/;

interface ParsedQuery {
  fromDay: number | null;
  toDay: number | null;
  limit: number;
  offset: number;
  interval: Interval;
}

/**
 * Strict query validation on the raw strings (before Fastify's coercion, which would accept `1e2`, ` 5`,
 * `0x10` or an empty value): each parameter at most once, limit an integer 1–250, offset an integer ≥ 0,
 * dates as parseDateRange reads them. Every error names its parameter. Unknown parameters were refused
 * before this runs, as on every API route (`unknownQueryParams`, registered in app.ts).
 */
function parseExportQuery(raw: Record<string, unknown>): ParsedQuery {
  const details: ErrorDetail[] = [];
  for (const name of QUERY_PARAMS) {
    if (raw[name] !== undefined && typeof raw[name] !== 'string') details.push({ path: name, message: `${name} must be given at most once` });
  }
  if (details.length > 0) throw new AppError('invalid_request', details[0]?.message, details);
  const q = raw as Partial<Record<(typeof QUERY_PARAMS)[number], string>>;
  const int = (name: 'limit' | 'offset', def: number, min: number, max: number): number => {
    const v = q[name];
    if (v === undefined) return def;
    if (!DIGITS_RE.test(v)) {
      details.push({
        path: name,
        message: `${name} must be an integer from ${min} to ${max === Number.MAX_SAFE_INTEGER ? 'up' : max} (got ${JSON.stringify(v.slice(0, 32))})`,
      });
      return def;
    }
    const n = Number(v);
    if (n < min || n > max)
      details.push({ path: name, message: `${name} must be ${max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `between ${min} and ${max}`} (got ${n})` });
    return n;
  };
  let interval: Interval = 'day';
  if (q.interval !== undefined) {
    if ((INTERVALS as readonly string[]).includes(q.interval)) interval = q.interval as Interval;
    else details.push({ path: 'interval', message: `interval must be day, week or month (got ${JSON.stringify(q.interval.slice(0, 32))})` });
  }
  const limit = int('limit', 50, 1, 250);
  const offset = int('offset', 0, 0, Number.MAX_SAFE_INTEGER);
  const range = parseDateRange(q.dateFrom, q.dateTo);
  if (!range.ok) details.push(...range.details);
  if (details.length > 0 || !range.ok) throw new AppError('invalid_request', details[0]?.message, details);
  return { fromDay: range.fromDay, toDay: range.toDay, limit, offset, interval };
}

export async function analyticsRoutes(app: App, ctx: AppContext, analytics: AnalyticsService): Promise<void> {
  // The app serving analytics runs its background work (day-set sealing) and stops it when it closes.
  analytics.startBackground();
  // The ingest writer's worker thread starts with the server, not with the first batch.
  void analytics.ingest.warmUp();
  app.addHook('onClose', async () => {
    await analytics.close();
  });
  const adminOnly = requireKey(ctx, ['admin']);
  const adminOrIngest = requireKey(ctx, ['admin', 'ingest', 'ingest-secret']);
  const exportQueries = new WeakMap<FastifyRequest, ParsedQuery>();

  async function ingest(projectId: string, events: unknown[], source: 'api' | 'collect'): Promise<IngestResult> {
    try {
      return await analytics.ingest.ingest(projectId, events, { source });
    } catch (err) {
      if (err instanceof UnknownProjectError) throw new AppError('project_not_found');
      throw err;
    }
  }

  app.post(
    '/v1/analytics/:projectId/events',
    {
      onRequest: adminOrIngest,
      schema: {
        tags: ['Analytics'],
        summary: 'Send page-view events',
        description:
          'Server-side ingest (edge or server middleware, which sees AI agents that never run JavaScript). Admin, ingest-secret (`ink_ing_…`) or public ingest (`ink_pub_…`) key. Each event: `path` or `url` (required), `timestamp?` (ISO 8601, default now), `userAgent?`, `ip?` (hashed, never stored), `visitorId?`, `accept?`, `status?`, `method?`, `referrer?`. ' +
          "`timestamp`, `visitorId`, `ip` and `userAgent` may only be set with an ingest-secret or admin key: with a public ingest key they are refused (400 `field_not_allowed`, `details[].path` = `events.<index>.<field>`); the event time is the server clock, and the IP and user agent are the request's, from which the visitor is derived. " +
          'Accepted events are durable when the 202 is sent. Rate limit family `ingest`, counted in events (a refused request is not counted).',
        security: [{ bearerAuth: [] }],
        params: ProjectParams,
        body: IngestBody,
        response: { 202: IngestResponse, ...errorResponses('invalid_request', 'field_not_allowed', 'project_not_found', 'rate_limited') },
      },
    },
    async (request, reply) => {
      const { projectId } = request.params;
      const kind = (request.auth as { kind: KeyKind }).kind;
      refuseTrustedFields(kind, request.body.events);
      ctx.rateLimiter.consume(reply, 'ingest', projectId, request.body.events.length);
      // A public key's events carry the identity of the request itself, as on /v1/collect.
      const events = kind === 'ingest' ? withRequestIdentity(request.body.events, request.headers['user-agent'] ?? '', request.ip) : request.body.events;
      const result = await ingest(projectId, events, 'api');
      return reply.status(202).send({ accepted: result.accepted, rejected: result.rejected });
    },
  );

  /**
   * An analytics read: admin key; the query string parsed strictly from its raw strings (in preValidation,
   * before schema validation would coerce it); the `analyticsRead` rate limit; then `read` with the parsed query.
   */
  function analyticsRead(
    what: string,
    doc: { summary: string; description: string; querystring: TSchema; ok: TSchema },
    read: (projectId: string, q: ParsedQuery, keyId: string) => Promise<unknown>,
  ): void {
    app.get(
      `/v1/analytics/:projectId/${what}`,
      {
        onRequest: adminOnly,
        preValidation: async (request) => {
          exportQueries.set(request, parseExportQuery(request.query as Record<string, unknown>));
        },
        schema: {
          tags: ['Analytics'],
          summary: doc.summary,
          description: doc.description,
          security: [{ bearerAuth: [] }],
          params: ProjectParams,
          querystring: doc.querystring,
          response: { 200: doc.ok, ...errorResponses('invalid_request', 'forbidden', 'project_not_found', 'rate_limited') },
        },
      },
      async (request, reply) => {
        const { projectId } = request.params;
        ctx.rateLimiter.consume(reply, 'analyticsRead', projectId);
        return read(projectId, exportQueries.get(request) as ParsedQuery, request.auth?.keyId ?? '');
      },
    );
  }

  analyticsRead(
    'visitors',
    {
      summary: 'Get unique visitors',
      description:
        'Exact distinct visitors per path and site-wide, split human / AI; `total` is deduplicated across human and AI. Ordered by total descending, then path ascending. Pages of one walk (same key and range, offset > 0 following an offset 0 request) are served from one snapshot, so every path appears exactly once even while events arrive. Admin key.',
      querystring: ExportQuery,
      ok: VisitorsResponse,
    },
    async (projectId, q, walkId) => {
      const page = await analytics.store.visitors({ projectId, walkId, ...q });
      return { totals: page.totals, visitors: page.rows, hasMore: page.hasMore };
    },
  );

  analyticsRead(
    'views',
    {
      summary: 'Get page views',
      description: 'Qualifying page views per path and site-wide (`total = human + ai`). Same parameters, ordering and paging as visitors. Admin key.',
      querystring: ExportQuery,
      ok: ViewsResponse,
    },
    async (projectId, q, walkId) => {
      const page = await analytics.store.views({ projectId, walkId, ...q });
      return { totals: page.totals, views: page.rows, hasMore: page.hasMore };
    },
  );

  analyticsRead(
    'series',
    {
      summary: 'Get unique visitors over time',
      description:
        'Exact distinct visitors per bucket (`interval` day, week or month; UTC), human and AI apart and `total` deduplicated across them, with the crawler requests of each bucket. Every bucket of the range is listed, empty ones with zeros; absent bounds run from the first to the last day with data. At most 1,500 buckets (400 naming `interval` beyond). `totals` are distinct over the whole range. Admin key.',
      querystring: SeriesQuery,
      ok: SeriesResponse,
    },
    async (projectId, q) => {
      try {
        return await analytics.store.series(projectId, q);
      } catch (err) {
        if (err instanceof SeriesTooLongError) throw new AppError('invalid_request', err.message, [{ path: 'interval', message: err.message }]);
        throw err;
      }
    },
  );

  analyticsRead(
    'agents',
    {
      summary: 'Get AI agents and crawlers',
      description:
        'Which AI assistants and crawlers came, by the name of the rule that classified them, with their distinct visitors, page views and requests in the range. Ordered by visitors, then requests, descending, then name; paged like the exports. Admin key.',
      querystring: PagedRangeQuery,
      ok: AgentsResponse,
    },
    async (projectId, q) => {
      const page = await analytics.store.agents(projectId, q);
      return { agents: page.rows, hasMore: page.hasMore };
    },
  );

  analyticsRead(
    'referrers',
    {
      summary: 'Get referrers',
      description:
        "Qualifying views by the host of their referrer (what the tracker and ingest send as `referrer`), with distinct visitors and views. Views without a referrer are not listed; navigation inside the site appears under the site's own host. Ordered by visitors, then views, descending, then host; paged like the exports. Admin key.",
      querystring: PagedRangeQuery,
      ok: ReferrersResponse,
    },
    async (projectId, q) => {
      const page = await analytics.store.referrers(projectId, q);
      return { referrers: page.rows, hasMore: page.hasMore };
    },
  );

  // The browser tracker and its collect endpoint (CORS, text/plain bodies for navigator.sendBeacon).
  const trackerEtag = `"${crypto.createHash('sha256').update(TRACKER_JS).digest('base64url').slice(0, 27)}"`;
  app.get(
    '/script.js',
    {
      schema: {
        tags: ['Analytics'],
        summary: 'Browser tracker script',
        description: 'Include with data-project and data-key (an ingest key). Cached for an hour; answers 304 to a matching If-None-Match.',
        produces: ['application/javascript'],
        response: {
          200: Type.String({
            description: 'The tracker (application/javascript)',
            examples: ['(function () { var s = document.currentScript; var project = s.getAttribute("data-project"); /* … */ })();'],
          }),
          304: Type.Null({ description: 'Not modified: If-None-Match matched the ETag' }),
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'public, max-age=3600, stale-while-revalidate=86400').header('etag', trackerEtag);
      if (request.headers['if-none-match'] === trackerEtag) return reply.status(304).send(null);
      return reply.type('application/javascript; charset=utf-8').send(TRACKER_JS);
    },
  );

  // Its own prefix keeps CORS (and the plugin's OPTIONS route) to /v1/collect alone.
  await app.register(
    async (plain) => {
      const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
      await scope.register(cors, { origin: true, methods: ['POST'], credentials: false, maxAge: 86_400 });
      scope.addContentTypeParser('text/plain', { parseAs: 'string' }, (_req, body, done) => {
        try {
          done(null, JSON.parse(body as string));
        } catch (err) {
          done(new AppError('invalid_json', `Request body is not valid JSON: ${(err as Error).message}`), undefined);
        }
      });
      // Preflight requests are answered by the CORS hook before this handler runs.
      scope.options('/', { schema: { hide: true } }, async (_request, reply) => reply.status(204).send());
      scope.post(
        '/',
        {
          schema: {
            tags: ['Analytics'],
            summary: 'Collect page views from the browser tracker',
            description:
              'CORS-enabled; the ingest key travels in the body because beacons cannot set headers. Body (JSON, sent as text/plain by sendBeacon): `{projectId, key, events: [{path, referrer?}]}`. The user agent comes from the request header and the IP from the connection (behind a reverse proxy, set INKWELL_TRUST_PROXY so the client address is taken from X-Forwarded-For). Ingest key only (`ink_pub_…`, or an ingest-secret `ink_ing_…`); with `ink_pub_…` an event carrying `timestamp`, `visitorId`, `ip` or `userAgent` is refused (400 `field_not_allowed` naming the field).',
            body: CollectBody,
            response: {
              202: IngestResponse,
              ...errorResponses('invalid_request', 'field_not_allowed', 'unauthorized', 'project_not_found', 'rate_limited'),
            },
          },
        },
        async (request, reply) => {
          const { projectId, key, events } = request.body;
          const auth = INGEST_KEY_RE.test(key) || INGEST_SECRET_KEY_RE.test(key) ? await ctx.projects.authenticate(key) : null;
          if (auth?.kind !== 'ingest' && auth?.kind !== 'ingest-secret')
            throw new AppError('unauthorized', 'An ingest key (ink_pub_… or ink_ing_…) of the project is required in "key"');
          if (auth.projectId !== projectId) throw new AppError('project_not_found');
          refuseTrustedFields(auth.kind, events);
          ctx.rateLimiter.consume(reply, 'ingest', projectId, events.length);
          const userAgent = request.headers['user-agent'] ?? '';
          // Only what a page view from the tracker may carry; identity and UA come from the request itself.
          const prepared = events.map((e) => {
            if (typeof e !== 'object' || e === null || Array.isArray(e)) return e;
            const { path, url, referrer, ...rest } = e as Record<string, unknown>;
            return {
              ...rest,
              ...(path !== undefined ? { path } : {}),
              ...(url !== undefined ? { url } : {}),
              ...(referrer !== undefined ? { referrer } : {}),
              userAgent,
              ip: request.ip,
            };
          });
          const result = await ingest(projectId, prepared, 'collect');
          return reply.status(202).send({ accepted: result.accepted, rejected: result.rejected });
        },
      );
    },
    { prefix: '/v1/collect' },
  );
}
