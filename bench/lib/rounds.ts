// Rotating rounds: every system is started first and measured in turn, round after round (the order rotates
// each round). On a shared machine the speed changes over a minute, so each Inkwell round is compared with the
// bare round measured just before or after it, and medians over rounds are reported. CPU per request of the
// server process (and of the load generator, and of PostgreSQL when the system uses it) is read around each
// round: steadier than throughput on a noisy machine.
import { type LoadRequest, type LoadResult, load } from './load.ts';
import { cpuMs, cpuMsByThread, cpuMsOfProcesses } from './results.ts';
import { median, round } from './stats.ts';
import { readWriterCounts, type WriterRound, writerRound } from './writer-metrics.ts';

export interface RoundSystem {
  name: string;
  baseUrl: string;
  pid: number;
  req: LoadRequest;
  /** Count the `postgres` processes' CPU in its rounds. */
  usesPg: boolean;
  /** Connections of its rounds when not the rounds' (RoundOptions.connections). */
  connections?: number;
  runs: LoadResult[];
  /** Server process CPU (user + system) per request in each round, µs. */
  cpuUs: (number | null)[];
  /** The server process's CPU per request in each round by thread name (results.ts cpuMsByThread), µs; {} when unknown. */
  threadCpuUs: Record<string, number>[];
  /** The load generator's CPU (this process: autocannon) per request in each round, µs. */
  loadGenCpuUs: number[];
  /** The PostgreSQL server's CPU (all `postgres` processes) per request in each round, µs. */
  pgCpuUs: (number | null)[];
  /** When each round's load ran (epoch ms, start and end): to pair a round with what else was measured meanwhile. */
  windows: [number, number][];
  /** Read the service's ingest writer counts (/metrics) around each round (writer-metrics.ts); Inkwell systems that ingest. */
  writerMetrics?: boolean;
  /** Per round: what the ingest writer did (null: not read, or nothing committed). */
  writer: (WriterRound | null)[];
}

export function roundSystem(name: string, baseUrl: string, pid: number, req: LoadRequest, usesPg = false, connections?: number): RoundSystem {
  return {
    name,
    baseUrl,
    pid,
    req,
    usesPg,
    ...(connections !== undefined ? { connections } : {}),
    runs: [],
    cpuUs: [],
    threadCpuUs: [],
    loadGenCpuUs: [],
    pgCpuUs: [],
    windows: [],
    writer: [],
  };
}

export const medianOrNull = (xs: (number | null)[], digits = 1): number | null => {
  const known = xs.filter((x): x is number => x !== null);
  return known.length ? round(median(known), digits) : null;
};

export interface RoundOptions {
  rounds: number;
  roundS: number;
  connections: number;
  /** Seconds of load per system before the first round (0 = none). */
  warmUpS: number;
  log: (m: string) => void;
  /** How a round's throughput is shown in the log (default: req/s). */
  describe?: (r: LoadResult) => string;
  /**
   * Load every system at once in each round instead of in turn: they share the machine's cores under the same
   * load from elsewhere, so their CPU per request compares even when that load swings from one minute to the next
   * (throughput is then each one's share of the cores; ratios to a bare route mean little).
   */
  together?: boolean;
}

async function measureTogether(systems: RoundSystem[], o: RoundOptions): Promise<void> {
  const show = o.describe ?? ((r: LoadResult) => `${r.requestsPerSecond.toLocaleString('en')} req/s`);
  for (let n = 0; n < o.rounds; n++) {
    const cpu0 = systems.map((sys) => cpuMs(sys.pid));
    const t0 = Date.now();
    const res = await Promise.all(systems.map((sys) => load(sys.baseUrl, sys.req, { connections: sys.connections ?? o.connections, durationS: o.roundS })));
    const cpu1 = systems.map((sys) => cpuMs(sys.pid));
    systems.forEach((sys, i) => {
      const r = res[i] as LoadResult;
      const [a, b] = [cpu0[i], cpu1[i]];
      sys.windows.push([t0, Date.now()]);
      sys.runs.push(r);
      sys.loadGenCpuUs.push(0);
      sys.threadCpuUs.push({});
      sys.writer.push(null);
      sys.pgCpuUs.push(null);
      sys.cpuUs.push(a != null && b != null && r.requests > 0 ? Math.round(((b - a) * 1000 * 10) / r.requests) / 10 : null);
      o.log(`round ${n + 1}/${o.rounds} (together) ${sys.name}: ${show(r)}, p99 ${r.latencyMs.p99} ms, CPU µs/request: server ${sys.cpuUs.at(-1)}`);
    });
  }
}

