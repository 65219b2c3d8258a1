// Recent infrastructure faults seen while answering requests (database unreachable, storage full), per app
// context: readiness reports not ready while one is recent, so a load balancer stops sending traffic that
// would fail anyway.
import type { AppContext } from './context.ts';

export type FaultCode = 'database_unavailable' | 'storage_full';

/** How long after the last failed request readiness keeps saying not ready. */
export const FAULT_MEMORY_MS = 30_000;

const seen = new WeakMap<AppContext, Map<FaultCode, number>>();

export function noteFault(ctx: AppContext, code: FaultCode): void {
  let m = seen.get(ctx);
  if (!m) {
    m = new Map();
    seen.set(ctx, m);
  }
  m.set(code, ctx.now());
}

/** The faults seen within FAULT_MEMORY_MS, newest first. */
export function recentFaults(ctx: AppContext): FaultCode[] {
  const m = seen.get(ctx);
  if (!m) return [];
  const now = ctx.now();
  return [...m.entries()]
    .filter(([, at]) => now - at < FAULT_MEMORY_MS)
    .sort((a, b) => b[1] - a[1])
    .map(([code]) => code);
}

/** A fault stops counting as soon as a request that needed the same part succeeds again. */
export function clearFault(ctx: AppContext, code: FaultCode): void {
  seen.get(ctx)?.delete(code);
}
