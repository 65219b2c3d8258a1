// Which failures are the database's (or the disk's) state rather than a bug: the HTTP layer answers them
// 503 `database_unavailable` / 507 `storage_full` with Retry-After, and readiness reports them. Pure.

export type InfraFault = 'database_unavailable' | 'storage_full';

/** Node socket errors: the server is not there (yet), or the connection went away. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** PostgreSQL SQLSTATEs: connection exceptions (08…), shutdown and startup (57P01–57P03), too many connections. */
const PG_UNAVAILABLE = /^(08\d\d\d|57P0[1-3]|53300)$/;
/** Messages of pg and pg-pool for a connection that ended or could not be made in time. */
const PG_UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down)/i;
/** Disk full: SQLite's SQLITE_FULL (and its I/O errors caused by it), PostgreSQL's 53100, the OS's ENOSPC / EDQUOT. */
const FULL_CODES = new Set(['SQLITE_FULL', 'ENOSPC', 'EDQUOT', '53100']);

function codeOf(err: unknown): string | undefined {
  const c = (err as { code?: unknown })?.code;
  return typeof c === 'string' ? c : undefined;
}

/** The fault an error (or any error in its `cause` chain) stands for, or null for anything else. */
export function infraFault(err: unknown): InfraFault | null {
  for (let e = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = codeOf(e);
    const message = String((e as { message?: unknown })?.message ?? '');
    if ((code && FULL_CODES.has(code)) || /database or disk is full|No space left on device|could not extend file/i.test(message)) return 'storage_full';
    if (code && (UNREACHABLE_CODES.has(code) || PG_UNAVAILABLE.test(code))) return 'database_unavailable';
    if (PG_UNAVAILABLE_MESSAGES.test(message)) return 'database_unavailable';
  }
  return null;
}
