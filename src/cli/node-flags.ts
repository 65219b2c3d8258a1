// Heap sizes are fixed when Node.js starts, so a command that needs other V8 settings replaces its process (same
// pid, same arguments; process.execve) by one started with them, once, before it has done anything. The marker
// variable records that it did (and the flags); set to anything beforehand (e.g. 0), it keeps the defaults. Where
// process.execve is missing (Windows, Node.js before 23.11) the command runs with the defaults.

/**
 * Environment for a re-executed command with many threads (`inkwell serve`, an import): glibc's malloc keeps at
 * most two arenas instead of one per allocating thread (up to 8 per core: the serving or main thread, the ingest
 * writer, the merger, the import and count threads, the checkpointer, V8's and libuv's helpers), so memory one
 * thread frees is reused by the others. Allocation is the same, only where freed memory waits for reuse changes.
 */
export const TWO_MALLOC_ARENAS: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/**
 * Replaces this process by one started with `flags` before its own, unless `marker` is set; `env` is added to its
 * environment where the variable is not set already (the operator's value wins).
 */
export function reexecWithNodeFlags(flags: readonly string[], marker: string, env: Readonly<Record<string, string>> = {}): void {
  // (process.execve: Node.js 23.11+, not yet in the type definitions this project uses.)
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  if (process.env[marker] !== undefined || typeof execve !== 'function' || process.platform === 'win32') return;
  // Settings the operator gave (on the command line or in NODE_OPTIONS) win: those flags are not added.
  const given = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
  const added = flags.filter((f) => !given.includes(f.replace(/^--/, '').split('=')[0] as string));
  if (added.length === 0) return;
  execve.call(process, process.execPath, [process.execPath, ...added, ...process.execArgv, ...process.argv.slice(1)], {
    ...env,
    ...process.env,
    [marker]: added.join(' '),
  });
}