/** Per thread name present in both readings, its CPU between them per request (µs); `{}` when the process is gone. */
export function threadSplit(before: Record<string, number>, after: Record<string, number>, perRequest: (us: number) => number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, ms] of Object.entries(after)) {
    const was = before[name];
    if (was !== undefined && ms >= was) out[name] = perRequest((ms - was) * 1000);
  }
  return out;
}

/** The median over rounds of each thread name's CPU per request (threadCpuUs), names in descending order. */
export function medianThreadSplit(rounds: readonly Record<string, number>[]): Record<string, number> {
  const names = new Set(rounds.flatMap((r) => Object.keys(r)));
  const medians = [...names].map((n) => [n, medianOrNull(rounds.map((r) => r[n] ?? null)) ?? 0] as const);
  return Object.fromEntries(medians.sort((a, b) => b[1] - a[1]));
}

/** `main 190, WorkerThread 80, …`: the threads of at least 1 µs per request, busiest first. */
export const showThreadSplit = (t: Record<string, number>): string =>
  Object.entries(t)
    .filter(([, us]) => us >= 1)
    .sort((a, b) => b[1] - a[1])
    .map(([name, us]) => `${name} ${Math.round(us)}`)
    .join(', ');

/** `; writer: 23.1 events/group, transaction 1.4 ms, sync 2.8 ms`, or '' without figures. */
const showWriter = (w: WriterRound | null): string =>
  w ? `; writer: ${w.eventsPerGroup} events/group, transaction ${w.transactionMs} ms${w.syncMs === null ? '' : `, sync ${w.syncMs} ms`}` : '';

export async function measureRounds(systems: RoundSystem[], o: RoundOptions): Promise<void> {
  if (o.warmUpS > 0) for (const sys of systems) await load(sys.baseUrl, sys.req, { connections: sys.connections ?? o.connections, durationS: o.warmUpS });
  if (o.together) return measureTogether(systems, o);
  const show = o.describe ?? ((r: LoadResult) => `${r.requestsPerSecond.toLocaleString('en')} req/s`);
  for (let n = 0; n < o.rounds; n++) {
    const order = systems.map((_, i) => systems[(i + n) % systems.length] as RoundSystem);
    for (const sys of order) {
      // Only PostgreSQL mode uses the database server, so only its rounds scan /proc for it (outside the
      // load generator's CPU window).
      // Read before the CPU window opens and after it closes: the service's work answering /metrics is not counted.
      const writer0 = sys.writerMetrics ? await readWriterCounts(sys.baseUrl) : null;
      const pg0 = sys.usesPg ? cpuMsOfProcesses('postgres') : 0;
      const cpu0 = cpuMs(sys.pid);
      const threads0 = cpuMsByThread(sys.pid);
      const gen0 = process.cpuUsage();
      const t0 = Date.now();
      const res = await load(sys.baseUrl, sys.req, { connections: sys.connections ?? o.connections, durationS: o.roundS });
      sys.windows.push([t0, Date.now()]);
      const gen = process.cpuUsage(gen0);
      const cpu1 = cpuMs(sys.pid);
      const threads1 = cpuMsByThread(sys.pid);
      const pg1 = sys.usesPg ? cpuMsOfProcesses('postgres') : 0;
      sys.writer.push(sys.writerMetrics ? writerRound(writer0, await readWriterCounts(sys.baseUrl)) : null);
      sys.runs.push(res);
      const perRequest = (us: number) => (res.requests > 0 ? Math.round((us * 10) / res.requests) / 10 : 0);
      sys.loadGenCpuUs.push(perRequest(gen.user + gen.system));
      sys.threadCpuUs.push(threadSplit(threads0, threads1, perRequest));
      // A backend that exits between the readings makes the difference meaningless.
      sys.pgCpuUs.push(sys.usesPg && pg1 >= pg0 ? perRequest((pg1 - pg0) * 1000) : null);
      sys.cpuUs.push(cpu0 !== null && cpu1 !== null && res.requests > 0 ? perRequest((cpu1 - cpu0) * 1000) : null);
      if (res.non2xx > 0) o.log(`${sys.name}: ${res.non2xx} non-2xx responses`);
      o.log(
        `round ${n + 1}/${o.rounds} ${sys.name}: ${show(res)}, p99 ${res.latencyMs.p99} ms, ` +
          `CPU µs/request: server ${sys.cpuUs.at(-1)} (${showThreadSplit(sys.threadCpuUs.at(-1) ?? {})}), load generator ${sys.loadGenCpuUs.at(-1)}${sys.usesPg ? `, postgres ${sys.pgCpuUs.at(-1)}` : ''}` +
          showWriter(sys.writer.at(-1) ?? null),
      );
    }
  }
}
