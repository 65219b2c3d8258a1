// The request/response handling the typed clients and the dashboard (src/dashboard/api.ts) share: JSON in and
// out, the bearer key (the dashboard has none: its session cookie goes along), and every non-2xx answer turned
// into an ApiError carrying the API's stable code.
/** A non-2xx answer from the API, with its stable code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { message: string; path?: string }[] = [],
    readonly requestId: string | null = null,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface HttpOptions {
  /** e.g. http://127.0.0.1:3000 */
  baseUrl: string;
  /** The key sent as `Authorization: Bearer …`; none for a browser signed in with the session cookie. */
  key?: string;
  fetch?: typeof fetch;
}

export type HttpCall = <T>(
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{ status: number; body: T; headers: Headers; text: string }>;

export function createHttpCall(opts: HttpOptions): HttpCall {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;

  return async function call<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: T; headers: Headers; text: string }> {
    const h: Record<string, string> = { ...(opts.key === undefined ? {} : { authorization: `Bearer ${opts.key}` }), accept: 'application/json', ...headers };
    if (body !== undefined) h['content-type'] = 'application/json';
    const res = await doFetch(base + path, { method, headers: h, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const e = (parsed ?? {}) as { error?: string; code?: string; details?: { message: string; path?: string }[] };
      const retry = res.headers.get('retry-after');
      throw new ApiError(
        res.status,
        e.code ?? `http_${res.status}`,
        e.error ?? (text.slice(0, 200) || res.statusText),
        e.details ?? [],
        res.headers.get('x-request-id'),
        retry && /^\d+$/.test(retry) ? Number(retry) : null,
      );
    }
    return { status: res.status, body: parsed as T, headers: res.headers, text };
  };
}
