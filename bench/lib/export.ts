// The exact export every system must produce, and its digest (no I/O).
import crypto from 'node:crypto';

export interface Totals {
  human: number;
  ai: number;
  total: number;
}

export interface PageRow {
  path: string;
  human: number;
  ai: number;
  total: number;
}

export interface ExportResult {
  totals: Totals;
  rows: PageRow[];
}

/** SPEC §4.4 order: total descending, then path ascending (by code point, i.e. byte order of UTF-8). */
export function compareRows(a: PageRow, b: PageRow): number {
  if (a.total !== b.total) return b.total - a.total;
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

/**
 * sha256 over the canonical text of the answer: a totals line, then one line per page in the order given.
 * Two systems agree exactly when their digests are equal (same numbers, same paths, same order).
 */
export function digestExport(r: ExportResult): string {
  const h = crypto.createHash('sha256');
  h.update(`totals\t${r.totals.human}\t${r.totals.ai}\t${r.totals.total}\n`);
  let buf = '';
  for (const row of r.rows) {
    buf += `${row.path}\t${row.human}\t${row.ai}\t${row.total}\n`;
    if (buf.length > 65536) {
      h.update(buf);
      buf = '';
    }
  }
  h.update(buf);
  return h.digest('hex');
}

/** Digest after re-sorting locally: equal to digestExport of a correct answer whatever order the rows came in. */
export function sortedDigest(r: ExportResult): string {
  return digestExport({ totals: r.totals, rows: [...r.rows].sort(compareRows) });
}

/** Human-readable differences between two answers (first few), for reports. */
export function diffExports(a: ExportResult, b: ExportResult, max = 5): string[] {
  const out: string[] = [];
  const t = (x: Totals) => `${x.human}/${x.ai}/${x.total}`;
  if (t(a.totals) !== t(b.totals)) out.push(`totals ${t(a.totals)} vs ${t(b.totals)}`);
  if (a.rows.length !== b.rows.length) out.push(`rows ${a.rows.length} vs ${b.rows.length}`);
  const bm = new Map(b.rows.map((r) => [r.path, r]));
  for (const r of a.rows) {
    if (out.length >= max) break;
    const o = bm.get(r.path);
    if (!o) out.push(`${r.path} missing in second`);
    else if (o.human !== r.human || o.ai !== r.ai || o.total !== r.total) out.push(`${r.path} ${t(r)} vs ${t(o)}`);
  }
  if (out.length === 0) {
    for (let i = 0; i < Math.min(a.rows.length, b.rows.length); i++) {
      if (a.rows[i]?.path !== b.rows[i]?.path) {
        out.push(`order differs at row ${i}: ${a.rows[i]?.path} vs ${b.rows[i]?.path}`);
        break;
      }
    }
  }
  return out;
}

export const PAGE_SIZE = 250;

export function pageCount(rows: number, limit = PAGE_SIZE): number {
  return Math.max(1, Math.ceil(rows / limit));
}
