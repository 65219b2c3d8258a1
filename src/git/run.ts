// Runs the `git` program, hardened so that no repository content and no config file but the operator's
// can make it run a program (see HARDENING). The operator's environment is inherited (GIT_CONFIG_COUNT/
// KEY_n/VALUE_n settings such as `url.<base>.insteadOf` or a proxy, GIT_SSH_COMMAND, GIT_ASKPASS);
// Inkwell's hardening settings are appended after them, so they win.
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
  /**
   * The git config file read as the global one (INKWELL_GIT_CONFIG_GLOBAL); none when absent. System and
   * ~/.gitconfig files are never read.
   */
  globalConfig?: string | undefined;
  /** Extra environment entries (merged over process.env). */
  env?: Record<string, string>;
  /** Extra `-c key=value` style settings passed through GIT_CONFIG_* (appended after any inherited ones). */
  config?: Array<[string, string]>;
  signal?: AbortSignal;
  /** Exit codes that are not failures (e.g. 1 for `diff --quiet`). */
  okCodes?: number[];
  timeoutMs?: number;
  /**
   * Stop reading stdout after this many bytes: git is stopped and the result has the output so far with
   * `truncated` set (default: 64 MiB, beyond which the command fails).
   */
  maxOutputBytes?: number;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
  /** Set when stdout reached `maxOutputBytes` and git was stopped. */
  truncated?: boolean;
}

/**
 * Appends `entries` to the GIT_CONFIG_COUNT/KEY_n/VALUE_n list already present in `base`
 * (so settings the operator put in the environment keep working). Pure.
 */
export function appendGitConfigEnv(base: Record<string, string | undefined>, entries: ReadonlyArray<readonly [string, string]>): Record<string, string> {
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

/**
 * Settings for every git process, at command scope (they override every config file): nothing that a
 * config file can name is run. Config files themselves are limited to the mirror's, which Inkwell
 * rewrites before each turn (see `writeMirrorConfig`), so multi-valued and per-name keys that cannot be
 * overridden here (`filter.<driver>.*`, `url.<base>.insteadOf`, `include.path`, `remote.<name>.vcs`, …)
 * come only from Inkwell or from the operator's environment.
 */
export const HARDENING: ReadonlyArray<readonly [string, string]> = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.attributesFile', '/dev/null'],
  ['core.untrackedCache', 'false'],
  // Transports: the ones repositories are fetched over, never `ext::`, `fd::` or a remote helper.
  ['protocol.allow', 'never'],
  ['protocol.https.allow', 'always'],
  ['protocol.http.allow', 'always'],
  ['protocol.ssh.allow', 'always'],
  ['protocol.git.allow', 'always'],
  ['protocol.file.allow', 'always'],
  ['remote.origin.uploadpack', 'git-upload-pack'],
  ['remote.origin.receivepack', 'git-receive-pack'],
  // An empty value clears every credential helper configured before; Inkwell's own comes after it.
  ['credential.helper', ''],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
  ['push.gpgSign', 'false'],
  ['submodule.recurse', 'false'],
  ['fetch.recurseSubmodules', 'false'],
  ['push.recurseSubmodules', 'no'],
  // Several worktrees share one object store: never let an automatic gc or maintenance run under them.
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
];

/** Environment that outranks config files for the programs git may start (editor, pager, askpass, ssh). Pure. */
export function hardenedEnv(base: Record<string, string | undefined>, globalConfig: string | undefined): Record<string, string> {
  const env: Record<string, string> = {
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: globalConfig ?? '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    // Never wait for a password on a terminal nobody is watching.
    GIT_TERMINAL_PROMPT: '0',
    // An empty GIT_ASKPASS outranks core.askPass and SSH_ASKPASS, and runs nothing.
    GIT_ASKPASS: base.GIT_ASKPASS ?? '',
    GIT_EDITOR: 'true',
    GIT_SEQUENCE_EDITOR: 'true',
    GIT_PAGER: 'cat',
    GIT_NO_REPLACE_OBJECTS: '1',
    // GIT_SSH_COMMAND outranks core.sshCommand: the operator's ssh (GIT_SSH_COMMAND or GIT_SSH) or plain ssh.
    GIT_SSH_COMMAND: base.GIT_SSH_COMMAND ?? (base.GIT_SSH ? `'${base.GIT_SSH.replaceAll("'", "'\\''")}'` : 'ssh'),
  };
  return env;
}

export function git(args: string[], opts: GitOptions): Promise<GitResult> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...opts.env,
  };
  Object.assign(env, hardenedEnv(env, opts.globalConfig));
  // The operator's GIT_CONFIG_* entries first, then the hardening, then the caller's (credentials).
  Object.assign(env, appendGitConfigEnv(env, [...HARDENING, ...(opts.config ?? [])]));
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { cwd: opts.cwd, env, signal: opts.signal, maxBuffer: opts.maxOutputBytes ?? 64 * 1024 * 1024, timeout: opts.timeoutMs ?? 10 * 60_000, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (!err) return resolve({ stdout, stderr, code: 0 });
        const e = err as NodeJS.ErrnoException & { code?: unknown; killed?: boolean };
        if (opts.maxOutputBytes !== undefined && e.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER' && e.message.startsWith('stdout'))
          return resolve({ stdout, stderr, code: 0, truncated: true });
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
