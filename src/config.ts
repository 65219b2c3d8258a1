// Environment → one typed, validated config object. ConfigSchema is the single source of every setting: its
// type, bounds, default and the environment variable that sets it. `Config` is derived from the schema, and
// loadConfig reads the environment by walking it, so a new setting is one line in the schema.
import path from 'node:path';
import { type Static, type TSchema, Type } from 'typebox';
import { BUDGET_FIELDS, DAILY_TOKENS_RULE } from './agent/budget.ts';
import { parseModelPrices } from './agent/prices.ts';

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

/** How a variable's text becomes its value: the `parse` keyword on each leaf of ConfigSchema. */
type Parse = 'int' | 'decimal' | 'bool' | 'text' | 'choice' | 'url' | 'postgresUrl' | 'path' | 'rate' | 'durations' | 'proxies' | 'prices';

/** What every leaf of ConfigSchema carries besides its JSON Schema keywords. */
interface Setting {
  env: string;
  parse: Parse;
  /** Said when the value breaks `pattern` (text and postgresUrl leaves). */
  rule?: string;
  /** The value is never echoed in an error (it may carry a password). */
  secret?: boolean;
}

const RateLimitRuleSchema = Type.Object({
  /** Requests (or events, for ingest) allowed per window. */
  max: Type.Integer({ minimum: 1 }),
  windowMs: Type.Integer({ minimum: 1 }),
});
export type RateLimitRule = Static<typeof RateLimitRuleSchema>;

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

/** Parses a comma-separated list of durations (`5s,30s,2m,1h`; units ms, s, m, h, d). */
function parseDurations(name: string, value: string): number[] {
  const out: number[] = [];
  for (const part of value.split(',')) {
    const m = /^(\d+)(ms|s|m|h|d)$/.exec(part.trim());
    if (!m) throw new ConfigError(name, `must be a comma-separated list of durations like 5s,30s,2m,1h (got ${JSON.stringify(value)})`);
    const ms = m[2] === 'ms' ? Number(m[1]) : Number(m[1]) * (UNIT_MS[m[2] as string] as number);
    if (ms < 1) throw new ConfigError(name, 'durations must be positive');
    out.push(ms);
  }
  return out;
}

const MAX = Number.MAX_SAFE_INTEGER;
const doc = (description: string | undefined) => (description === undefined ? {} : { description });

// The leaf builders: each names its variable, its default and its bounds once.
const Int = (env: string, def: number, minimum: number, maximum = MAX, description?: string) =>
  Type.Integer({ env, parse: 'int', default: def, minimum, maximum, ...doc(description) });
const Flag = (env: string, def: boolean, description?: string) => Type.Boolean({ env, parse: 'bool', default: def, ...doc(description) });
const Text = (env: string, def: string, extra: { pattern?: string; rule?: string } = {}) => Type.String({ env, parse: 'text', default: def, ...extra });
/** A setting without a default: undefined when its variable is unset. */
const Unset = <T extends TSchema>(schema: T, setting: Setting & { description?: string }) => Type.Union([schema, Type.Undefined()], { ...setting });
const OptionalText = (env: string, description?: string) => Unset(Type.String(), { env, parse: 'text', ...doc(description) });
/** An absolute http(s) base URL; trailing slashes are dropped. */
const HttpUrl = (env: string, def: string) => Type.String({ env, parse: 'url', default: def });
const OptionalHttpUrl = (env: string) => Unset(Type.String(), { env, parse: 'url' });
/** An optional budget (unset: no limit), with the bounds of its rule in src/agent/budget.ts. */
const OptionalBudget = (env: string, rule: { integer: boolean; minimum: number; maximum: number }, description: string) =>
  Unset(rule.integer ? Type.Integer({ minimum: rule.minimum, maximum: rule.maximum }) : Type.Number({ minimum: rule.minimum, maximum: rule.maximum }), {
    env,
    parse: rule.integer ? 'int' : 'decimal',
    description,
  });
