// Fixed-window rate limits per (project, endpoint family) — per client address for sign-in, which has no
// project yet —, with a cost per request so that ingest can count events rather than requests. Counters live in this process: with several API processes each
// enforces the limit on its own share of traffic (see README).
import type { FastifyReply } from 'fastify';
import type { RateLimitRule } from '../config.ts';
import { AppError } from '../errors.ts';

export type RateFamily = 'jobs' | 'analyticsRead' | 'ingest' | 'signIn';

interface Window {
  start: number;
  used: number;
}

export interface RateLimiter {
  /** Takes `cost` units or throws 429 `rate_limited`; sets the RateLimit-* headers either way. */
  /** `scope`: the project id, or for `signIn` the client address. */
  consume(reply: FastifyReply, family: RateFamily, scope: string, cost?: number): void;
}

export function createRateLimiter(rules: Record<RateFamily, RateLimitRule>, now: () => number = Date.now): RateLimiter {
  const windows = new Map<string, Window>();
  let lastSweep = now();

  function sweep(t: number) {
    if (t - lastSweep < 60_000) return;
    lastSweep = t;
    for (const [k, w] of windows) {
      const family = k.slice(0, k.indexOf(':')) as RateFamily;
      if (t - w.start >= rules[family].windowMs) windows.delete(k);
    }
  }

  return {
    consume(reply, family, scope, cost = 1) {
      const rule = rules[family];
      const t = now();
      sweep(t);
      const key = `${family}:${scope}`;
      let w = windows.get(key);
      if (!w || t - w.start >= rule.windowMs) {
        w = { start: t, used: 0 };
        windows.set(key, w);
      }
      const resetSec = Math.max(1, Math.ceil((w.start + rule.windowMs - t) / 1000));
      const allowed = w.used + cost <= rule.max;
      if (allowed) w.used += cost;
      const headers = {
        'ratelimit-limit': String(rule.max),
        'ratelimit-remaining': String(Math.max(0, rule.max - w.used)),
        'ratelimit-reset': String(resetSec),
      };
      if (!allowed) {
        throw new AppError(
          'rate_limited',
          `Rate limit exceeded: ${rule.max} per ${rule.windowMs / 1000}s for this ${family === 'signIn' ? 'client address' : 'project'}; retry after ${resetSec}s`,
          undefined,
          {
            ...headers,
            'retry-after': String(resetSec),
          },
        );
      }
      reply.headers(headers);
    },
  };
}
