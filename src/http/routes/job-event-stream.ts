// The live event stream of a job (GET …/events with Accept: text/event-stream): server-sent events read from
// the events table, so it works when the worker is another process; the notifier only cuts a poll short when
// this process's worker records an event.
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { sseFrame } from '../../jobs/events.ts';
import type { JobNotifier } from '../../jobs/notify.ts';
import type { JobService } from '../../jobs/service.ts';

/** Events read per query; a full batch is followed at once by the next. */
const BATCH = 500;

export interface EventStreamDeps {
  jobs: Pick<JobService, 'eventsAfter'>;
  notifier: JobNotifier;
  config: Pick<Config, 'http' | 'worker'>;
  /** Streams open now, each with the function that ends it when the server closes. */
  streams: Set<() => void>;
}

/** Streams the job's events after `after` until the client leaves, the server closes, or the stream's lifetime ends. */
export async function streamEvents(deps: EventStreamDeps, request: FastifyRequest, reply: FastifyReply, jobId: string, after: number): Promise<void> {
  if (!startStream(request, reply)) return;
  const res = reply.raw;
  const state = new StreamState();
  deps.streams.add(state.endForClose);
  res.on('close', state.end);
  const offEvent = deps.notifier.onEvent(jobId, state.wake);
  const { sseMaxLifetimeMs } = deps.config.http;
  // A stream ends after its maximum lifetime (an abandoned client cannot hold it forever); EventSource
  // reconnects with Last-Event-ID and resumes exactly after the last event it saw.
  const lifetime = sseMaxLifetimeMs > 0 ? setTimeout(state.end, sseMaxLifetimeMs) : undefined;
  try {
    await pump(deps, res, state, jobId, after);
  } catch (err) {
    request.log.warn({ err, jobId }, 'event stream ended by an error');
  } finally {
    clearTimeout(lifetime);
    offEvent();
    deps.streams.delete(state.endForClose);
    if (!res.writableEnded) res.end();
    // The server is closing: do not leave a kept-alive socket for close() to wait on.
    if (state.serverClosing) res.socket?.end();
  }
}

/**
 * Sends the stream's headers and the client's reconnect delay. False for HEAD (Fastify answers it with this
 * handler): the stream's headers, no stream; a stream has no end, and a HEAD response without one would hold
 * its connection forever.
 */
function startStream(request: FastifyRequest, reply: FastifyReply): boolean {
  reply.hijack();
  const res = reply.raw;
  const headers: Record<string, string> = {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  };
  for (const [k, v] of Object.entries(reply.getHeaders())) if (typeof v === 'string') headers[k] = v;
  res.writeHead(200, headers);
  if (request.method === 'HEAD') {
    res.end();
    return false;
  }
  res.write('retry: 1000\n\n');
  return true;
}

/** Whether the stream is open, why it ended, and the poll wait a new event cuts short. */
class StreamState {
  open = true;
  serverClosing = false;
  private wakeUp: (() => void) | null = null;

  readonly end = (): void => {
    this.open = false;
    this.wakeUp?.();
  };

  readonly endForClose = (): void => {
    this.serverClosing = true;
    this.end();
  };

  readonly wake = (): void => this.wakeUp?.();

  /** Waits `ms`, or less when woken or ended. */
  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }
}

/** Writes every event after `after` as it is stored, and a heartbeat comment when nothing was written for a while. */
async function pump(deps: EventStreamDeps, res: ServerResponse, state: StreamState, jobId: string, after: number): Promise<void> {
  const { sseHeartbeatMs } = deps.config.http;
  const pollMs = Math.min(Math.max(deps.config.worker.pollIntervalMs, 50), 1000, sseHeartbeatMs);
  let lastWrite = Date.now();
  let last = after;
  while (state.open) {
    const batch = await deps.jobs.eventsAfter(jobId, last, BATCH);
    for (const e of batch) {
      if (!state.open) break;
      res.write(sseFrame(e));
      last = e.seq;
      lastWrite = Date.now();
    }
    if (batch.length === BATCH) continue;
    if (Date.now() - lastWrite >= sseHeartbeatMs) {
      res.write(': heartbeat\n\n');
      lastWrite = Date.now();
    }
    await state.sleep(pollMs);
  }
}
