// The visitors' stored keys in memory and in the key file (src/analytics/ingest/writer/visitor-keys.ts), and the
// dictionary's resolution (visitor-dictionary.ts resolveVisitorKeys) confirming index candidates against them: the
// same ordinals whether the key store holds every visitor, some or none, and no confirming read for those it holds.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type AddedChunk,
  catchUpVisitors,
  closeVisitorIndex,
  indexAdded,
  newVisitorIndexState,
  resolveVisitorKeys,
  type VisitorIndexState,
} from '../../src/analytics/ingest/writer/visitor-dictionary.ts';
import { VisitorHashIndex } from '../../src/analytics/ingest/writer/visitor-index.ts';
import { VisitorKeyStore } from '../../src/analytics/ingest/writer/visitor-keys.ts';
import { segmentStore } from '../../src/analytics/store/segment-store.ts';
import { analyticsStore as store } from '../../src/analytics/store/store.ts';
import { encodeVisitorKey } from '../../src/analytics/store/visitor-key.ts';
import { type BulkWriter, createBulkWriter } from '../../src/db/bulk.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';
import { openDeletedFiles } from '../helpers/fds.ts';

const hashKey = (i: number) => `h:${String(i).padStart(22, 'A')}`;
const uuidKey = (i: number) => `v:00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** Keys of `width` bytes each, concatenated: a chunk row's bytes. */
function chunk(keys: string[]): { width: number; data: Uint8Array } {
  const enc = keys.map(encodeVisitorKey);
  return { width: (enc[0] as Buffer).length, data: Buffer.concat(enc) };
}

describe('VisitorKeyStore', () => {
  it('tells, by ordinal, whether a stored key is the one given; undefined for ordinals it does not hold', () => {
    const ks = new VisitorKeyStore(64 * 2 ** 20);
    const a = chunk([hashKey(1), hashKey(2), hashKey(3)]);
    const b = chunk([uuidKey(4), uuidKey(5)]);
    const long = `v:${'x'.repeat(3000)}`;
    const c = chunk([long]);
    expect(ks.add(1, a.width, a.data)).toBe(true);
    expect(ks.add(4, b.width, b.data)).toBe(true);
    // A gap in the ordinals (a dictionary moved by a migration may have one), then a key longer than a chunk's bound.
    expect(ks.add(100, c.width, c.data)).toBe(true);
    expect(ks.chunks).toBe(3);
    for (const [ord, key] of [
      [1, hashKey(1)],
      [3, hashKey(3)],
      [5, uuidKey(5)],
      [100, long],
    ] as const)
      expect(ks.matches(ord, encodeVisitorKey(key))).toBe(true);
    expect(ks.matches(2, encodeVisitorKey(hashKey(3)))).toBe(false);
    // Another width is another key.
    expect(ks.matches(4, encodeVisitorKey(hashKey(4)))).toBe(false);
    for (const ord of [0, 6, 99, 101, 10 ** 9]) expect(ks.matches(ord, encodeVisitorKey(hashKey(1)))).toBeUndefined();
  });

  it('holds a prefix of the chunks within its bound, across blocks, and refuses chunks out of order', () => {
    // Three 1 MiB blocks' worth of bytes allowed: ~100 keys of 18 bytes a chunk, 600 chunks ≈ 1.08 MB of keys.
    const ks = new VisitorKeyStore(3 * 2 ** 20);
    let ord = 1;
    let held = 0;
    for (let n = 0; n < 600_000 / 100; n++) {
      const keys = Array.from({ length: 100 }, (_, i) => hashKey(ord + i));
      const { width, data } = chunk(keys);
      if (ks.add(ord, width, data)) held = ord + 99;
      ord += 100;
    }
    expect(ks.full).toBe(true);
    expect(ks.bytes).toBeLessThanOrEqual(3 * 2 ** 20);
    expect(held).toBeGreaterThan(100_000);
    for (const o of [1, 77, held]) expect(ks.matches(o, encodeVisitorKey(hashKey(o)))).toBe(true);
    expect(ks.matches(held + 1, encodeVisitorKey(hashKey(held + 1)))).toBeUndefined();
    const late = chunk([hashKey(1)]);
    expect(ks.add(ord, late.width, late.data)).toBe(false);

    const ordered = new VisitorKeyStore(2 ** 20 * 8);
    const x = chunk([hashKey(10), hashKey(11)]);
    expect(ordered.add(10, x.width, x.data)).toBe(true);
    expect(ordered.add(11, x.width, x.data)).toBe(false);
    expect(ordered.full).toBe(true);
    expect(ordered.matches(11, encodeVisitorKey(hashKey(11)))).toBe(true);
  });
});

describe('VisitorKeyStore: the key file', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inkwell-keys-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the chunks past its memory bound in an unlinked file, read back to confirm; closing it lets them go', () => {
    const ks = new VisitorKeyStore(1.1 * 2 ** 20, dir);
    // 200,000 keys of 18 bytes (3.6 MB): one block in memory, the rest in the file (flushed) and its tail.
    let ord = 1;
    let lastInMemory = 0;
    for (let n = 0; n < 2000; n++) {
      const { width, data } = chunk(Array.from({ length: 100 }, (_, i) => hashKey(ord + i)));
      if (ks.add(ord, width, data)) lastInMemory = ord + 99;
      ord += 100;
    }
    // A chunk longer than the tail (one text key of 1.5 MiB) is written past it.
    const long = `v:${'y'.repeat(1.5 * 2 ** 20)}`;
    const c = chunk([long]);
    expect(ks.add(ord, c.width, c.data)).toBe(false);
    const last = chunk([hashKey(ord + 1)]);
    expect(ks.add(ord + 1, last.width, last.data)).toBe(false);

    expect(ks.full).toBe(true);
    expect(lastInMemory).toBeGreaterThan(50_000);
    expect(ks.chunks).toBe(2002);
    expect(ks.fileBytes).toBeGreaterThan(3.5 * 2 ** 20);
    // Memory: the blocks and the tail, not the file.
    expect(ks.bytes).toBeLessThan(2 * 2 ** 20 + 2002 * 40 + 1);
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(openDeletedFiles(path.join(dir, '.inkwell-visitor-keys-'))).toBe(1);

    const inFile = [lastInMemory + 1, 100_000, 199_999, ord + 1];
    for (const o of [1, lastInMemory, ...inFile]) expect(ks.matches(o, encodeVisitorKey(hashKey(o)))).toBe(true);
    expect(ks.matches(ord, encodeVisitorKey(long))).toBe(true);
    expect(ks.matches(100_000, encodeVisitorKey(hashKey(100_001)))).toBe(false);
    expect(ks.matches(ord, encodeVisitorKey(`v:${'y'.repeat(1.5 * 2 ** 20 - 1)}z`))).toBe(false);
    expect(ks.matches(ord + 2, encodeVisitorKey(hashKey(ord + 2)))).toBeUndefined();
    // Held in memory (its index entry needs no hash) only below the bound.
    expect(ks.holds(lastInMemory)).toBe(true);
    expect(ks.holds(lastInMemory + 1)).toBe(false);
    expect(ks.keyCodesOf(lastInMemory + 1)).toBe(-1);
    expect(ks.keyCodesOf(1)).toBe(24);

    ks.close();
    expect(openDeletedFiles(path.join(dir, '.inkwell-visitor-keys-'))).toBe(0);
    for (const o of inFile) expect(ks.matches(o, encodeVisitorKey(hashKey(o)))).toBeUndefined();
    expect(ks.matches(1, encodeVisitorKey(hashKey(1)))).toBe(true);
    // Nothing later is held once the file is gone.
    const after = chunk([hashKey(ord + 5)]);
    expect(ks.add(ord + 5, after.width, after.data)).toBe(false);
    expect(ks.matches(ord + 5, encodeVisitorKey(hashKey(ord + 5)))).toBeUndefined();
  });

  it('once closed, it opens no file, even when chunks past its bound come later (a dropped project a transaction still adds to)', () => {
    const ks = new VisitorKeyStore(1.1 * 2 ** 20, dir);
    const first = chunk([hashKey(1), hashKey(2)]);
    expect(ks.add(1, first.width, first.data)).toBe(true);
    ks.close();
    let ord = 3;
    for (let n = 0; n < 700; n++) {
      const { width, data } = chunk(Array.from({ length: 100 }, (_, i) => hashKey(ord + i)));
      expect(ks.add(ord, width, data)).toBe(false);
      ord += 100;
    }
    expect(openDeletedFiles(path.join(dir, '.inkwell-visitor-keys-'))).toBe(0);
    expect(ks.fileBytes).toBe(0);
    expect(ks.matches(1, encodeVisitorKey(hashKey(1)))).toBe(true);
    expect(ks.matches(50_000, encodeVisitorKey(hashKey(50_000)))).toBeUndefined();
  });

  it('without a usable directory, the chunks past its bound are not held: their candidates are read from their rows', () => {
    const missing = path.join(dir, 'gone');
    const ks = new VisitorKeyStore(1.1 * 2 ** 20, missing);
    let ord = 1;
    for (let n = 0; n < 700; n++) {
      const { width, data } = chunk(Array.from({ length: 100 }, (_, i) => hashKey(ord + i)));
      ks.add(ord, width, data);
      ord += 100;
    }
    expect(ks.full).toBe(true);
    expect(ks.fileBytes).toBe(0);
    expect(ks.matches(1, encodeVisitorKey(hashKey(1)))).toBe(true);
    expect(ks.matches(69_999, encodeVisitorKey(hashKey(69_999)))).toBeUndefined();
    expect(fs.existsSync(missing)).toBe(false);
  });
});

describe('visitor dictionary state: index entries of held keys', () => {
  it('keeps no hash for the keys its store holds (4-byte slots), the others hashed, and offers every ordinal for its key', () => {
    // A key store bound that holds a prefix (the first ~110,000 of 200,000), and one that holds none.
    const held = newVisitorIndexState(3 * 2 ** 20);
    const hashed = newVisitorIndexState(0);
    // Chunks of 100 keys of one width: UUID keys (17 bytes), every fifth chunk hash keys (18).
    const keyOf = (o: number) => (Math.floor((o - 1) / 100) % 5 === 4 ? hashKey(o) : uuidKey(o));
    for (let first = 1; first <= 200_000; first += 100) {
      const keys = Array.from({ length: 100 }, (_, i) => keyOf(first + i));
      const added = keys.map((key, i) => ({ key, ord: first + i }));
      for (const vi of [held, hashed]) indexAdded(vi, added, [{ firstOrd: first, ...chunk(keys) }]);
    }
    expect(held.keys.full).toBe(true);
    expect(held.keys.holds(100_000)).toBe(true);
    expect(held.keys.holds(150_000)).toBe(false);
    expect(held.index.size).toBe(200_000);
    // ~110,000 entries in 4 bytes a slot instead of 8.
    expect(held.index.bytes).toBeLessThan(0.8 * hashed.index.bytes);
    const out: number[] = [];
    let wrong = 0;
    for (let o = 1; o <= 200_000; o += 7) {
      out.length = 0;
      held.index.candidates(keyOf(o), out);
      if (!out.includes(o)) wrong++;
      // Another held candidate is told apart by its key in memory.
      for (const c of out) if (c !== o && held.keys.matches(c, encodeVisitorKey(keyOf(o))) !== false && held.keys.holds(c)) wrong++;
    }
    expect(wrong).toBe(0);
  });
});

describeEachDialect('visitor dictionary: candidates confirmed in memory', (dialect) => {
  let t: TestDb;
  let ord: number;
  let reads: number;
  let bulk: BulkWriter;

  beforeEach(async () => {
    t = await openTestDb(dialect);
    await t.db.kysely
      .insertInto('projects')
      .values({ id: 'prj_a', name: 'a', repository: 'r', ref: 'main', model: null, settings: '{}', visitor_secret: 's', created_at: 1 })
      .execute();
    await store.insertProjectOrd(t.db.kysely, 'prj_a');
    ord = (await store.selectProjectOrd(t.db.kysely, 'prj_a')) as number;
    const inner = createBulkWriter(t.db);
    reads = 0;
    // Counts the confirming reads (store.selectVisitorsByOrd: three values per candidate).
    bulk = {
      ...inner,
      lookup: (q, spec, values) => {
        reads += values.length / 3;
        return inner.lookup(q, spec, values);
      },
    };
  });
  afterEach(async () => {
    await t.cleanup();
  });

  async function resolve(vi: VisitorIndexState, keys: string[]): Promise<Map<string, number>> {
    const added: { key: string; ord: number }[] = [];
    const chunks: AddedChunk[] = [];
    const found = await t.db.kysely.transaction().execute(async (trx) => {
      await segmentStore.bumpVersionReturning(trx, ord);
      return resolveVisitorKeys(trx, bulk, ord, vi, keys, added, chunks);
    });
    indexAdded(vi, added, chunks);
    return found;
  }

  it('gives every key one ordinal whether the key store holds all visitors or none; reads only those it lacks', async () => {
    const keys = Array.from({ length: 900 }, (_, i) => (i % 2 === 0 ? hashKey(i) : i % 3 === 0 ? uuidKey(i) : `v:text-${i}`));
    const writer = newVisitorIndexState();
    const first = await resolve(writer, keys.slice(0, 600));
    expect([...first.values()].sort((a, b) => a - b)).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
    expect(writer.keys.chunks).toBe(writer.starts.length);

    // Other processes' views, loaded from the chunks: one holding every key, one none (a prefix is the pure test's);
    // then asked for known and new keys together.
    const all = newVisitorIndexState();
    const none = newVisitorIndexState(0);
    for (const vi of [all, none]) await catchUpVisitors(t.db.kysely, ord, vi);
    expect(all.keys.chunks).toBe(all.starts.length);
    expect(none.keys.chunks).toBe(0);
    // A whole load read as the dialect reads large binary values (PostgreSQL: a binary COPY) holds the same chunks.
    const binary = newVisitorIndexState();
    await catchUpVisitors(t.db.kysely, ord, binary, t.db.caps);
    expect(binary.starts).toEqual(all.starts);
    expect(binary.upTo).toBe(all.upTo);
    const plain = await store.selectVisitorChunksAfter(t.db.kysely, ord, 0, 1000);
    const copied = await store.selectVisitorChunksAfter(t.db.kysely, ord, 0, 1000, t.db.caps);
    expect(copied.length).toBeGreaterThan(1);
    expect(copied.map((c) => [c.firstOrd, c.width, Buffer.from(c.data).toString('hex'), c.keys])).toEqual(
      plain.map((c) => [c.firstOrd, c.width, Buffer.from(c.data).toString('hex'), c.keys]),
    );
    // The last chunk's start, from the primary key (what a whole load sizes the index by); none for another project.
    expect(await store.selectLastVisitorChunkStart(t.db.kysely, ord)).toBe(all.starts[all.starts.length - 1]);
    expect(await store.selectLastVisitorChunkStart(t.db.kysely, ord + 1000)).toBe(0);

    const asked = keys.slice(300, 900);
    reads = 0;
    const fromAll = await resolve(all, asked);
    expect(reads).toBe(0);
    for (const k of keys.slice(300, 600)) expect(fromAll.get(k)).toBe(first.get(k));
    const fresh = keys.slice(600, 900).map((k) => fromAll.get(k) as number);
    expect(fresh.sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, i) => 601 + i));

    // `none` catches up on the 300 new ones, and confirms each candidate by a read: the same ordinals.
    reads = 0;
    const fromNone = await resolve(none, asked);
    expect(reads).toBeGreaterThanOrEqual(600);
    for (const k of asked) expect(fromNone.get(k)).toBe(fromAll.get(k));

    // The writer's own store took in its chunks after the commit, and the others' after catching up: no reads.
    reads = 0;
    const again = await resolve(writer, keys);
    expect(reads).toBe(0);
    for (const k of keys) expect(again.get(k)).toBe(fromAll.get(k) ?? first.get(k));
    expect(new Set(again.values()).size).toBe(900);
    expect((await store.selectVisitorsAfter(t.db.kysely, ord, 0)).length).toBe(900);
  });

  it('confirms from the key file the candidates past the memory bound, with no reads; once closed, by reads', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inkwell-keys-'));
    try {
      const keys = Array.from({ length: 900 }, (_, i) => (i % 2 === 0 ? hashKey(i) : i % 3 === 0 ? uuidKey(i) : `v:text-${i}`));
      // No key in memory: every chunk in the file, every index entry with its hash.
      const writer = newVisitorIndexState(0, dir);
      const first = await resolve(writer, keys.slice(0, 600));
      const other = newVisitorIndexState(0, dir);
      await catchUpVisitors(t.db.kysely, ord, other, t.db.caps);
      expect(other.keys.chunks).toBe(other.starts.length);
      expect(other.keys.holds(1)).toBe(false);
      expect(other.keys.fileBytes).toBeGreaterThan(600 * 8);

      reads = 0;
      const fromOther = await resolve(other, keys);
      expect(reads).toBe(0);
      for (const k of keys.slice(0, 600)) expect(fromOther.get(k)).toBe(first.get(k));
      reads = 0;
      const again = await resolve(writer, keys);
      expect(reads).toBe(0);
      for (const k of keys) expect(again.get(k)).toBe(fromOther.get(k));
      expect(new Set(again.values()).size).toBe(900);

      closeVisitorIndex(other);
      reads = 0;
      const afterClose = await resolve(other, keys);
      expect(reads).toBeGreaterThanOrEqual(900);
      for (const k of keys) expect(afterClose.get(k)).toBe(again.get(k));
      closeVisitorIndex(writer);
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a hash collision with a held key is no match: the key gets its own ordinal', async () => {
    // An index that offers every held ordinal as a candidate for any key (all hashes collide).
    const vi = newVisitorIndexState();
    const colliding = new VisitorHashIndex(16, [1, 2]);
    const entries: number[] = [];
    vi.index = Object.assign(colliding, {
      add: (_key: string, o: number) => {
        entries.push(o);
      },
      candidates: (_key: string, out: number[]) => {
        out.push(...entries);
      },
    });
    const a = await resolve(vi, [hashKey(1), hashKey(2)]);
    const b = await resolve(vi, [hashKey(2), hashKey(3), hashKey(1)]);
    expect(reads).toBe(0);
    expect(b.get(hashKey(1))).toBe(a.get(hashKey(1)));
    expect(b.get(hashKey(2))).toBe(a.get(hashKey(2)));
    expect(b.get(hashKey(3))).toBe(3);
  });
});
