// A project's visitor dictionary (`analytics_visitor_chunks`) as one process sees it: the hash index of every
// key up to a watermark, and how keys missing from it are found or added under the project's write lock. Shared
// by the SQL ingest writer (ingest-writer.ts, the ordinals of the SQL store) and the ClickHouse store's numbering
// (clickhouse/visitor-numbers.ts, the same dictionary giving ClickHouse its dense visitor numbers).
//
// THE INVARIANT: the caller holds the project's write lock (the version bump came first: SQLite's single writer,
// a row lock on PostgreSQL), so writers of one project take turns and each statement after the bump sees what the
// previous one committed. After catching up on visitors committed by other processes, a key absent from the index
// is absent from the table, and the index's watermark is the project's largest ordinal: new visitors take the
// ordinals after it (store.insertVisitors). Index candidates are confirmed by their stored key (the index is a
// hint: a hash collision costs a comparison, never a wrong ordinal): compared where the project's key store holds
// it (visitor-keys.ts: in memory, or in its key file), read from its chunk otherwise. Entries added in a transaction join the index
// and the key store only after it commits (`added`, `addedChunks`, indexAdded): a rolled-back ordinal must never
// be used or indexed.
import type { Kysely } from 'kysely';
import type { BulkWriter } from '../../../db/bulk.ts';
import type { DialectCaps } from '../../../db/dialect.ts';
import type { DB } from '../../../db/schema.ts';
import { analyticsStore as store } from '../../store/store.ts';
import { decodeVisitorKeyCodesInto, encodeVisitorKey } from '../../store/visitor-key.ts';
import { VisitorHashIndex } from './visitor-index.ts';
import { VisitorKeyStore } from './visitor-keys.ts';

export interface VisitorIndexState {
  index: VisitorHashIndex;
  /** The project's largest ordinal indexed: always the last of a chunk (chunks are read and added whole). */
  upTo: number;
  /** First ordinal of every chunk indexed, ascending (where a candidate's key is read: store.selectVisitorsByOrd). */
  starts: number[];
  /** The stored keys of the chunks indexed, in memory up to a bound, then in a key file: where candidates are confirmed. */
  keys: VisitorKeyStore;
}

/** A chunk of visitors a transaction added: its first ordinal and its row's bytes (store.insertVisitors). */
export interface AddedChunk {
  firstOrd: number;
  width: number;
  data: Uint8Array;
}

/** Default bound of a project's key store: half of the default per-project state bound (512 MiB). */
export const VISITOR_KEY_BYTES = 256 * 2 ** 20;

/** Chunks read per query when loading or catching up a visitor index (~110 visitors each). */
const LOAD_CHUNKS = 500;

/**
 * Approximate bytes of one entry of an exact-key cache (GenerationCache): a key string of 24–38 characters, its
 * number, and the Map's slot. For the bound on per-project state (config INKWELL_ANALYTICS_VISITOR_INDEX_MB).
 */
export const CACHED_KEY_BYTES = 128;

/** Bytes a project's visitor index holds: the hash tables, the chunk starts and the key store. */
export function visitorIndexBytes(vi: VisitorIndexState): number {
  return vi.index.bytes + vi.starts.length * 8 + vi.keys.bytes;
}

/**
 * An empty index whose key store holds up to `keyBytes` in memory and the other keys in an unlinked file in
 * `keyFileDir` (none: a candidate whose key it does not hold is read from its chunk). closeVisitorIndex when dropped.
 */
export function newVisitorIndexState(keyBytes = VISITOR_KEY_BYTES, keyFileDir?: string): VisitorIndexState {
  const keys = new VisitorKeyStore(keyBytes, keyFileDir);
  return { index: new VisitorHashIndex(undefined, undefined, keys), upTo: 0, starts: [], keys };
}

/** Releases what an index holds outside the JavaScript heap (its key file). */
export function closeVisitorIndex(vi: VisitorIndexState): void {
  vi.keys.close();
}

/**
 * After the commit of the transaction that added them: a project's new visitors join its key store and then its
 * index (which keeps no hash for the entries whose key the store holds: visitor-index.ts, held keys).
 */
export function indexAdded(vi: VisitorIndexState, added: readonly { key: string; ord: number }[], addedChunks: readonly AddedChunk[]): void {
  for (const c of addedChunks) {
    vi.starts.push(c.firstOrd);
    vi.keys.add(c.firstOrd, c.width, c.data);
  }
  for (const { key, ord } of added) {
    vi.index.add(key, ord);
    if (ord > vi.upTo) vi.upTo = ord;
  }
}

/** The first ordinal of the chunk holding `ord`: the largest start not above it. */
export function chunkStartOf(starts: readonly number[], ord: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= ord) lo = mid;
    else hi = mid - 1;
  }
  return starts[lo] ?? 0;
}

