// Results of reusable reads kept while the database has not changed: the key of a read's arguments, and
// the PostgreSQL form, where a kept result carries the snapshot it was read under.
//
// Invariant that keeps the PostgreSQL kept results exact: a kept row is returned only when a snapshot taken
// by a statement sent after the call was made is textually equal to the snapshot the row was read under, so
// no transaction committed in between anywhere in the cluster. A revoked key is a committed UPDATE, which
// changes the snapshot, so the next lookup reads afresh and refuses the key.
//
// PostgreSQL (used by the batcher in src/db/reusable.ts): every combined statement also returns
// `pg_current_snapshot()`, the snapshot its own scans used (xmin:xmax:in-progress xids). Two snapshots with
// the same text see exactly the same committed data: a transaction that commits in between either ends one
// of the listed in-progress ones or moves xmax. So when every call of a batch has a kept result, the batcher
// first asks for the current snapshot (`select pg_current_snapshot()`, a statement sent after the calls
// were made); if it is the one the results were read under, nothing has been committed since, anywhere in
// the cluster, and the kept rows are what the read would return now. Otherwise they are dropped and the read
// runs. Only a quiet database is helped (any write in the cluster moves the snapshot); on a busy one the
// checks back off (`KeptSnapshots.shouldCheck`) so the extra round trip is rarely paid.

/** Kept results per statement before that statement's results are dropped and kept afresh. */
export const KEPT_RESULTS_PER_STATEMENT = 4096;

/** Most batches sent without a check after checks kept failing (the snapshot moved each time). */
export const MAX_CHECK_BACKOFF = 63;

/** The cache key of a read's arguments; undefined (not kept) for a value that is not a string, a finite number or null. */
export function keyOf(parameters: readonly unknown[]): string | undefined {
  let key = '';
  for (const p of parameters) {
    if (typeof p === 'string') key += `s${p.length}:${p}`;
    else if (typeof p === 'number' && Number.isFinite(p)) key += `n${p};`;
    else if (p === null) key += 'z;';
    else return undefined;
  }
  return key;
}

/** Kept results of one statement, all read under one snapshot (see the top of this file). */
export class KeptSnapshots<R> {
  private kept = new Map<string, readonly R[]>();
  private snapshot: string | undefined;
  private backoff = 0;
  private skip = 0;

  /** The kept rows of every key, and the snapshot they were read under; undefined when any key has none. */
  all(keys: readonly (string | undefined)[]): { rows: (readonly R[])[]; snapshot: string } | undefined {
    const snapshot = this.snapshot;
    if (snapshot === undefined) return undefined;
    const rows = new Array<readonly R[]>(keys.length);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const hit = key === undefined ? undefined : this.kept.get(key);
      if (!hit) return undefined;
      rows[i] = hit;
    }
    return { rows, snapshot };
  }

  /** Whether to spend a round trip on a check now: after failed checks, up to MAX_CHECK_BACKOFF batches go without. */
  shouldCheck(): boolean {
    if (this.skip === 0) return true;
    this.skip--;
    return false;
  }

  /** The check's answer for results read under `readUnder`: true when they are still exact. */
  checked(readUnder: string, current: string): boolean {
    if (current === readUnder) {
      this.backoff = 0;
      return true;
    }
    this.backoff = Math.min(this.backoff * 2 + 1, MAX_CHECK_BACKOFF);
    this.skip = this.backoff;
    if (this.snapshot === readUnder) this.drop();
    return false;
  }

  /** Keeps `rows` (frozen) for `key`, read under `snapshot`; results read under another snapshot are dropped. */
  keep(key: string | undefined, rows: R[], snapshot: string): void {
    if (key === undefined) return;
    if (snapshot !== this.snapshot || this.kept.size >= KEPT_RESULTS_PER_STATEMENT) {
      this.kept.clear();
      this.snapshot = snapshot;
    }
    for (const r of rows) Object.freeze(r);
    this.kept.set(key, Object.freeze(rows));
  }

  drop(): void {
    this.kept.clear();
    this.snapshot = undefined;
  }

  get size(): number {
    return this.kept.size;
  }
}
