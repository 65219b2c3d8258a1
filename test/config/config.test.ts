// Config: every variable of ConfigSchema parsed, bad values stop the process with a message naming the variable.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { type Config, ConfigError, ConfigSchema, loadConfig, parseRate, testConfig } from '../../src/config.ts';
import { tempDir } from '../helpers/db.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('has the documented defaults with an empty environment', () => {
    const c = loadConfig({});
    expect(c.host).toBe('127.0.0.1');
    expect(c.port).toBe(3000);
    expect(c.dataDir).toBe(path.resolve('./data'));
    expect(c.databaseUrl).toBeUndefined();
    expect(c.logLevel).toBe('info');
    expect(c.bodyLimitBytes).toBe(1024 * 1024);
    expect(c.shutdownTimeoutMs).toBe(10_000);
    expect(c.http).toEqual({
      headersTimeoutMs: 15_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5000,
      maxHeaderBytes: 16 * 1024,
      sseHeartbeatMs: 15_000,
      sseMaxLifetimeMs: 3_600_000,
    });
    expect(c.rateLimits).toEqual({
      jobs: { max: 100, windowMs: 3_600_000 },
      analyticsRead: { max: 600, windowMs: 3_600_000 },
      ingest: { max: 200_000, windowMs: 60_000 },
      signIn: { max: 30, windowMs: 60_000 },
    });
    expect(c.dashboard).toEqual({ sessionTtlHours: 168, signinLinkTtlMinutes: 15, publicUrl: undefined });
    expect(c.model.defaultModel).toBe('anthropic/claude-sonnet-4-5');
    expect(c.model.maxRetries).toBe(3);
    expect(c.agent).toEqual({
      maxSteps: 40,
      runTimeoutMs: 20 * 60_000,
      checkRepairRounds: 2,
      gitAuthorName: 'Inkwell Agent',
      gitAuthorEmail: 'agent@inkwell.invalid',
    });
    expect(c.worker).toEqual({ concurrency: 2, leaseMs: 30_000, pollIntervalMs: 500, maxAttempts: 3, worktreePool: 2 });
    expect(c.hosts).toEqual({
      githubToken: undefined,
      githubApiUrl: 'https://api.github.com',
      gitlabToken: undefined,
      gitlabUrl: 'https://gitlab.com',
      maxWaitMs: 900_000,
      githubCreateIntervalMs: 1000,
    });
    expect(c.webhooks.allowPrivate).toBe(false);
    expect(c.trustProxy).toBe(false);
    // Empty strings count as unset.
    expect(loadConfig({ PORT: '', HOST: '', LOG_LEVEL: '' }).port).toBe(3000);
  });

  // [variable, value, read the parsed value, expected]
  const cases: [string, string, (c: Config) => unknown, unknown][] = [
    ['HOST', '0.0.0.0', (c) => c.host, '0.0.0.0'],
    ['PORT', '8080', (c) => c.port, 8080],
    ['PORT', '0', (c) => c.port, 0],
    ['INKWELL_DATA_DIR', '/var/lib/inkwell', (c) => c.dataDir, '/var/lib/inkwell'],
    ['INKWELL_DATA_DIR', 'rel/dir', (c) => c.dataDir, path.resolve('rel/dir')],
    ['DATABASE_URL', 'postgres://u:p@db:5432/inkwell', (c) => c.databaseUrl, 'postgres://u:p@db:5432/inkwell'],
    ['DATABASE_URL', 'postgresql://db/inkwell', (c) => c.databaseUrl, 'postgresql://db/inkwell'],
    ['LOG_LEVEL', 'debug', (c) => c.logLevel, 'debug'],
    ['LOG_LEVEL', 'silent', (c) => c.logLevel, 'silent'],
    ['INKWELL_LOG_PRETTY', 'yes', (c) => c.logPretty, true],
    ['INKWELL_LOG_PRETTY', '0', (c) => c.logPretty, false],
    ['INKWELL_SHUTDOWN_TIMEOUT_MS', '2500', (c) => c.shutdownTimeoutMs, 2500],
    ['INKWELL_BODY_LIMIT_BYTES', '65536', (c) => c.bodyLimitBytes, 65_536],
    ['INKWELL_HEADERS_TIMEOUT_MS', '5000', (c) => c.http.headersTimeoutMs, 5000],
    ['INKWELL_REQUEST_TIMEOUT_MS', '60000', (c) => c.http.requestTimeoutMs, 60_000],
    ['INKWELL_REQUEST_TIMEOUT_MS', '0', (c) => c.http.requestTimeoutMs, 0],
    ['INKWELL_KEEP_ALIVE_TIMEOUT_MS', '65000', (c) => c.http.keepAliveTimeoutMs, 65_000],
    ['INKWELL_MAX_HEADER_BYTES', '32768', (c) => c.http.maxHeaderBytes, 32_768],
    ['INKWELL_SSE_HEARTBEAT_MS', '5000', (c) => c.http.sseHeartbeatMs, 5000],
    ['INKWELL_SSE_MAX_LIFETIME_MS', '0', (c) => c.http.sseMaxLifetimeMs, 0],
    ['INKWELL_RATE_LIMIT_JOBS', '5/10s', (c) => c.rateLimits.jobs, { max: 5, windowMs: 10_000 }],
    ['INKWELL_RATE_LIMIT_ANALYTICS_READ', '1000/h', (c) => c.rateLimits.analyticsRead, { max: 1000, windowMs: 3_600_000 }],
    ['INKWELL_RATE_LIMIT_INGEST', '50/250ms', (c) => c.rateLimits.ingest, { max: 50, windowMs: 250 }],
    ['INKWELL_MODEL', 'openai-compatible/llama3', (c) => c.model.defaultModel, 'openai-compatible/llama3'],
    ['ANTHROPIC_API_KEY', 'sk-ant-x', (c) => c.model.anthropicApiKey, 'sk-ant-x'],
    ['ANTHROPIC_BASE_URL', 'http://127.0.0.1:9999/v1/', (c) => c.model.anthropicBaseUrl, 'http://127.0.0.1:9999/v1'],
    ['OPENAI_API_KEY', 'sk-x', (c) => c.model.openaiApiKey, 'sk-x'],
    ['OPENAI_BASE_URL', 'https://proxy.example.com/v1', (c) => c.model.openaiBaseUrl, 'https://proxy.example.com/v1'],
    ['OPENAI_COMPATIBLE_BASE_URL', 'http://localhost:11434/v1', (c) => c.model.openaiCompatibleBaseUrl, 'http://localhost:11434/v1'],
    ['OPENAI_COMPATIBLE_API_KEY', 'ollama', (c) => c.model.openaiCompatibleApiKey, 'ollama'],
    ['INKWELL_MODEL_MAX_RETRIES', '0', (c) => c.model.maxRetries, 0],
    ['INKWELL_MAX_STEPS', '7', (c) => c.agent.maxSteps, 7],
    ['INKWELL_RUN_TIMEOUT_MS', '60000', (c) => c.agent.runTimeoutMs, 60_000],
    ['INKWELL_CHECK_REPAIR_ROUNDS', '0', (c) => c.agent.checkRepairRounds, 0],
    ['INKWELL_GIT_AUTHOR_NAME', 'Bot', (c) => c.agent.gitAuthorName, 'Bot'],
    ['INKWELL_GIT_AUTHOR_EMAIL', 'bot@example.com', (c) => c.agent.gitAuthorEmail, 'bot@example.com'],
    ['INKWELL_WORKER_CONCURRENCY', '4', (c) => c.worker.concurrency, 4],
    ['INKWELL_LEASE_MS', '5000', (c) => c.worker.leaseMs, 5000],
    ['INKWELL_POLL_INTERVAL_MS', '50', (c) => c.worker.pollIntervalMs, 50],
    ['INKWELL_MAX_ATTEMPTS', '5', (c) => c.worker.maxAttempts, 5],
    ['GITHUB_TOKEN', 'ghp_x', (c) => c.hosts.githubToken, 'ghp_x'],
    ['GITHUB_API_URL', 'https://ghe.example.com/api/v3', (c) => c.hosts.githubApiUrl, 'https://ghe.example.com/api/v3'],
    ['GITLAB_TOKEN', 'glpat-x', (c) => c.hosts.gitlabToken, 'glpat-x'],
    ['GITLAB_URL', 'https://gitlab.example.com', (c) => c.hosts.gitlabUrl, 'https://gitlab.example.com'],
    ['INKWELL_ALLOW_PRIVATE_WEBHOOKS', '1', (c) => c.webhooks.allowPrivate, true],
    ['INKWELL_TRUST_PROXY', 'true', (c) => c.trustProxy, true],
    ['INKWELL_TRUST_PROXY', 'off', (c) => c.trustProxy, false],
    ['INKWELL_TRUST_PROXY', '2', (c) => c.trustProxy, 2],
    ['INKWELL_TRUST_PROXY', '10.0.0.0/8, 127.0.0.1,::1,loopback', (c) => c.trustProxy, ['10.0.0.0/8', '127.0.0.1', '::1', 'loopback']],
  ];
  for (const [name, value, read, expected] of cases) {
    it(`parses ${name}=${value}`, () => {
      expect(read(loadConfig({ [name]: value }))).toEqual(expected);
    });
  }

  const bad: [string, string, RegExp][] = [
    ['PORT', 'abc', /PORT must be a whole number \(got "abc"\)/],
    ['PORT', '65536', /PORT must be between 0 and 65535/],
    ['PORT', '-1', /PORT must be a whole number/],
    ['PORT', '80.5', /PORT must be a whole number/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/],
    ['DATABASE_URL', 'mysql://root@localhost/inkwell', /DATABASE_URL must be a postgres:\/\/ URL/],
    ['DATABASE_URL', 'postgres://[bad', /DATABASE_URL/],
    ['INKWELL_RATE_LIMIT_JOBS', 'lots', /INKWELL_RATE_LIMIT_JOBS must look like 100\/1h/],
    ['INKWELL_RATE_LIMIT_JOBS', '0/1h', /INKWELL_RATE_LIMIT_JOBS count and window must be positive/],
    ['INKWELL_RATE_LIMIT_ANALYTICS_READ', '10/1w', /INKWELL_RATE_LIMIT_ANALYTICS_READ/],
    ['INKWELL_RATE_LIMIT_INGEST', '100', /INKWELL_RATE_LIMIT_INGEST/],
    ['INKWELL_LOG_PRETTY', 'maybe', /INKWELL_LOG_PRETTY must be 1\/0/],
    ['INKWELL_MODEL', 'claude', /INKWELL_MODEL must look like <provider>\/<model>/],
    ['ANTHROPIC_BASE_URL', 'not a url', /ANTHROPIC_BASE_URL must be an absolute http/],
    ['OPENAI_BASE_URL', 'ftp://x', /OPENAI_BASE_URL/],
    ['GITHUB_API_URL', 'postgres://x', /GITHUB_API_URL/],
    ['INKWELL_MAX_STEPS', '0', /INKWELL_MAX_STEPS must be between 1 and 1000/],
    ['INKWELL_WORKER_CONCURRENCY', 'many', /INKWELL_WORKER_CONCURRENCY/],
    ['INKWELL_SHUTDOWN_TIMEOUT_MS', 'soon', /INKWELL_SHUTDOWN_TIMEOUT_MS/],
    ['HOST', 'my host', /HOST must be a host name/],
    ['INKWELL_REQUEST_TIMEOUT_MS', '5000', /INKWELL_REQUEST_TIMEOUT_MS must be 0 or at least INKWELL_HEADERS_TIMEOUT_MS \(15000\)/],
    ['INKWELL_HEADERS_TIMEOUT_MS', '0', /INKWELL_HEADERS_TIMEOUT_MS must be between 100 and/],
    ['INKWELL_KEEP_ALIVE_TIMEOUT_MS', '0', /INKWELL_KEEP_ALIVE_TIMEOUT_MS must be between 1 and/],
    ['INKWELL_BODY_LIMIT_BYTES', '1MB', /INKWELL_BODY_LIMIT_BYTES must be a whole number/],
    ['INKWELL_TRUST_PROXY', 'nginx', /INKWELL_TRUST_PROXY must be true, false, a hop count/],
  ];
  for (const [name, value, message] of bad) {
    it(`rejects ${name}=${value} with a ConfigError naming the variable`, () => {
      const err = configError({ [name]: value });
      expect(err.variable).toBe(name);
      expect(err.message).toMatch(message);
      expect(err.message).toMatch(/^Invalid configuration: /);
    });
  }

  it('never echoes a DATABASE_URL (it may carry a password)', () => {
    expect(configError({ DATABASE_URL: 'mysql://root:hunter2@db/x' }).message).not.toContain('hunter2');
  });

  it('every variable of ConfigSchema either accepts garbage or rejects it naming that variable', () => {
    const names = variables();
    expect(names.length).toBeGreaterThanOrEqual(50);
    for (const name of names) {
      for (const value of ['lots', '-1', '99999999999999999999999', '1/0s', 'http://', ' ']) {
        try {
          loadConfig({ [name]: value });
        } catch (err) {
          expect(err, `${name}=${value}`).toBeInstanceOf(ConfigError);
          expect((err as ConfigError).variable).toBe(name);
          expect((err as Error).message).toContain(name);
        }
      }
    }
  });
});

