// autocannon runs and the bare-route server process shared by the ingest and API benchmarks.
import { spawn } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { BENCH_DIR } from './dataset.ts';
import { peakRssMb } from './results.ts';
import { REPO_DIR } from './service.ts';

export interface LoadResult {
  requestsPerSecond: number;
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  durationS: number;
  connections: number;
}

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  /** Bodies sent in turn (cycled), for POSTs. */
  bodies?: string[];
  /** Content type of the bodies (default application/json). */
  contentType?: string;
  /** Per body (same index): headers sent with it besides `headers` (e.g. the user agent of a page view). */
  bodyHeaders?: Record<string, string>[];
}

export async function load(baseUrl: string, req: LoadRequest, o: { connections: number; durationS: number }): Promise<LoadResult> {
  let i = 0;
  const bodies = req.bodies;
  const bodyHeaders = req.bodyHeaders;
  const baseHeaders = { ...(req.headers ?? {}), ...(bodies ? { 'content-type': req.contentType ?? 'application/json' } : {}) };
  const r = await autocannon({
    url: baseUrl,
    connections: o.connections,
    duration: o.durationS,
    requests: [
      {
        method: req.method,
        path: req.path,
        headers: baseHeaders,
        ...(bodies
          ? {
              setupRequest: (request: any) => {
                const k = i++ % bodies.length;
                request.body = bodies[k];
                if (bodyHeaders) request.headers = { ...baseHeaders, ...bodyHeaders[k] };
                return request;
              },
            }
          : {}),
      },
    ],
  });
  return {
    requestsPerSecond: Math.round(r.requests.total / r.duration),
    requests: r.requests.total,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max, mean: Math.round(r.latency.mean * 100) / 100 },
    durationS: r.duration,
    connections: o.connections,
  };
}

export interface BareServer {
  baseUrl: string;
  pid: number;
  peakRssMb(): number | null;
  stop(): Promise<void>;
}

export async function startBareServer(): Promise<BareServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(BENCH_DIR, 'lib', 'bare-server.ts')], {
    cwd: REPO_DIR,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve(line.trim());
    });
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  const pid = child.pid as number;
  return {
    baseUrl,
    pid,
    peakRssMb: () => peakRssMb(pid),
    async stop() {
      const done = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await done;
    },
  };
}
