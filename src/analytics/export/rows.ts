// Export rows: ordering and paging of a computed result. Pure: no I/O.

export interface Counts {
  human: number;
  ai: number;
  total: number;
}

export interface PathRow extends Counts {
  path: string;
}

export interface ExportResult {
  totals: Counts;
  /** Sorted: total descending, then path ascending (UTF-16 code unit order, as JavaScript compares). */
  rows: PathRow[];
}

export interface Page {
  totals: Counts;
  rows: PathRow[];
  hasMore: boolean;
}

export function compareRows(a: PathRow, b: PathRow): number {
  if (a.total !== b.total) return b.total - a.total;
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

export function sortRows(rows: PathRow[]): PathRow[] {
  return rows.sort(compareRows);
}

export function pageOf(result: ExportResult, offset: number, limit: number): Page {
  const rows = result.rows.slice(offset, offset + limit);
  return { totals: result.totals, rows, hasMore: offset + rows.length < result.rows.length };
}

export const EMPTY_RESULT: ExportResult = Object.freeze({ totals: Object.freeze({ human: 0, ai: 0, total: 0 }), rows: [] }) as ExportResult;