/** The environment variables ConfigSchema names, in schema order. */
function variables(): string[] {
  const out: string[] = [];
  JSON.stringify(ConfigSchema, (key, value) => {
    if (key === 'env' && typeof value === 'string') out.push(value);
    return value;
  });
  return out;
}

describe('ConfigSchema', () => {
  it('is where Config comes from: the defaults and every parsed value satisfy it', () => {
    expect(Value.Check(ConfigSchema, loadConfig({}))).toBe(true);
    const c = loadConfig({
      DATABASE_URL: 'postgres://db/x',
      ANTHROPIC_API_KEY: 'k',
      INKWELL_TRUST_PROXY: '10.0.0.0/8',
      INKWELL_WEBHOOK_RETRY_SCHEDULE: '1s,2m',
    });
    expect(Value.Check(ConfigSchema, c)).toBe(true);
    expect(c.webhooks.retryScheduleMs).toEqual([1000, 120_000]);
    // A value the schema refuses is refused, whoever built it.
    expect(Value.Check(ConfigSchema, { ...c, port: 70_000 })).toBe(false);
    expect(Value.Check(ConfigSchema, { ...c, logLevel: 'loud' })).toBe(false);
  });

  it('names each variable once, and every one is documented in docs/configuration.md', () => {
    const names = variables();
    expect(new Set(names).size).toBe(names.length);
    const doc = fs.readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
    expect(names.filter((n) => !doc.includes(n))).toEqual([]);
  });

  it('reads bounds and choices from the schema into the messages', () => {
    expect(configError({ INKWELL_WORKTREE_POOL: '65' }).message).toBe('Invalid configuration: INKWELL_WORKTREE_POOL must be between 0 and 64 (got 65)');
    expect(configError({ LOG_LEVEL: 'loud' }).message).toBe(
      'Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
    );
    expect(configError({ INKWELL_WEBHOOK_RETRY_SCHEDULE: '5s,soon' }).message).toMatch(
      /INKWELL_WEBHOOK_RETRY_SCHEDULE must be a comma-separated list of durations/,
    );
  });

  it('gives undefined, not a missing key, for a setting without a default', () => {
    const c = loadConfig({});
    expect('databaseUrl' in c).toBe(true);
    expect(c.databaseUrl).toBeUndefined();
    expect('gitConfigGlobal' in c.worker).toBe(true);
    expect(loadConfig({ INKWELL_GIT_CONFIG_GLOBAL: '/etc/inkwell.gitconfig' }).worker.gitConfigGlobal).toBe('/etc/inkwell.gitconfig');
  });
});

