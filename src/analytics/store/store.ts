// SQL for analytics: one function per query. Callers pass a Kysely instance or a transaction.
import { type Kysely, sql } from 'kysely';
import type { BulkLookup, BulkRow, BulkTable, BulkWriter } from '../../db/bulk.ts';
import type { DialectCaps } from '../../db/dialect.ts';
import type { DB } from '../../db/schema.ts';
import { decodeVisitorKey, encodeVisitorKey } from './visitor-key.ts';

type Q = Kysely<DB>;

export interface DayRange {
  /** Inclusive; null = from the first event. */
  fromDay: number | null;
  /** Exclusive; null = no upper bound. */
  toDay: number | null;
}

/** Splits rows into chunks whose bound parameters stay under `maxParams`. */
export function chunkRows<T>(rows: readonly T[], columns: number, maxParams: number, cap = 1000): T[][] {
  const size = Math.max(1, Math.min(cap, Math.floor(maxParams / columns)));
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

const PATH_TABLE: BulkTable = {
  table: 'analytics_paths',
  columns: [
    { name: 'project_ord', type: 'integer' },
    { name: 'path_hash', type: 'text' },
    { name: 'path', type: 'text' },
  ],
  onConflict: 'ignore',
};

const USER_AGENT_TABLE: BulkTable = {
  table: 'analytics_user_agents',
  columns: [
    { name: 'project_ord', type: 'integer' },
    { name: 'ua_hash', type: 'text' },
    { name: 'user_agent', type: 'text' },
  ],
  onConflict: 'ignore',
};

/** A visitor's stored key by (project, first ordinal of its chunk, ordinal): the key's slice of the chunk row. */
const VISITOR_KEY_LOOKUP: BulkLookup = {
  keys: [
    { name: 'project_ord', type: 'integer' },
    { name: 'first', type: 'bigint' },
    { name: 'ord', type: 'bigint' },
  ],
  // A correlated lookup per key, not a join: both dialects run it as one primary-key probe per key (PostgreSQL
  // could plan a join with the unnested keys as a scan of the whole dictionary). Null where no chunk is there.
  join: '',
  select: `k.ord as ord,
    (select substr(c.keys, cast((k.ord - c.first_ord) * c.width + 1 as integer), c.width)
       from analytics_visitor_chunks c where c.project_ord = k.project_ord and c.first_ord = k.first) as visitor_key`,
};

/**
 * Key bytes one visitor chunk holds at most (`analytics_visitor_chunks`, migration 0019). With the row's other
 * columns this keeps a chunk row under PostgreSQL's TOAST threshold (2,032 bytes: the row stays inline, four to an
 * 8 KiB page) and two rows to a 4 KiB SQLite page, without overflow pages.
 */
export const VISITOR_CHUNK_BYTES = 1984;

/** A stored visitor chunk: consecutive ordinals from `firstOrd`, one key each. */
export interface VisitorChunk {
  firstOrd: number;
  /** How many keys the chunk holds (ordinals firstOrd … firstOrd + count − 1). */
  count: number;
  /** The keys of ordinals firstOrd, firstOrd + 1, … (as the writer compares them: text). */
  keys: string[];
  /** The row's bytes: the keys encoded (visitor-key.ts), `width` bytes each. */
  width: number;
  data: Uint8Array;
}

/**
 * A stored chunk whose keys are decoded on first use: the ingest writer indexes the keys its key store holds from
 * their bytes (visitor-dictionary.ts catchUpVisitors), so loading a large dictionary makes no string for them.
 */
class StoredVisitorChunk implements VisitorChunk {
  readonly count: number;
  private decoded: string[] | undefined;
  constructor(
    readonly firstOrd: number,
    readonly width: number,
    readonly data: Uint8Array,
  ) {
    if (width <= 0 || data.length % width !== 0) throw new Error(`visitor chunk: ${data.length} bytes are not keys of ${width}`);
    this.count = data.length / width;
  }
  /** The row's keys, `width` bytes each (visitor-key.ts encoding), decoded once. */
  get keys(): string[] {
    if (this.decoded === undefined) {
      const { data, width } = this;
      const b = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      this.decoded = [];
      for (let o = 0; o < b.length; o += width) this.decoded.push(decodeVisitorKey(b.subarray(o, o + width)));
    }
    return this.decoded;
  }
}

/**
 * Groups encoded keys into chunk rows: keys of one width each (the key of an ordinal is then found by its offset),
 * at most VISITOR_CHUNK_BYTES a row (at least one key), ordinals consecutive from `nextOrd` in the given order
 * within a width, widths in order of first appearance. Pure.
 */
export function visitorChunkRows(
  projectOrd: number,
  nextOrd: number,
  keys: readonly string[],
): { rows: { first_ord: number; project_ord: number; width: number; keys: Buffer }[]; assigned: { ord: number; visitor_key: string }[] } {
  const byWidth = new Map<number, { key: string; bytes: Buffer }[]>();
  for (const key of keys) {
    const bytes = encodeVisitorKey(key);
    let g = byWidth.get(bytes.length);
    if (!g) {
      g = [];
      byWidth.set(bytes.length, g);
    }
    g.push({ key, bytes });
  }
  const rows: { first_ord: number; project_ord: number; width: number; keys: Buffer }[] = [];
  const assigned: { ord: number; visitor_key: string }[] = [];
  let ord = nextOrd;
  for (const [width, group] of byWidth) {
    const per = Math.max(1, Math.floor(VISITOR_CHUNK_BYTES / width));
    for (let i = 0; i < group.length; i += per) {
      const part = group.slice(i, i + per);
      rows.push({ first_ord: ord, project_ord: projectOrd, width, keys: Buffer.concat(part.map((k) => k.bytes)) });
      for (const k of part) assigned.push({ ord: ord++, visitor_key: k.key });
    }
  }
  return { rows, assigned };
}

export const analyticsStore = {
  // ---- projects: ordinal and data version ----------------------------------------------------------

  async insertProjectOrd(db: Q, projectId: string): Promise<void> {
    await db
      .insertInto('analytics_projects')
      .values({ project_id: projectId, version: 0 })
      .onConflict((oc) => oc.column('project_id').doNothing())
      .execute();
  },

  async selectProjectOrd(db: Q, projectId: string): Promise<number | undefined> {
    const r = await db.selectFrom('analytics_projects').select('ord').where('project_id', '=', projectId).executeTakeFirst();
    return r?.ord;
  },

  /** The project's ordinal, created on first use (the insert ignores a row another process made meanwhile). */
  async ensureProjectOrd(db: Q, projectId: string): Promise<number> {
    let ord = await analyticsStore.selectProjectOrd(db, projectId);
    if (ord === undefined) {
      await analyticsStore.insertProjectOrd(db, projectId);
      ord = await analyticsStore.selectProjectOrd(db, projectId);
    }
    if (ord === undefined) throw new Error('analytics project ordinal missing after insert');
    return Number(ord);
  },

  async bumpVersion(db: Q, projectOrd: number): Promise<void> {
    await db.updateTable('analytics_projects').set({ version: sql`version + 1` }).where('ord', '=', projectOrd).execute();
  },

  async selectVersion(db: Q, projectOrd: number): Promise<number> {
    const r = await db.selectFrom('analytics_projects').select('version').where('ord', '=', projectOrd).executeTakeFirst();
    return r ? Number(r.version) : 0;
  },

  // ---- dictionaries --------------------------------------------------------------------------------

  async insertPaths(db: Q, rows: { project_ord: number; path_hash: string; path: string }[]): Promise<void> {
    if (rows.length === 0) return;
    await db
      .insertInto('analytics_paths')
      .values(rows)
      .onConflict((oc) => oc.columns(['project_ord', 'path_hash']).doNothing())
      .execute();
  },

  async selectPathIds(db: Q, projectOrd: number, hashes: string[]): Promise<{ id: number; path_hash: string }[]> {
    if (hashes.length === 0) return [];
    return db.selectFrom('analytics_paths').select(['id', 'path_hash']).where('project_ord', '=', projectOrd).where('path_hash', 'in', hashes).execute();
  },

  // ---- visitors (migration 0019: chunks of consecutive ordinals; see tables.ts) ----------------------------

  /**
   * Appends a project's new visitors with ordinals from `nextOrd` (one above the project's largest: the caller
   * holds the project's write lock and has caught up, see ingest-writer.ts) and returns the ordinals given.
   */
  async insertVisitors(
    db: Q,
    projectOrd: number,
    nextOrd: number,
    keys: readonly string[],
  ): Promise<{ visitors: { ord: number; visitor_key: string }[]; chunkStarts: number[]; chunks: { firstOrd: number; width: number; data: Uint8Array }[] }> {
    if (keys.length === 0) return { visitors: [], chunkStarts: [], chunks: [] };
    const { rows, assigned } = visitorChunkRows(projectOrd, nextOrd, keys);
    for (let i = 0; i < rows.length; i += 200)
      await db
        .insertInto('analytics_visitor_chunks')
        .values(rows.slice(i, i + 200))
        .execute();
    return {
      visitors: assigned,
      chunkStarts: rows.map((r) => r.first_ord),
      chunks: rows.map((r) => ({ firstOrd: r.first_ord, width: r.width, data: r.keys })),
    };
  },

  /**
   * A project's visitor chunks that start above `afterOrd`, in ordinal order, at most `limit` of them (loading and
   * catching up an in-memory index, whose watermark is always the last ordinal of a chunk).
   */
  async selectVisitorChunksAfter(
    db: Q,
    projectOrd: number,
    afterOrd: number,
    limit: number,
    blob?: Pick<DialectCaps, 'selectBinary'>,
  ): Promise<VisitorChunk[]> {
    const q = db
      .selectFrom('analytics_visitor_chunks')
      .select(['first_ord', 'width', 'keys'])
      .where('project_ord', '=', projectOrd)
      .where('first_ord', '>', afterOrd)
      // A two-sided range keeps PostgreSQL on the primary key without statistics (store history: an unanalysed
      // insert-only table made it estimate `> $1` at a third of the rows and scan the whole dictionary).
      .where('first_ord', '<=', Number.MAX_SAFE_INTEGER)
      .orderBy('first_ord')
      .limit(limit);
    // A whole dictionary's load reads its keys as the dialect reads large binary values fastest (PostgreSQL: a binary
    // COPY rather than bytea's hex text); a catch-up of a few chunks the plain select.
    if (blob)
      return (await blob.selectBinary(db, q.compile(), { first_ord: 'int', width: 'int', keys: 'bytes' })).map(
        (r) => new StoredVisitorChunk(r.first_ord, r.width, r.keys),
      );
    return (await q.execute()).map((r) => new StoredVisitorChunk(Number(r.first_ord), Number(r.width), r.keys));
  },

  /** The first ordinal of a project's last visitor chunk (0: none): about how many visitors it has, from the primary key. */
  async selectLastVisitorChunkStart(db: Q, projectOrd: number): Promise<number> {
    const row = await db
      .selectFrom('analytics_visitor_chunks')
      .select('first_ord')
      .where('project_ord', '=', projectOrd)
      .where('first_ord', '<=', Number.MAX_SAFE_INTEGER)
      .orderBy('first_ord', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? Number(row.first_ord) : 0;
  },

  /** A project's visitors above `afterOrd` in ordinal order, whole chunks up to `limitChunks` of them (tests, tools). */
  async selectVisitorsAfter(db: Q, projectOrd: number, afterOrd: number, limitChunks = 1_000_000): Promise<{ ord: number; visitor_key: string }[]> {
    const out: { ord: number; visitor_key: string }[] = [];
    for (const c of await analyticsStore.selectVisitorChunksAfter(db, projectOrd, afterOrd, limitChunks)) {
      c.keys.forEach((k, i) => {
        out.push({ ord: c.firstOrd + i, visitor_key: k });
      });
    }
    return out;
  },

  /**
   * The keys of visitors by ordinal, each with the first ordinal of its chunk (`first`, which the caller knows from
   * the chunks it read): one key-sized slice of a chunk row per visitor, found by the chunk's primary key, through
   * `bulk.lookup` (on SQLite one cached statement per ordinal, on PostgreSQL one statement for all). Ordinals
   * their chunk does not hold are left out.
   */
  async selectVisitorsByOrd(
    bulk: BulkWriter,
    db: Q,
    projectOrd: number,
    refs: readonly { first: number; ord: number }[],
  ): Promise<{ ord: number; visitor_key: string }[]> {
    const values: number[] = [];
    for (const r of refs) values.push(projectOrd, r.first, r.ord);
    const out: { ord: number; visitor_key: string }[] = [];
    for (const r of await bulk.lookup(db, VISITOR_KEY_LOOKUP, values)) {
      const key = r.visitor_key as Uint8Array | null;
      if (key === null || key.length === 0) continue;
      out.push({ ord: Number(r.ord), visitor_key: decodeVisitorKey(key) });
    }
    return out;
  },

  // ---- bulk writes (ingest hot path; inside a transaction, see src/db/bulk.ts) --------------------------

  /** Inserts dictionary paths [project_ord, path_hash, path]; existing ones are skipped. */
  async bulkInsertPaths(bulk: BulkWriter, trx: Q, rows: readonly BulkRow[]): Promise<number> {
    return bulk.insert(trx, PATH_TABLE, rows);
  },

  /** Inserts dictionary user agents [project_ord, ua_hash, user_agent]; existing ones are skipped. */
  async bulkInsertUserAgents(bulk: BulkWriter, trx: Q, rows: readonly BulkRow[]): Promise<number> {
    return bulk.insert(trx, USER_AGENT_TABLE, rows);
  },

  async selectUserAgentIds(db: Q, projectOrd: number, hashes: string[]): Promise<{ id: number; ua_hash: string }[]> {
    if (hashes.length === 0) return [];
    return db.selectFrom('analytics_user_agents').select(['id', 'ua_hash']).where('project_ord', '=', projectOrd).where('ua_hash', 'in', hashes).execute();
  },
};

export type AnalyticsStore = typeof analyticsStore;