/**
 * Adds a project's visitors above `vi.upTo` to its index (all of them for a new index). `blob`: how the dialect reads
 * large binary values fastest, for a whole load (store.ts selectVisitorChunksAfter).
 */
export async function catchUpVisitors(q: Kysely<DB>, ord: number, vi: VisitorIndexState, blob?: Pick<DialectCaps, 'selectBinary'>): Promise<void> {
  if (vi.upTo === 0 && vi.index.size === 0) {
    // A whole dictionary: the held entries' shards sized at once (the key store holds ~18 bytes a key).
    const last = await store.selectLastVisitorChunkStart(q, ord);
    if (last > 0) vi.index.reserveHeld(Math.min(last, Math.floor(vi.keys.maxBytes / 18)));
  }
  const scratch = { codes: new Uint16Array(64) };
  for (;;) {
    const chunks = await store.selectVisitorChunksAfter(q, ord, vi.upTo, LOAD_CHUNKS, blob);
    for (const c of chunks) {
      vi.starts.push(c.firstOrd);
      // Indexed from the chunk's stored bytes (no key string made: a 20M-visitor load spent a quarter of its time
      // making and collecting them): a chunk held in memory from the key store's copy, the others from the row's.
      const held = vi.keys.add(c.firstOrd, c.width, c.data);
      for (let i = 0; i < c.count; i++) {
        const o = c.firstOrd + i;
        if (held && vi.index.addHeldOrd(o)) continue;
        const n = decodeVisitorKeyCodesInto(c.data.subarray(i * c.width, (i + 1) * c.width), scratch);
        vi.index.addCodes(scratch.codes, n, o);
      }
      vi.upTo = c.firstOrd + c.count - 1;
    }
    if (chunks.length < LOAD_CHUNKS) break;
  }
}

/**
 * The ordinals of `misses` in project `ord`, inside `trx` holding the project's write lock: catches up, confirms
 * index candidates by their stored keys (in the key store, or read through `bulk`, a bulk writer of trx's database),
 * and inserts the keys still missing (sorted) after the watermark, refusing (before inserting) when the largest
 * would exceed `maxOrd`. The new entries are pushed to `added` and the new chunks to `addedChunks`, for the caller
 * to index after the commit (indexAdded).
 */
export async function resolveVisitorKeys(
  trx: Kysely<DB>,
  bulk: BulkWriter,
  ord: number,
  vi: VisitorIndexState,
  misses: Iterable<string>,
  added: { key: string; ord: number }[],
  addedChunks: AddedChunk[],
  maxOrd = Number.MAX_SAFE_INTEGER,
): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  // Visitors other processes committed since we last looked (they exist: safe to index at once).
  await catchUpVisitors(trx, ord, vi);
  const candidates: number[] = [];
  const toConfirm = new Set<number>();
  const fresh: string[] = [];
  const withCandidates: string[] = [];
  for (const key of misses) {
    candidates.length = 0;
    vi.index.candidates(key, candidates);
    if (candidates.length === 0) {
      fresh.push(key);
      continue;
    }
    // Compared in memory where the key store holds the candidate; the others are read from their chunks below.
    const encoded = encodeVisitorKey(key);
    let unread = 0;
    let match = 0;
    for (const c of candidates) {
      const m = vi.keys.matches(c, encoded);
      if (m === true) {
        match = c;
        break;
      }
      if (m === undefined) unread++;
    }
    if (match > 0) found.set(key, match);
    else if (unread === 0) fresh.push(key);
    else {
      withCandidates.push(key);
      for (const c of candidates) if (vi.keys.matches(c, encoded) === undefined) toConfirm.add(c);
    }
  }
  if (toConfirm.size > 0) {
    const stored = new Map<string, number>();
    const refs = [...toConfirm].map((o) => ({ first: chunkStartOf(vi.starts, o), ord: o }));
    for (const r of await store.selectVisitorsByOrd(bulk, trx, ord, refs)) stored.set(r.visitor_key, r.ord);
    for (const key of withCandidates) {
      const o = stored.get(key);
      if (o === undefined) fresh.push(key);
      else found.set(key, o);
    }
  }
  if (fresh.length > 0) {
    fresh.sort();
    if (vi.upTo + fresh.length > maxOrd) throw new VisitorOrdinalLimitError(maxOrd);
    const { visitors: rows, chunks } = await store.insertVisitors(trx, ord, vi.upTo + 1, fresh);
    for (const r of rows) {
      found.set(r.visitor_key, r.ord);
      added.push({ key: r.visitor_key, ord: r.ord });
    }
    addedChunks.push(...chunks);
  }
  return found;
}

/** More visitors than the caller's ordinals can hold. */
export class VisitorOrdinalLimitError extends Error {
  constructor(readonly maxOrd: number) {
    super(`more visitors than ordinals up to ${maxOrd}`);
  }
}