describe('parseRate', () => {
  it('reads count/window with units and an implied 1', () => {
    expect(parseRate('X', '100/1h')).toEqual({ max: 100, windowMs: 3_600_000 });
    expect(parseRate('X', '3/d')).toEqual({ max: 3, windowMs: 86_400_000 });
    expect(parseRate('X', ' 7/30s ')).toEqual({ max: 7, windowMs: 30_000 });
    expect(() => parseRate('X', '1/0s')).toThrow(ConfigError);
    expect(() => parseRate('X', '-1/1h')).toThrow(/X must look like/);
  });
});

describe('testConfig', () => {
  it('never reads process.env and applies overrides', () => {
    const prev = process.env.PORT;
    process.env.PORT = 'abc';
    try {
      const c = testConfig({ port: 1234 });
      expect(c.port).toBe(1234);
      expect(c.logLevel).toBe('silent');
    } finally {
      if (prev === undefined) delete process.env.PORT;
      else process.env.PORT = prev;
    }
  });
});

describe('a bad environment stops the process', () => {
  function run(env: Record<string, string>) {
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['bin/inkwell.js', 'serve'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', INKWELL_DATA_DIR: tempDir(), PORT: '1', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  }

  it('`inkwell serve` exits non-zero printing the variable and the rule, without a stack trace', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ PORT: 'abc' }, /inkwell: Invalid configuration: PORT must be a whole number \(got "abc"\)/],
      [{ LOG_LEVEL: 'loud' }, /inkwell: Invalid configuration: LOG_LEVEL must be one of/],
      [{ DATABASE_URL: 'mysql://root@localhost/inkwell' }, /inkwell: Invalid configuration: DATABASE_URL must be a postgres:\/\/ URL/],
      [{ INKWELL_RATE_LIMIT_JOBS: 'lots' }, /inkwell: Invalid configuration: INKWELL_RATE_LIMIT_JOBS must look like 100\/1h/],
    ];
    const results = await Promise.all(cases.map(([env]) => run(env)));
    results.forEach((r, i) => {
      const [env, message] = cases[i] as [Record<string, string>, RegExp];
      expect(r.code, JSON.stringify(env)).toBe(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stdout).not.toMatch(/inkwell started/);
    });
  });
});
