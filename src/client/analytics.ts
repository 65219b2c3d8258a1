// Typed HTTP client for the analytics API (used by `inkwell analytics visitors|views` and the tests).
export interface Counts {
  human: number;
  ai: number;
  total: number;
}

export interface PathCounts extends Counts {
  path: string;
}

export interface VisitorsPage {
  totals: Counts;
  visitors: PathCounts[];
  hasMore: boolean;
}

export interface ViewsPage {
  totals: Counts;
  views: PathCounts[];
  hasMore: boolean;
}

export interface ExportQuery {
  dateFrom?: string;
  dateTo?: string;
  limit?: number;
  offset?: number;
}

export interface IngestEventInput {
  path?: string;
  url?: string;
  timestamp?: string;
  userAgent?: string;
  ip?: string;
  visitorId?: string;
  accept?: string;
  status?: number;
  method?: string;
  referrer?: string;
}

export interface IngestResponse {
  accepted: number;
  rejected: { index: number; error: string }[];
}

/** A non-2xx answer, with the API's stable code and details. */
export class AnalyticsApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { message: string; path?: string }[] = [],
  ) {
    super(message);
    this.name = 'AnalyticsApiError';
  }
}

export function createAnalyticsClient(opts: { baseUrl: string; key: string; fetch?: typeof fetch }) {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${opts.key}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await doFetch(base + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const e = (parsed ?? {}) as { error?: string; code?: string; details?: { message: string; path?: string }[] };
      throw new AnalyticsApiError(res.status, e.code ?? `http_${res.status}`, e.error ?? (text.slice(0, 200) || res.statusText), e.details ?? []);
    }
    return parsed as T;
  }

  const qs = (q: ExportQuery) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, String(v));
    const s = p.toString();
    return s ? `?${s}` : '';
  };
  const at = (projectId: string, what: string) => `/v1/analytics/${encodeURIComponent(projectId)}/${what}`;

  return {
    visitors: (projectId: string, q: ExportQuery = {}) => call<VisitorsPage>('GET', at(projectId, 'visitors') + qs(q)),
    views: (projectId: string, q: ExportQuery = {}) => call<ViewsPage>('GET', at(projectId, 'views') + qs(q)),
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
