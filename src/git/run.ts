// Runs the `git` program. The process environment is inherited unchanged (so `url.<base>.insteadOf`,
// GIT_CONFIG_COUNT/KEY_n/VALUE_n, credential helpers and proxies all work); we only append settings.
import { execFile } from 'node:child_process';
import { scrubSecrets } from '../lib/logger.ts';

export class GitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'GitError';
  }
}

export interface GitOptions {
  cwd: string;
  /** Extra environment entries (merged over process.env). */
  env?: Record<string, string>;
  /** Extra `-c key=value` style settings passed through GIT_CONFIG_* (appended after any inherited ones). */
  config?: Array<[string, string]>;
  signal?: AbortSignal;
  /** Exit codes that are not failures (e.g. 1 for `diff --quiet`). */
  okCodes?: number[];
  timeoutMs?: number;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

/**
 * Appends `entries` to the GIT_CONFIG_COUNT/KEY_n/VALUE_n list already present in `base`
 * (so settings the operator put in the environment keep working). Pure.
 */
export function appendGitConfigEnv(base: Record<string, string | undefined>, entries: Array<[string, string]>): Record<string, string> {
  const out: Record<string, string> = {};
  if (entries.length === 0) return out;
  const raw = base.GIT_CONFIG_COUNT;
  const start = raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : 0;
  entries.forEach(([k, v], i) => {
    out[`GIT_CONFIG_KEY_${start + i}`] = k;
    out[`GIT_CONFIG_VALUE_${start + i}`] = v;
  });
  out.GIT_CONFIG_COUNT = String(start + entries.length);
  return out;
}

export function git(args: string[], opts: GitOptions): Promise<GitResult> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    // Never wait for a password on a terminal nobody is watching.
    GIT_TERMINAL_PROMPT: '0',
    ...opts.env,
  };
  Object.assign(env, appendGitConfigEnv(env, opts.config ?? []));
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { cwd: opts.cwd, env, signal: opts.signal, maxBuffer: 64 * 1024 * 1024, timeout: opts.timeoutMs ?? 10 * 60_000, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (!err) return resolve({ stdout, stderr, code: 0 });
        const e = err as NodeJS.ErrnoException & { code?: unknown; killed?: boolean };
        if (e.name === 'AbortError' || opts.signal?.aborted) {
          const abort = new Error('git was stopped');
          abort.name = 'AbortError';
          return reject(abort);
        }
        const code = typeof e.code === 'number' ? e.code : null;
        if (code !== null && opts.okCodes?.includes(code)) return resolve({ stdout, stderr, code });
        const detail = scrubSecrets(String(stderr || e.message).trim())
          .split('\n')
          .slice(-5)
          .join('\n');
        reject(new GitError(`git ${args[0]} failed${code !== null ? ` (exit ${code})` : ''}: ${detail}`, code, scrubSecrets(stderr)));
      },
    );
  });
}
