// Environment → one typed, validated config object. Every default lives here.
import path from 'node:path';

export interface RateLimitRule {
  /** Requests (or events, for ingest) allowed per window. */
  max: number;
  windowMs: number;
}

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** postgres://… switches the store to PostgreSQL; undefined means embedded SQLite. */
  databaseUrl: string | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Pretty logs (for a terminal) instead of JSON lines. */
  logPretty: boolean;
  /** Largest request body accepted (413 above). */
  bodyLimitBytes: number;
  /** Timeouts and size limits of the HTTP server (slow or half-sent requests, idle connections, SSE). */
  http: {
    /** A request's headers must arrive within this long of its first byte (408 and close otherwise). */
    headersTimeoutMs: number;
    /** A whole request (headers and body) must arrive within this long (408 and close otherwise; 0: no limit). */
    requestTimeoutMs: number;
    /** An idle kept-alive connection is closed after this long without a new request. */
    keepAliveTimeoutMs: number;
    /** Largest total size of a request's header lines (431 above). */
    maxHeaderBytes: number;
    /** A live event stream (SSE) sends a comment line after this long without an event. */
    sseHeartbeatMs: number;
    /** A live event stream is ended after this long (the client reconnects with Last-Event-ID; 0: no limit). */
    sseMaxLifetimeMs: number;
  };
  /** On SIGTERM/SIGINT, how long in-flight requests may take before their connections are closed. */
  shutdownTimeoutMs: number;
  /**
   * Behind a reverse proxy: which X-Forwarded-For hops to trust for `request.ip` (visitor identity).
   * false (default: the socket address), true (trust all), a hop count, or addresses/CIDRs.
   */
  trustProxy: boolean | number | string[];
  rateLimits: {
    /** Job create + message, per project. */
    jobs: RateLimitRule;
    /** Analytics reads (visitors, views), per project. */
    analyticsRead: RateLimitRule;
    /** Analytics ingest, counted in events, per project. */
    ingest: RateLimitRule;
  };
  model: {
    defaultModel: string;
    anthropicApiKey: string | undefined;
    anthropicBaseUrl: string | undefined;
    openaiApiKey: string | undefined;
    openaiBaseUrl: string | undefined;
    openaiCompatibleBaseUrl: string | undefined;
    openaiCompatibleApiKey: string | undefined;
    maxRetries: number;
    /** First retry delay for 429/5xx model responses; doubles per attempt (a Retry-After header wins when larger). */
    retryBaseDelayMs: number;
    /** One model call must answer (streaming: send its next chunk) within this, else it is retried. */
    requestTimeoutMs: number;
    /** Use streaming chat responses (SSE) instead of one JSON response per model call. */
    streaming: boolean;
  };
  agent: {
    maxSteps: number;
    runTimeoutMs: number;
    gitAuthorName: string;
    gitAuthorEmail: string;
  };
  worker: {
    concurrency: number;
    leaseMs: number;
    pollIntervalMs: number;
    maxAttempts: number;
    /** Clean worktrees kept per repository for the next job (0: every job checks out a new one). */
    worktreePool: number;
    /**
     * The only git config file the worker's git reads besides the mirror's own (which Inkwell writes):
     * INKWELL_GIT_CONFIG_GLOBAL. Unset: none (the system and ~/.gitconfig files are never read).
     */
    gitConfigGlobal: string | undefined;
  };
  hosts: {
    githubToken: string | undefined;
    githubApiUrl: string;
    gitlabToken: string | undefined;
    gitlabUrl: string;
    /** Longest total wait for a code host's rate limit within one pull-request step; a longer one fails the run (host_rate_limited). */
    maxWaitMs: number;
  };
  webhooks: {
    allowPrivate: boolean;
    /** Per-attempt timeout for a delivery (connect + response). */
    timeoutMs: number;
    /** Delay before retry n (n = 1, 2, …); the last entry repeats until maxAgeMs. */
    retryScheduleMs: number[];
    /** A delivery not delivered this long after it was created is marked failed. */
    maxAgeMs: number;
    /** How often the dispatcher looks for due deliveries. */
    pollIntervalMs: number;
  };
  analytics: {
    /** A page walk of the visitors/views export keeps its snapshot this long after its last request. */
    snapshotMs: number;
    /** Computed export results kept in memory (each holds one row per path). */
    resultCacheEntries: number;
    /** Dictionary cache entries (paths, visitors) kept in memory per project for ingest. */
    dictionaryCacheEntries: number;
    /** Decoded per-day visitor sets kept in memory by the visitors export, in MiB. */
    daySetCacheMb: number;
    /** How often an API process persists the day sets of changed days (0 = never; built on demand then). */
    sealIntervalMs: number;
    /** How the visitors export counts: per-day visitor sets (default) or one SQL aggregation (for comparison). */
    visitorsEngine: 'daysets' | 'sql';
    /** Ingest writes a SQLite file from a worker thread (own connection), so commits never block requests. */
    ingestWorker: boolean;
  };
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    rule: string,
  ) {
    super(`Invalid configuration: ${variable} ${rule}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

function int(env: Env, name: string, def: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = str(env, name);
  if (v === undefined) return def;
  if (!/^\d+$/.test(v)) throw new ConfigError(name, `must be a whole number (got ${JSON.stringify(v)})`);
  const n = Number(v);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max} (got ${n})`);
  return n;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], def: T): T {
  const v = str(env, name);
  if (v === undefined) return def;
  if (!(values as readonly string[]).includes(v)) throw new ConfigError(name, `must be one of ${values.join(', ')} (got ${JSON.stringify(v)})`);
  return v as T;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const v = str(env, name);
  if (v === undefined) return def;
  if (['1', 'true', 'yes', 'on'].includes(v.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(v.toLowerCase())) return false;
  throw new ConfigError(name, `must be 1/0, true/false, yes/no or on/off (got ${JSON.stringify(v)})`);
}

function url(env: Env, name: string, def: string): string;
function url(env: Env, name: string): string | undefined;
function url(env: Env, name: string, def?: string): string | undefined {
  const v = str(env, name);
  if (v === undefined) return def;
  try {
    const u = new URL(v);
    if (!['http:', 'https:'].includes(u.protocol) || !u.hostname) throw new Error('scheme');
  } catch {
    throw new ConfigError(name, 'must be an absolute http:// or https:// URL');
  }
  return v.replace(/\/+$/, '');
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `100/1h`, `600/30m`, `5/10s`: max per window. */
export function parseRate(name: string, value: string): RateLimitRule {
  const m = /^(\d+)\/(\d*)(ms|s|m|h|d)$/.exec(value.trim());
  if (!m) throw new ConfigError(name, `must look like 100/1h (count/window with unit ms, s, m, h or d); got ${JSON.stringify(value)}`);
  const max = Number(m[1]);
  const count = m[2] === '' ? 1 : Number(m[2]);
  const windowMs = m[3] === 'ms' ? count : count * (UNIT_MS[m[3] as string] as number);
  if (max < 1 || windowMs < 1) throw new ConfigError(name, 'count and window must be positive');
  return { max, windowMs };
}

function rate(env: Env, name: string, def: string): RateLimitRule {
  return parseRate(name, str(env, name) ?? def);
}

/** Parses a comma-separated list of durations (`5s,30s,2m,1h`; units ms, s, m, h, d). */
function durations(env: Env, name: string, def: string): number[] {
  const v = str(env, name) ?? def;
  const out: number[] = [];
  for (const part of v.split(',')) {
    const m = /^(\d+)(ms|s|m|h|d)$/.exec(part.trim());
    if (!m) throw new ConfigError(name, `must be a comma-separated list of durations like 5s,30s,2m,1h (got ${JSON.stringify(v)})`);
    const ms = m[2] === 'ms' ? Number(m[1]) : Number(m[1]) * (UNIT_MS[m[2] as string] as number);
    if (ms < 1) throw new ConfigError(name, 'durations must be positive');
    out.push(ms);
  }
  return out;
}

/** `true`/`false`, a hop count, or a comma-separated list of IP addresses / CIDR ranges. */
function trustProxy(env: Env, name: string): boolean | number | string[] {
  const v = str(env, name);
  if (v === undefined || /^(false|no|off)$/i.test(v)) return false;
  if (/^(true|yes|on)$/i.test(v)) return true;
  if (/^\d+$/.test(v)) return Number(v);
  const list = v.split(',').map((x) => x.trim());
  for (const x of list) {
    if (!/^(loopback|linklocal|uniquelocal|[0-9a-fA-F.:]+(\/\d{1,3})?)$/.test(x)) {
      throw new ConfigError(name, `must be true, false, a hop count, or comma-separated IP addresses/CIDR ranges (got ${JSON.stringify(x)})`);
    }
  }
  return list;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: Env = process.env): Config {
  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  const databaseUrl = str(env, 'DATABASE_URL');
  if (databaseUrl !== undefined && (!/^postgres(ql)?:\/\//.test(databaseUrl) || !URL.canParse(databaseUrl))) {
    // The value is not echoed: it may carry a password.
    throw new ConfigError('DATABASE_URL', 'must be a postgres:// URL (unset it to use the embedded SQLite database)');
  }
  const host = str(env, 'HOST') ?? '127.0.0.1';
  if (/\s/.test(host)) throw new ConfigError('HOST', `must be a host name or IP address (got ${JSON.stringify(host)})`);
  const headersTimeoutMs = int(env, 'INKWELL_HEADERS_TIMEOUT_MS', 15_000, 100, 3_600_000);
  const requestTimeoutMs = int(env, 'INKWELL_REQUEST_TIMEOUT_MS', 30_000, 0, 3_600_000);
  if (requestTimeoutMs !== 0 && requestTimeoutMs < headersTimeoutMs) {
    // Node's http server refuses a request timeout shorter than the headers timeout.
    throw new ConfigError('INKWELL_REQUEST_TIMEOUT_MS', `must be 0 or at least INKWELL_HEADERS_TIMEOUT_MS (${headersTimeoutMs}); got ${requestTimeoutMs}`);
  }
  const model = str(env, 'INKWELL_MODEL') ?? 'anthropic/claude-sonnet-4-5';
  if (!/^[a-z-]+\/.+$/.test(model)) throw new ConfigError('INKWELL_MODEL', 'must look like <provider>/<model>, e.g. anthropic/claude-sonnet-4-5');
  return {
    host,
    port: int(env, 'PORT', 3000, 0, 65535),
    dataDir: path.resolve(str(env, 'INKWELL_DATA_DIR') ?? './data'),
    databaseUrl,
    logLevel,
    logPretty: bool(env, 'INKWELL_LOG_PRETTY', Boolean(process.stdout.isTTY)),
    bodyLimitBytes: int(env, 'INKWELL_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024),
    http: {
      headersTimeoutMs,
      requestTimeoutMs,
      keepAliveTimeoutMs: int(env, 'INKWELL_KEEP_ALIVE_TIMEOUT_MS', 5000, 1, 3_600_000),
      maxHeaderBytes: int(env, 'INKWELL_MAX_HEADER_BYTES', 16 * 1024, 1024, 1024 * 1024),
      sseHeartbeatMs: int(env, 'INKWELL_SSE_HEARTBEAT_MS', 15_000, 10, 3_600_000),
      sseMaxLifetimeMs: int(env, 'INKWELL_SSE_MAX_LIFETIME_MS', 3_600_000, 0),
    },
    shutdownTimeoutMs: int(env, 'INKWELL_SHUTDOWN_TIMEOUT_MS', 10_000, 0, 3_600_000),
    trustProxy: trustProxy(env, 'INKWELL_TRUST_PROXY'),
    rateLimits: {
      jobs: rate(env, 'INKWELL_RATE_LIMIT_JOBS', '100/1h'),
      analyticsRead: rate(env, 'INKWELL_RATE_LIMIT_ANALYTICS_READ', '600/1h'),
      ingest: rate(env, 'INKWELL_RATE_LIMIT_INGEST', '200000/1m'),
    },
    model: {
      defaultModel: model,
      anthropicApiKey: str(env, 'ANTHROPIC_API_KEY'),
      anthropicBaseUrl: url(env, 'ANTHROPIC_BASE_URL'),
      openaiApiKey: str(env, 'OPENAI_API_KEY'),
      openaiBaseUrl: url(env, 'OPENAI_BASE_URL'),
      openaiCompatibleBaseUrl: url(env, 'OPENAI_COMPATIBLE_BASE_URL'),
      openaiCompatibleApiKey: str(env, 'OPENAI_COMPATIBLE_API_KEY'),
      maxRetries: int(env, 'INKWELL_MODEL_MAX_RETRIES', 3, 0, 20),
      retryBaseDelayMs: int(env, 'INKWELL_MODEL_RETRY_BASE_MS', 1000, 0, 600_000),
      requestTimeoutMs: int(env, 'INKWELL_MODEL_REQUEST_TIMEOUT_MS', 300_000, 50, 3_600_000),
      streaming: bool(env, 'INKWELL_MODEL_STREAMING', true),
    },
    agent: {
      maxSteps: int(env, 'INKWELL_MAX_STEPS', 40, 1, 1000),
      runTimeoutMs: int(env, 'INKWELL_RUN_TIMEOUT_MS', 20 * 60_000, 100),
      gitAuthorName: str(env, 'INKWELL_GIT_AUTHOR_NAME') ?? 'Inkwell Agent',
      gitAuthorEmail: str(env, 'INKWELL_GIT_AUTHOR_EMAIL') ?? 'agent@inkwell.invalid',
    },
    worker: {
      concurrency: int(env, 'INKWELL_WORKER_CONCURRENCY', 2, 1, 256),
      leaseMs: int(env, 'INKWELL_LEASE_MS', 30_000, 100),
      pollIntervalMs: int(env, 'INKWELL_POLL_INTERVAL_MS', 500, 10),
      maxAttempts: int(env, 'INKWELL_MAX_ATTEMPTS', 3, 1, 100),
      worktreePool: int(env, 'INKWELL_WORKTREE_POOL', 2, 0, 64),
      gitConfigGlobal: str(env, 'INKWELL_GIT_CONFIG_GLOBAL'),
    },
    hosts: {
      githubToken: str(env, 'GITHUB_TOKEN'),
      githubApiUrl: url(env, 'GITHUB_API_URL', 'https://api.github.com'),
      gitlabToken: str(env, 'GITLAB_TOKEN'),
      gitlabUrl: url(env, 'GITLAB_URL', 'https://gitlab.com'),
      maxWaitMs: int(env, 'INKWELL_HOST_MAX_WAIT_MS', 15 * 60_000, 0, 24 * 3_600_000),
    },
    webhooks: {
      allowPrivate: bool(env, 'INKWELL_ALLOW_PRIVATE_WEBHOOKS', false),
      timeoutMs: int(env, 'INKWELL_WEBHOOK_TIMEOUT_MS', 10_000, 100, 600_000),
      retryScheduleMs: durations(env, 'INKWELL_WEBHOOK_RETRY_SCHEDULE', '5s,30s,2m,10m,30m,1h,2h,4h'),
      maxAgeMs: int(env, 'INKWELL_WEBHOOK_MAX_AGE_MS', 24 * 3_600_000, 1000),
      pollIntervalMs: int(env, 'INKWELL_WEBHOOK_POLL_INTERVAL_MS', 1000, 10),
    },
    analytics: {
      snapshotMs: int(env, 'INKWELL_ANALYTICS_SNAPSHOT_MS', 600_000, 1000),
      resultCacheEntries: int(env, 'INKWELL_ANALYTICS_RESULT_CACHE', 16, 1, 10_000),
      dictionaryCacheEntries: int(env, 'INKWELL_ANALYTICS_DICTIONARY_CACHE', 200_000, 100),
      daySetCacheMb: int(env, 'INKWELL_ANALYTICS_DAYSET_CACHE_MB', 256, 1, 65_536),
      sealIntervalMs: int(env, 'INKWELL_ANALYTICS_SEAL_INTERVAL_MS', 5000, 0),
      visitorsEngine: oneOf(env, 'INKWELL_ANALYTICS_VISITORS_ENGINE', ['daysets', 'sql'] as const, 'daysets'),
      ingestWorker: bool(env, 'INKWELL_ANALYTICS_INGEST_WORKER', true),
    },
  };
}

/** A config for tests and tools: defaults plus overrides, never reading process.env. */
export function testConfig(overrides: Partial<Config> = {}, env: Env = {}): Config {
  return { ...loadConfig({ LOG_LEVEL: 'silent', INKWELL_LOG_PRETTY: '0', ...env }), ...overrides };
}
