// Job rows → the API's job object (SPEC 3.1; wire-compatible with the hosted AgentJob schema). Pure.
import { iso } from '../lib/time.ts';
import { type JobStatus, visiblePrLink } from './state.ts';
import type { JobViewRow } from './store.ts';

export interface JobView {
  id: string;
  status: JobStatus;
  source: { repository: string; ref: string };
  model: string;
  prLink: string | null;
  createdAt: string;
  archivedAt: string | null;
  branch: string | null;
  updatedAt: string;
  error: { code: string; message: string } | null;
  /** `costUsd` once a turn ran with a known price (src/agent/prices.ts). */
  usage: { inputTokens: number; outputTokens: number; costUsd?: number };
}

// Formatting dates is the costliest part of a view, and a job's times repeat across reads (clients poll
// GET job): formatted times are memoised (bounded; cleared when full).
const ISO_MEMO_MAX = 4096;
const isoMemo = new Map<number, string>();
function isoOf(ms: number): string {
  let text = isoMemo.get(ms);
  if (text === undefined) {
    text = iso(ms);
    if (isoMemo.size >= ISO_MEMO_MAX) isoMemo.clear();
    isoMemo.set(ms, text);
  }
  return text;
}

export function toJobView(r: JobViewRow): JobView {
  const status = r.status as JobStatus;
  return {
    id: r.id,
    status,
    source: { repository: r.repository, ref: r.ref },
    model: r.model,
    prLink: visiblePrLink(status, r.pr_url),
    createdAt: isoOf(Number(r.created_at)),
    archivedAt: r.archived_at === null ? null : isoOf(Number(r.archived_at)),
    branch: r.branch,
    updatedAt: isoOf(Number(r.updated_at)),
    error: r.error_code ? { code: r.error_code, message: r.error_message ?? '' } : null,
    usage: {
      inputTokens: Number(r.input_tokens),
      outputTokens: Number(r.output_tokens),
      ...(r.cost_usd === null || r.cost_usd === undefined ? {} : { costUsd: Number(r.cost_usd) }),
    },
  };
}

// ---- list cursors: opaque base64url of "<createdAt>.<id>" -------------------------------------------

export function encodeCursor(createdAt: number, id: string): string {
  return Buffer.from(`${createdAt}.${id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: number; id: string } | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^(\d{1,16})\.([A-Za-z0-9_]{1,64})$/.exec(text);
  if (!m) return null;
  return { createdAt: Number(m[1]), id: m[2] as string };
}
