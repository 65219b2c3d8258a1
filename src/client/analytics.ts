// Typed HTTP client for the analytics API (used by `inkwell analytics …` and the tests). Its
// request and response types are the generated types of the OpenAPI document (api.ts).
import type { QueryParams, RequestBody, ResponseBody } from './api.ts';
import { createHttpCall, type HttpOptions } from './http.ts';

export { ApiError } from './http.ts';

export type VisitorsPage = ResponseBody<'/v1/analytics/{projectId}/visitors', 'get', 200>;
export type ViewsPage = ResponseBody<'/v1/analytics/{projectId}/views', 'get', 200>;
export type Counts = VisitorsPage['totals'];
export type PathCounts = VisitorsPage['visitors'][number];
export type ExportQuery = QueryParams<'/v1/analytics/{projectId}/visitors', 'get'>;
export type Series = ResponseBody<'/v1/analytics/{projectId}/series', 'get', 200>;
export type SeriesQuery = QueryParams<'/v1/analytics/{projectId}/series', 'get'>;
export type AgentsPage = ResponseBody<'/v1/analytics/{projectId}/agents', 'get', 200>;
export type ReferrersPage = ResponseBody<'/v1/analytics/{projectId}/referrers', 'get', 200>;

/** One event as `POST /v1/analytics/{projectId}/events` takes it (the log parsers produce this shape). */
export type IngestEventInput = RequestBody<'/v1/analytics/{projectId}/events', 'post'>['events'][number];

export type IngestResponse = ResponseBody<'/v1/analytics/{projectId}/events', 'post', 202>;

export function createAnalyticsClient(opts: HttpOptions) {
  const http = createHttpCall(opts);
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => (await http<T>(method, path, body)).body;

  const qs = (q: ExportQuery | SeriesQuery) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, String(v));
    const s = p.toString();
    return s ? `?${s}` : '';
  };
  const at = (projectId: string, what: string) => `/v1/analytics/${encodeURIComponent(projectId)}/${what}`;

  return {
    visitors: (projectId: string, q: ExportQuery = {}) => call<VisitorsPage>('GET', at(projectId, 'visitors') + qs(q)),
    views: (projectId: string, q: ExportQuery = {}) => call<ViewsPage>('GET', at(projectId, 'views') + qs(q)),
    series: (projectId: string, q: SeriesQuery = {}) => call<Series>('GET', at(projectId, 'series') + qs(q)),
    agents: (projectId: string, q: ExportQuery = {}) => call<AgentsPage>('GET', at(projectId, 'agents') + qs(q)),
    referrers: (projectId: string, q: ExportQuery = {}) => call<ReferrersPage>('GET', at(projectId, 'referrers') + qs(q)),
    sendEvents: (projectId: string, events: IngestEventInput[]) => call<IngestResponse>('POST', at(projectId, 'events'), { events }),

    /** Walks every page of the visitors or views export (offset += limit while hasMore). */
    async *walk(projectId: string, kind: 'visitors' | 'views', q: Omit<ExportQuery, 'offset'> = {}): AsyncGenerator<{ totals: Counts; rows: PathCounts[] }> {
      const limit = q.limit ?? 250;
      for (let offset = 0; ; offset += limit) {
        const page = kind === 'visitors' ? await this.visitors(projectId, { ...q, limit, offset }) : await this.views(projectId, { ...q, limit, offset });
        const rows = 'visitors' in page ? page.visitors : page.views;
        yield { totals: page.totals, rows };
        if (!page.hasMore || rows.length === 0) return;
      }
    },
  };
}

export type AnalyticsClient = ReturnType<typeof createAnalyticsClient>;
