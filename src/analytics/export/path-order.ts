// Path texts of one project and their sort order, for ordering export rows without comparing strings per
// query. Pure: no I/O.
//
// Rows are ordered by total descending, then path ascending (UTF-16 code-unit order, as JavaScript's `<`).
// Each known path gets its rank in path order (recomputed only after new paths were added); a row's sort
// key is then one number, (maxTotal − total) × RANK_SPACE + rank, and a window's rows sort as a
// Float64Array (native numeric sort).
import { compareRows, type PathRow } from './rows.ts';

const RANK_SPACE = 2 ** 26;

/** Counts per path id (same index): window counts of visitors, or summed views. */
export interface PathCounts {
  pathIds: ArrayLike<number>;
  human: ArrayLike<number>;
  ai: ArrayLike<number>;
  total: ArrayLike<number>;
  /** Ignored (window counts carry their site-wide totals). */
  totals?: unknown;
}

export class PathDictionary {
  private readonly names = new Map<number, string>();
  private rankOf = new Map<number, number>();
  private byRank: string[] = [];
  private ranked = true;
  /** Approximate characters held (for cache bounds). */
  chars = 0;

  has(id: number): boolean {
    return this.names.has(id);
  }

  get size(): number {
    return this.names.size;
  }

  add(id: number, path: string): void {
    if (this.names.has(id)) return;
    this.names.set(id, path);
    this.chars += path.length + 16;
    this.ranked = false;
  }

  name(id: number): string | undefined {
    return this.names.get(id);
  }

  private rank(): void {
    const ids = [...this.names.keys()];
    const names = this.names;
    ids.sort((a, b) => {
      const x = names.get(a) as string;
      const y = names.get(b) as string;
      return x < y ? -1 : x > y ? 1 : a - b;
    });
    this.rankOf = new Map();
    this.byRank = new Array(ids.length);
    for (let r = 0; r < ids.length; r++) {
      this.rankOf.set(ids[r] as number, r);
      this.byRank[r] = names.get(ids[r] as number) as string;
    }
    this.ranked = true;
  }

  /** The named rows of window counts, sorted (every path id must be known). */
  orderedRows(c: PathCounts): PathRow[] {
    const n = c.pathIds.length;
    let maxTotal = 0;
    for (let i = 0; i < n; i++) if ((c.total[i] as number) > maxTotal) maxTotal = c.total[i] as number;
    if (this.names.size >= RANK_SPACE || maxTotal >= RANK_SPACE) return this.compareSorted(c);
    if (!this.ranked) this.rank();
    const keys = new Float64Array(n);
    const slot = new Int32Array(this.byRank.length);
    for (let i = 0; i < n; i++) {
      const r = this.rankOf.get(c.pathIds[i] as number);
      if (r === undefined) throw new Error(`path ${c.pathIds[i]} has no text`);
      keys[i] = (maxTotal - (c.total[i] as number)) * RANK_SPACE + r;
      slot[r] = i;
    }
    keys.sort();
    const rows: PathRow[] = new Array(n);
    for (let j = 0; j < n; j++) {
      const r = (keys[j] as number) % RANK_SPACE;
      const i = slot[r] as number;
      rows[j] = { path: this.byRank[r] as string, human: c.human[i] as number, ai: c.ai[i] as number, total: c.total[i] as number };
    }
    return rows;
  }

  private compareSorted(c: PathCounts): PathRow[] {
    const rows: PathRow[] = new Array(c.pathIds.length);
    for (let i = 0; i < c.pathIds.length; i++) {
      const path = this.names.get(c.pathIds[i] as number);
      if (path === undefined) throw new Error(`path ${c.pathIds[i]} has no text`);
      rows[i] = { path, human: c.human[i] as number, ai: c.ai[i] as number, total: c.total[i] as number };
    }
    return rows.sort(compareRows);
  }
}
