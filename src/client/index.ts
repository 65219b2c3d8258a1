// Typed HTTP client for the Inkwell job API (used by the CLI and the tests). fetch-based, no state. Its
// request and response types are the generated types of the OpenAPI document (api.ts).
import { setTimeout as delay } from 'node:timers/promises';
import type { QueryParams, RequestBody, ResponseBody } from './api.ts';
import { ApiError, createHttpCall } from './http.ts';
import { SseParser } from './sse.ts';

export { ApiError };

export type Job = ResponseBody<'/v2/agent/{projectId}/job/{id}', 'get', 200>;
export type JobStatus = Job['status'];
export type JobList = ResponseBody<'/v2/agent/{projectId}/jobs', 'get', 200>;
export type JobEventsPage = ResponseBody<'/v2/agent/{projectId}/job/{id}/events', 'get', 200>;
export type JobEvent = JobEventsPage['events'][number];
export type JobDiff = ResponseBody<'/v2/agent/{projectId}/job/{id}/diff', 'get', 200>;
export type JobDiffFile = JobDiff['files'][number];
export type CreateJobInput = RequestBody<'/v2/agent/{projectId}/job', 'post'>;
export type ListJobsQuery = QueryParams<'/v2/agent/{projectId}/jobs', 'get'>;

export interface ClientOptions {
  /** e.g. http://127.0.0.1:3000 */
  baseUrl: string;
  /** Admin key (ink_…). */
  key: string;
  fetch?: typeof fetch;
}

export interface StreamOptions {
  /** Start after this seq (default 0: from the first event). */
  after?: number;
  signal?: AbortSignal;
  /** Reconnect (with Last-Event-ID) when the connection drops; default true. */
  reconnect?: boolean;
  /** Delay before a reconnect when the server sent no `retry:` (ms). */
  retryMs?: number;
}

export function createClient(opts: ClientOptions) {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;

  const call = createHttpCall(opts);

  const jobPath = (projectId: string, id?: string) => `/v2/agent/${encodeURIComponent(projectId)}/job${id ? `/${encodeURIComponent(id)}` : ''}`;
  const idem = (key?: string): Record<string, string> => (key ? { 'idempotency-key': key } : {});

  return {
    async createJob(projectId: string, input: CreateJobInput, o: { idempotencyKey?: string } = {}): Promise<Job> {
      return (await call<ResponseBody<'/v2/agent/{projectId}/job', 'post', 201>>('POST', jobPath(projectId), input, idem(o.idempotencyKey))).body;
    },

    async getJob(projectId: string, id: string): Promise<Job> {
      return (await call<Job>('GET', jobPath(projectId, id))).body;
    },

    async sendMessage(projectId: string, id: string, prompt: string, o: { idempotencyKey?: string } = {}): Promise<Job> {
      const body: RequestBody<'/v2/agent/{projectId}/job/{id}/message', 'post'> = { prompt };
      return (
        await call<ResponseBody<'/v2/agent/{projectId}/job/{id}/message', 'post', 200>>(
          'POST',
          `${jobPath(projectId, id)}/message`,
          body,
          idem(o.idempotencyKey),
        )
      ).body;
    },

    async listJobs(projectId: string, q: ListJobsQuery = {}): Promise<JobList> {
      const qs = new URLSearchParams();
      if (q.status) qs.set('status', q.status);
      if (q.limit !== undefined) qs.set('limit', String(q.limit));
      if (q.cursor) qs.set('cursor', q.cursor);
      const s = qs.toString();
      return (await call<JobList>('GET', `/v2/agent/${encodeURIComponent(projectId)}/jobs${s ? `?${s}` : ''}`)).body;
    },

    async archiveJob(projectId: string, id: string): Promise<Job> {
      return (await call<ResponseBody<'/v2/agent/{projectId}/job/{id}/archive', 'post', 200>>('POST', `${jobPath(projectId, id)}/archive`)).body;
    },

    /** The job branch's diff against its base, with per-file stats (no files while the job has pushed nothing). */
    async getDiff(projectId: string, id: string): Promise<JobDiff> {
      return (await call<JobDiff>('GET', `${jobPath(projectId, id)}/diff`)).body;
    },

    /** The same diff as unified text only (`format=patch`), and whether it was cut at 1 MiB. */
    async getDiffPatch(projectId: string, id: string): Promise<{ patch: string; truncated: boolean }> {
      const r = await call<unknown>('GET', `${jobPath(projectId, id)}/diff?format=patch`, undefined, { accept: 'text/x-diff' });
      return { patch: r.text, truncated: r.headers.get('inkwell-diff-truncated') === 'true' };
    },

    /** Stored events after `after` (one page; `hasMore` says to ask again from the last seq). */
    async events(projectId: string, id: string, q: QueryParams<'/v2/agent/{projectId}/job/{id}/events', 'get'> = {}): Promise<JobEventsPage> {
      return (await call<JobEventsPage>('GET', `${jobPath(projectId, id)}/events?after=${q.after ?? 0}`)).body;
    },

    /**
     * Live events over SSE, each exactly once and in order: on a dropped connection it reconnects with
     * Last-Event-ID. Ends when `signal` aborts (or, with reconnect: false, when the connection ends).
     */
    async *streamEvents(projectId: string, id: string, o: StreamOptions = {}): AsyncGenerator<JobEvent> {
      let last = o.after ?? 0;
      let retryMs = o.retryMs ?? 1000;
      const reconnect = o.reconnect ?? true;
      for (;;) {
        if (o.signal?.aborted) return;
        let res: Response;
        try {
          res = await doFetch(`${base}${jobPath(projectId, id)}/events`, {
            headers: { authorization: `Bearer ${opts.key}`, accept: 'text/event-stream', 'last-event-id': String(last) },
            ...(o.signal ? { signal: o.signal } : {}),
          });
        } catch (err) {
          if (o.signal?.aborted) return;
          if (!reconnect) throw err;
          await sleep(retryMs, o.signal);
          continue;
        }
        if (!res.ok) {
          const text = await res.text();
          let e: { error?: string; code?: string } = {};
          try {
            e = JSON.parse(text) as typeof e;
          } catch {
            // not JSON
          }
          // 4xx will not get better by retrying.
          if (res.status < 500 || !reconnect)
            throw new ApiError(res.status, e.code ?? `http_${res.status}`, e.error ?? res.statusText, [], res.headers.get('x-request-id'));
          await sleep(retryMs, o.signal);
          continue;
        }
        const parser = new SseParser();
        const decoder = new TextDecoder();
        try {
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
            for (const msg of parser.push(decoder.decode(chunk, { stream: true }))) {
              if (msg.retry !== undefined) retryMs = msg.retry;
              if (!msg.data) continue;
              const ev = JSON.parse(msg.data) as JobEvent;
              if (ev.seq <= last) continue; // never twice
              last = ev.seq;
              yield ev;
            }
          }
        } catch (err) {
          if (o.signal?.aborted) return;
          if (!reconnect) throw err;
        }
        if (!reconnect || o.signal?.aborted) return;
        await sleep(retryMs, o.signal);
      }
    },
  };
}

export type InkwellClient = ReturnType<typeof createClient>;

/** Waits `ms`, or less when `signal` aborts (then resolves too: the caller checks the signal next). */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, signal ? { signal } : {}).catch(() => undefined);
}

/** Settled: a client waiting for the job may stop (until a follow-up message). */
export function isSettled(job: Pick<Job, 'status'>): boolean {
  return job.status !== 'active';
}