const Rate = (env: string, def: string, description: string) =>
  Type.Object(RateLimitRuleSchema.properties, { env, parse: 'rate', default: parseRate(env, def), description });

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const ConfigSchema = Type.Object({
  host: Text('HOST', '127.0.0.1', { pattern: '^\\S+$', rule: 'must be a host name or IP address' }),
  port: Int('PORT', 3000, 0, 65535),
  dataDir: Type.String({ env: 'INKWELL_DATA_DIR', parse: 'path', default: './data', description: 'Resolved against the working directory.' }),
  databaseUrl: Unset(Type.String({ pattern: '^postgres(ql)?://' }), {
    env: 'DATABASE_URL',
    parse: 'postgresUrl',
    rule: 'must be a postgres:// URL (unset it to use the embedded SQLite database)',
    secret: true,
    description: 'postgres://… switches the store to PostgreSQL; unset means embedded SQLite.',
  }),
  sqliteCacheMb: Int(
    'INKWELL_SQLITE_CACHE_MB',
    16,
    1,
    65_536,
    "Page cache of each of the process's SQLite connections, in MiB: its own and the ingest writer thread's (with INKWELL_ANALYTICS_INGEST_WORKER=0 the process's own connection also takes the ingest's writes).",
  ),
  logLevel: Type.Enum(LOG_LEVELS, { env: 'LOG_LEVEL', parse: 'choice', default: 'info' }),
  logPretty: Flag('INKWELL_LOG_PRETTY', Boolean(process.stdout.isTTY), 'Pretty logs (for a terminal) instead of JSON lines; default: whether stdout is one.'),
  bodyLimitBytes: Int('INKWELL_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024, 'Largest request body accepted (413 above).'),
  /** Timeouts and size limits of the HTTP server (slow or half-sent requests, idle connections, SSE). */
  http: Type.Object({
    headersTimeoutMs: Int('INKWELL_HEADERS_TIMEOUT_MS', 15_000, 100, 3_600_000, "A request's headers must arrive within this long of its first byte."),
    requestTimeoutMs: Int('INKWELL_REQUEST_TIMEOUT_MS', 30_000, 0, 3_600_000, 'A whole request must arrive within this long (0: no limit).'),
    keepAliveTimeoutMs: Int('INKWELL_KEEP_ALIVE_TIMEOUT_MS', 5000, 1, 3_600_000, 'An idle kept-alive connection is closed after this long.'),
    maxHeaderBytes: Int('INKWELL_MAX_HEADER_BYTES', 16 * 1024, 1024, 1024 * 1024, "Largest total size of a request's header lines (431 above)."),
    sseHeartbeatMs: Int('INKWELL_SSE_HEARTBEAT_MS', 15_000, 10, 3_600_000, 'A live event stream sends a comment line after this long without an event.'),
    sseMaxLifetimeMs: Int('INKWELL_SSE_MAX_LIFETIME_MS', 3_600_000, 0, MAX, 'A live event stream is ended after this long (0: no limit).'),
  }),
  secretKey: OptionalText(
    'INKWELL_SECRET_KEY',
    'Server secret (at least 32 characters) that code-host webhook secrets are derived from; default: a file in the data directory (embedded database only).',
  ),
  shutdownTimeoutMs: Int('INKWELL_SHUTDOWN_TIMEOUT_MS', 10_000, 0, 3_600_000, 'On SIGTERM/SIGINT, how long in-flight requests may take.'),
  trustProxy: Type.Union([Type.Boolean(), Type.Integer({ minimum: 0 }), Type.Array(Type.String())], {
    env: 'INKWELL_TRUST_PROXY',
    parse: 'proxies',
    default: false,
    description: 'Which X-Forwarded-For hops to trust for request.ip: false (the socket address), true (all), a hop count, or addresses/CIDRs.',
  }),
  rateLimits: Type.Object({
    jobs: Rate('INKWELL_RATE_LIMIT_JOBS', '100/1h', 'Job create + message, per project.'),
    analyticsRead: Rate('INKWELL_RATE_LIMIT_ANALYTICS_READ', '600/1h', 'Analytics reads (visitors, views), per project.'),
    ingest: Rate('INKWELL_RATE_LIMIT_INGEST', '200000/1m', 'Analytics ingest, counted in events, per project.'),
    signIn: Rate('INKWELL_RATE_LIMIT_SIGN_IN', '30/1m', 'Dashboard sign-in attempts, per client address.'),
  }),
  dashboard: Type.Object({
    sessionTtlHours: Int('INKWELL_SESSION_TTL_HOURS', 168, 1, 8760, 'A dashboard session ends this long after its sign-in.'),
    signinLinkTtlMinutes: Int('INKWELL_SIGNIN_LINK_TTL_MINUTES', 15, 1, 1440, 'A one-time sign-in link from `inkwell dashboard` expires after this long.'),
    publicUrl: Unset(Type.String(), {
      env: 'INKWELL_PUBLIC_URL',
      parse: 'url',
      description: 'The URL people open the dashboard at (sign-in links); default: http://HOST:PORT.',
    }),
  }),
  model: Type.Object({
    defaultModel: Text('INKWELL_MODEL', 'anthropic/claude-sonnet-4-5', {
      pattern: '^[a-z-]+/.+$',
      rule: 'must look like <provider>/<model>, e.g. anthropic/claude-sonnet-4-5',
    }),
    anthropicApiKey: OptionalText('ANTHROPIC_API_KEY'),
    anthropicBaseUrl: OptionalHttpUrl('ANTHROPIC_BASE_URL'),
    openaiApiKey: OptionalText('OPENAI_API_KEY'),
    openaiBaseUrl: OptionalHttpUrl('OPENAI_BASE_URL'),
    openaiCompatibleBaseUrl: OptionalHttpUrl('OPENAI_COMPATIBLE_BASE_URL'),
    openaiCompatibleApiKey: OptionalText('OPENAI_COMPATIBLE_API_KEY'),
    maxRetries: Int('INKWELL_MODEL_MAX_RETRIES', 3, 0, 20),
    retryBaseDelayMs: Int(
      'INKWELL_MODEL_RETRY_BASE_MS',
      1000,
      0,
      600_000,
      'First retry delay for 429/5xx model responses; doubles per attempt (a larger Retry-After wins).',
    ),
    requestTimeoutMs: Int(
      'INKWELL_MODEL_REQUEST_TIMEOUT_MS',
      300_000,
      50,
      3_600_000,
      'One model call must answer (streaming: send its next chunk) within this, else it is retried.',
    ),
    streaming: Flag('INKWELL_MODEL_STREAMING', true, 'Streaming chat responses (SSE) instead of one JSON response per model call.'),
    prices: Type.Record(Type.String(), Type.Object({ input: Type.Number({ minimum: 0 }), output: Type.Number({ minimum: 0 }) }), {
      env: 'INKWELL_MODEL_PRICES',
      parse: 'prices',
      default: {},
      description: 'USD per million input/output tokens per model id, JSON; added to and overriding the built-in table (src/agent/prices.ts).',
    }),
  }),
  /** Server defaults of the job budgets (a project's defaults and a job's own budget win); unset: no limit. */
  budget: Type.Object({
    maxInputTokens: OptionalBudget('INKWELL_MAX_INPUT_TOKENS', BUDGET_FIELDS.maxInputTokens, 'Input tokens a job may use over all its turns.'),
    maxOutputTokens: OptionalBudget('INKWELL_MAX_OUTPUT_TOKENS', BUDGET_FIELDS.maxOutputTokens, 'Output tokens a job may use over all its turns.'),
    maxTurnMs: OptionalBudget('INKWELL_MAX_TURN_MS', BUDGET_FIELDS.maxTurnMs, 'Wall time of one turn (workspace and model loop).'),
    maxCostUsd: OptionalBudget('INKWELL_MAX_COST_USD', BUDGET_FIELDS.maxCostUsd, "USD a job may spend, where its model's price is known."),
    maxChangedFiles: Int(
      'INKWELL_MAX_CHANGED_FILES',
      25,
      BUDGET_FIELDS.maxChangedFiles.minimum,
      BUDGET_FIELDS.maxChangedFiles.maximum,
      'Files a branch may change before its pull request opens as a draft (a project default or a job budget wins).',
    ),
    projectDailyTokens: OptionalBudget(
      'INKWELL_PROJECT_DAILY_TOKENS',
      DAILY_TOKENS_RULE,
      'Input + output tokens all jobs of a project may use per UTC day (a project setting wins).',
    ),
  }),
  agent: Type.Object({
    maxSteps: Int('INKWELL_MAX_STEPS', 40, 1, 1000),
    runTimeoutMs: Int('INKWELL_RUN_TIMEOUT_MS', 20 * 60_000, 100),
    checkRepairRounds: Int(
      'INKWELL_CHECK_REPAIR_ROUNDS',
      2,
      0,
      10,
      'Times the docs checks’ findings go back to the model before a run that still fails them opens a draft pull request; 0 turns the automatic check off.',
    ),
    gitAuthorName: Text('INKWELL_GIT_AUTHOR_NAME', 'Inkwell Agent'),
    gitAuthorEmail: Text('INKWELL_GIT_AUTHOR_EMAIL', 'agent@inkwell.invalid'),
  }),
  worker: Type.Object({
    concurrency: Int('INKWELL_WORKER_CONCURRENCY', 2, 1, 256),
    leaseMs: Int('INKWELL_LEASE_MS', 30_000, 100),
    pollIntervalMs: Int('INKWELL_POLL_INTERVAL_MS', 500, 10),
    maxAttempts: Int('INKWELL_MAX_ATTEMPTS', 3, 1, 100),
    worktreePool: Int('INKWELL_WORKTREE_POOL', 2, 0, 64, 'Clean worktrees kept per repository for the next job (0: every job checks out a new one).'),
    gitConfigGlobal: OptionalText(
      'INKWELL_GIT_CONFIG_GLOBAL',
      "The only git config file the worker's git reads besides the mirror's own; unset: none (the system and ~/.gitconfig files are never read).",
    ),
  }),
  hosts: Type.Object({
    githubToken: OptionalText('GITHUB_TOKEN'),
    githubApiUrl: HttpUrl('GITHUB_API_URL', 'https://api.github.com'),
    gitlabToken: OptionalText('GITLAB_TOKEN'),
    gitlabUrl: HttpUrl('GITLAB_URL', 'https://gitlab.com'),
    maxWaitMs: Int(
      'INKWELL_HOST_MAX_WAIT_MS',
      15 * 60_000,
      0,
      24 * 3_600_000,
      "Longest total wait for a code host's rate limit within one pull-request step; a longer one fails the run (host_rate_limited).",
    ),
    githubCreateIntervalMs: Int(
      'INKWELL_GITHUB_CREATE_INTERVAL_MS',
      1000,
      0,
      60_000,
      'Least time between two pull requests or comments created on one GitHub instance (GitHub asks for at least a second between writes; its secondary limit allows 80 content creations a minute).',
    ),
  }),
  webhooks: Type.Object({
    allowPrivate: Flag('INKWELL_ALLOW_PRIVATE_WEBHOOKS', false),
    timeoutMs: Int('INKWELL_WEBHOOK_TIMEOUT_MS', 10_000, 100, 600_000, 'Per-attempt timeout for a delivery (connect + response).'),
    retryScheduleMs: Type.Array(Type.Integer({ minimum: 1 }), {
      env: 'INKWELL_WEBHOOK_RETRY_SCHEDULE',
      parse: 'durations',
      default: parseDurations('INKWELL_WEBHOOK_RETRY_SCHEDULE', '5s,30s,2m,10m,30m,1h,2h,4h'),
      description: 'Delay before retry n (n = 1, 2, …); the last entry repeats until maxAgeMs.',
    }),
    maxAgeMs: Int('INKWELL_WEBHOOK_MAX_AGE_MS', 24 * 3_600_000, 1000, MAX, 'A delivery not delivered this long after it was created is marked failed.'),
    pollIntervalMs: Int('INKWELL_WEBHOOK_POLL_INTERVAL_MS', 1000, 10, MAX, 'How often the dispatcher looks for due deliveries.'),
  }),
  analytics: Type.Object({
    snapshotMs: Int(
      'INKWELL_ANALYTICS_SNAPSHOT_MS',
      600_000,
      1000,
      MAX,
      'A page walk of the visitors/views export keeps its snapshot this long after its last request.',
    ),
    resultCacheEntries: Int('INKWELL_ANALYTICS_RESULT_CACHE', 16, 1, 10_000, 'Computed export results kept in memory (each holds one row per path).'),
    dictionaryCacheEntries: Int(
      'INKWELL_ANALYTICS_DICTIONARY_CACHE',
      200_000,
      100,
      MAX,
      'Dictionary cache entries (paths, visitors) kept in memory per project for ingest.',
    ),
    writerStatementCache: Int(
      'INKWELL_ANALYTICS_WRITER_STATEMENT_CACHE',
      32,
      8,
      4096,
      "Prepared statements kept by the SQLite ingest writer's connection (each holds native memory outside the JavaScript heap).",
    ),
    projectStateMb: Int(
      'INKWELL_ANALYTICS_PROJECT_STATE_MB',
      512,
      1,
      65_536,
      "Ingest's per-project state (visitor hash indexes, dictionary caches) kept in memory, in MiB; least recently written projects are dropped first (their index is read again on their next write).",
    ),
    visitorKeysMb: Int(
      'INKWELL_ANALYTICS_VISITOR_KEYS_MB',
      64,
      0,
      65_536,
      "A project's visitor keys the ingest writer holds in memory, in MiB (at most half of INKWELL_ANALYTICS_PROJECT_STATE_MB); the others are kept in an unlinked file beside the SQLite database (the system's temporary directory on PostgreSQL) and read from it to confirm a returning visitor.",
    ),
    daySetCacheMb: Int(
      'INKWELL_ANALYTICS_DAYSET_CACHE_MB',
      128,
      1,
      65_536,
      'Decoded day summaries (visitor sets, views, facets) kept in memory by the analytics reads, in MiB.',
    ),
    sealIntervalMs: Int(
      'INKWELL_ANALYTICS_SEAL_INTERVAL_MS',
      5000,
      0,
      MAX,
      "How often an API process persists the summaries of changed days and compacts finished days' raw-event segments (0: never; summaries built on demand then).",
    ),
    ingestWorker: Flag(
      'INKWELL_ANALYTICS_INGEST_WORKER',
      true,
      'Ingest writes a SQLite file from a worker thread (own connection), so commits never block requests.',
    ),
  }),
  /** ClickHouse for the analytics store (jobs, projects and keys stay in the SQL database). */
  clickhouse: Type.Object({
    url: Unset(Type.String(), {
      env: 'CLICKHOUSE_URL',
      parse: 'url',
      secret: true,
      description: 'http(s)://host:8123 of a ClickHouse server switches the analytics store to ClickHouse; unset: analytics in the SQL database.',
    }),
    database: Text('CLICKHOUSE_DATABASE', 'inkwell', {
      pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$',
      rule: 'must be letters, digits and _ (a ClickHouse database name)',
    }),
    user: OptionalText('CLICKHOUSE_USER', "ClickHouse user (default: the server's default user)."),
    password: Unset(Type.String(), { env: 'CLICKHOUSE_PASSWORD', parse: 'text', secret: true, description: 'Password of CLICKHOUSE_USER.' }),
    cluster: OptionalText(
      'CLICKHOUSE_CLUSTER',
      'The cluster (remote_servers) when the analytics tables are the clustered DDL of docs/scaling.md: reclassification then rewrites the shard-local tables ON CLUSTER.',
    ),
  }),
});

export type Config = Static<typeof ConfigSchema>;

type Leaf = TSchema & Setting & { default?: unknown; minimum?: number; maximum?: number; pattern?: string; enum?: string[]; anyOf?: Leaf[] };

/** The bounds of a number leaf, also when it is the number of an optional (Unset) leaf. */
function boundsOf(s: Leaf): { min: number; max: number } {
  const inner = s.anyOf?.find((x) => x.minimum !== undefined || x.maximum !== undefined);
  return { min: s.minimum ?? inner?.minimum ?? 0, max: s.maximum ?? inner?.maximum ?? MAX };
}

/** The pattern of a text leaf, also when it is the string of an optional (Unset) leaf. */
function patternOf(s: Leaf): RegExp | null {
  const p = s.pattern ?? s.anyOf?.find((x) => x.pattern !== undefined)?.pattern;
  return p === undefined ? null : new RegExp(p);
}

/** Reads one leaf's variable. Empty counts as unset; unset gives the default (undefined for optional leaves). */
function readLeaf(s: Leaf, env: Env): unknown {
  const name = s.env;
  const raw = env[name];
  const v = raw === undefined || raw === '' ? undefined : raw;
  if (v === undefined) return s.parse === 'path' ? path.resolve(s.default as string) : structuredClone(s.default);
  const got = s.secret ? '' : ` (got ${JSON.stringify(v)})`;
  switch (s.parse) {
    case 'int': {
      if (!/^\d+$/.test(v)) throw new ConfigError(name, `must be a whole number${got}`);
      return inBounds(name, s, Number(v));
    }
    case 'decimal':
      if (!/^\d+(\.\d+)?$/.test(v)) throw new ConfigError(name, `must be a number like 2.5${got}`);
      return inBounds(name, s, Number(v));
    case 'prices':
      try {
        return parseModelPrices(v);
      } catch (err) {
        throw new ConfigError(name, (err as Error).message);
      }
    case 'bool':
      if (['1', 'true', 'yes', 'on'].includes(v.toLowerCase())) return true;
      if (['0', 'false', 'no', 'off'].includes(v.toLowerCase())) return false;
      throw new ConfigError(name, `must be 1/0, true/false, yes/no or on/off${got}`);
    case 'choice':
      if (!s.enum?.includes(v)) throw new ConfigError(name, `must be one of ${s.enum?.join(', ')}${got}`);
      return v;
    case 'text':
      if (patternOf(s)?.test(v) === false) throw new ConfigError(name, `${s.rule}${got}`);
      return v;
    case 'url':
      try {
        const u = new URL(v);
        if (!['http:', 'https:'].includes(u.protocol) || !u.hostname) throw new Error('scheme');
      } catch {
        throw new ConfigError(name, 'must be an absolute http:// or https:// URL');
      }
      return v.replace(/\/+$/, '');
    case 'postgresUrl':
      if (patternOf(s)?.test(v) === false || !URL.canParse(v)) throw new ConfigError(name, s.rule as string);
      return v;
    case 'path':
      return path.resolve(v);
    case 'rate':
      return parseRate(name, v);
    case 'durations':
      return parseDurations(name, v);
    case 'proxies': {
      if (/^(false|no|off)$/i.test(v)) return false;
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
  }
}

function inBounds(name: string, s: Leaf, n: number): number {
  const { min, max } = boundsOf(s);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max} (got ${n})`);
  return n;
}

function readObject(schema: TSchema, env: Env): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries((schema as TSchema & { properties: Record<string, TSchema> }).properties)) {
    out[key] = 'env' in child ? readLeaf(child as Leaf, env) : readObject(child, env);
  }
  return out;
}

export function loadConfig(env: Env = process.env): Config {
  const config = readObject(ConfigSchema, env) as Config;
  const { headersTimeoutMs, requestTimeoutMs } = config.http;
  if (requestTimeoutMs !== 0 && requestTimeoutMs < headersTimeoutMs) {
    // Node's http server refuses a request timeout shorter than the headers timeout.
    throw new ConfigError('INKWELL_REQUEST_TIMEOUT_MS', `must be 0 or at least INKWELL_HEADERS_TIMEOUT_MS (${headersTimeoutMs}); got ${requestTimeoutMs}`);
  }
  return config;
}

/** A config for tests and tools: defaults plus overrides, never reading process.env. */
export function testConfig(overrides: Partial<Config> = {}, env: Env = {}): Config {
  return { ...loadConfig({ LOG_LEVEL: 'silent', INKWELL_LOG_PRETTY: '0', ...env }), ...overrides };
}
