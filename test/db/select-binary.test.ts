// DialectCaps.selectBinary: integers and large binary values read in bulk (the day summaries' blobs). On PostgreSQL
// a binary COPY whose stream src/db/pg-copy.ts parses; on SQLite the select itself. Both must give back every byte.
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BinaryCopyParser, binaryCopyQuery, CopyFormatError } from '../../src/db/pg-copy.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

/** Every byte value, in order and then shuffled by a multiplier coprime to 256, `reps` times. */
/** Byte for byte (vitest's deep equality walks a megabyte element by element). */
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
const everyByte = (reps: number) => Uint8Array.from({ length: 256 * reps }, (_, k) => (k < 256 ? k : (k * 167 + (k >> 8)) & 255));

describeEachDialect('selectBinary', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await openTestDb(dialect);
    await sql`create table bin_rows (k integer not null, big ${sql.raw(t.db.caps.bigintType)} not null, data ${sql.raw(t.db.caps.blobType)} not null)`.execute(
      t.db.kysely,
    );
  });
  afterAll(() => t?.cleanup());

  const read = (from: number, to: number) =>
    t.db.caps.selectBinary(
      t.db.kysely,
      t.db.kysely
        .selectFrom('bin_rows' as any)
        .select(['k', 'big', 'data'])
        .where('k', '>=', from)
        .where('k', '<', to)
        .orderBy('k')
        .compile(),
      { k: 'int', data: 'bytes', big: 'int' },
    );

  it('gives back every byte value, empty and large blobs, and 64-bit integers', async () => {
    const blobs = [new Uint8Array(0), everyByte(1), Uint8Array.of(0), Uint8Array.of(255), everyByte(4096), new Uint8Array(0), everyByte(3)];
    const bigs = [0, 1, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 - 1, -(2 ** 53) + 1];
    await t.db.kysely
      .insertInto('bin_rows' as any)
      .values(blobs.map((data, k) => ({ k, big: bigs[k], data })))
      .execute();
    const rows = await read(0, 100);
    expect(rows.map((r) => Object.keys(r))).toEqual(rows.map(() => ['k', 'data', 'big']));
    expect(rows.map((r) => r.k)).toEqual(blobs.map((_, k) => k));
    expect(rows.map((r) => r.big)).toEqual(bigs);
    for (const r of rows) {
      expect(r.data).toBeInstanceOf(Uint8Array);
      expect(same(r.data, blobs[r.k] as Uint8Array)).toBe(true);
    }
    // Each blob its own bytes (pg's read buffer is reused: a view into it would change under later reads).
    const again = await read(0, 100);
    for (const r of rows) expect(same(r.data, again[r.k]?.data ?? new Uint8Array(1))).toBe(true);
    expect(await read(1000, 2000)).toEqual([]);
  });

  it('reads in the snapshot of the transaction it is given', async () => {
    await t.db.kysely
      .insertInto('bin_rows' as any)
      .values({ k: 500, big: 5, data: Uint8Array.of(5, 0, 5) })
      .execute();
    await t.db.kysely
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const q = trx
          .selectFrom('bin_rows' as any)
          .select(['k', 'data'])
          .where('k', '>=', 500)
          .where('k', '<', 600)
          .orderBy('k')
          .compile();
        expect((await t.db.caps.selectBinary(trx, q, { k: 'int', data: 'bytes' })).map((r) => r.k)).toEqual([500]);
        // SQLite has one connection (the transaction's): a write beside it would wait for it.
        if (dialect === 'sqlite') return;
        await t.db.kysely
          .insertInto('bin_rows' as any)
          .values({ k: 501, big: 5, data: Uint8Array.of(1) })
          .execute();
        expect((await t.db.caps.selectBinary(trx, q, { k: 'int', data: 'bytes' })).map((r) => r.k)).toEqual([500]);
      });
  });

  it('round-trips random blobs', async () => {
    let k = 10_000;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 3000 }), { maxLength: 5 }), async (blobs) => {
        const from = k;
        if (blobs.length > 0)
          await t.db.kysely
            .insertInto('bin_rows' as any)
            .values(blobs.map((data) => ({ k: k++, big: 0, data })))
            .execute();
        const rows = await read(from, k);
        expect(rows.map((r) => new Uint8Array(r.data))).toEqual(blobs.map((b) => new Uint8Array(b)));
      }),
      { numRuns: 40 },
    );
  });

  it('refuses a parameter that is not an integer; a failed read leaves the pool usable', async () => {
    const byText = t.db.kysely
      .selectFrom('bin_rows' as any)
      .select(['k', 'data'])
      .where('data', '=', 'x' as any)
      .compile();
    if (dialect === 'postgres') await expect(t.db.caps.selectBinary(t.db.kysely, byText, { k: 'int', data: 'bytes' })).rejects.toThrow(/not a safe integer/);
    const failing = t.db.kysely
      .selectFrom('bin_rows' as any)
      .select([sql<number>`k / (k - k)`.as('k'), 'data'])
      .where('k', '=', 0)
      .compile();
    if (dialect === 'postgres') await expect(t.db.caps.selectBinary(t.db.kysely, failing, { k: 'int', data: 'bytes' })).rejects.toThrow(/division by zero/);
    expect((await read(0, 3)).map((r) => r.k)).toEqual([0, 1, 2]);
  });
});

describe('binary COPY stream', () => {
  const int8 = (v: number) => {
    const b = Buffer.alloc(12);
    b.writeInt32BE(8, 0);
    b.writeBigInt64BE(BigInt(v), 4);
    return b;
  };
  const bytes = (d: Uint8Array) => Buffer.concat([Buffer.from([(d.length >>> 24) & 255, (d.length >>> 16) & 255, (d.length >>> 8) & 255, d.length & 255]), d]);
  const header = (ext: number) => Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.from([0, 0, 0, 0, 0, 0, 0, ext]), Buffer.alloc(ext, 7)]);
  const row = (k: number, d: Uint8Array) => Buffer.concat([Buffer.from([0, 2]), int8(k), bytes(d)]);
  const trailer = Buffer.from([255, 255]);
  const cols = [
    { name: 'k', kind: 'int' as const },
    { name: 'data', kind: 'bytes' as const },
  ];
  const rows = [
    { k: 1, data: everyByte(2) },
    { k: -7, data: new Uint8Array(0) },
    { k: 2 ** 40, data: Uint8Array.of(0, 255, 0) },
  ];
  const stream = (ext: number) => Buffer.concat([header(ext), ...rows.map((r) => row(r.k, r.data)), trailer]);

  it('parses the same rows however the stream is cut into messages', () => {
    for (const ext of [0, 3]) {
      const s = stream(ext);
      for (let cut = 0; cut <= s.length; cut++) {
        for (const second of [cut, Math.min(s.length, cut + 5), Math.min(s.length, cut + 300)]) {
          const p = new BinaryCopyParser(cols);
          // The parser's input lies in a buffer that is overwritten after each message, as pg's may be.
          for (const part of [s.subarray(0, cut), s.subarray(cut, second), s.subarray(second)]) {
            const scratch = Buffer.from(part);
            p.push(scratch);
            scratch.fill(0xaa);
          }
          p.finish();
          expect(p.rows.map((r) => r.k)).toEqual(rows.map((r) => r.k));
          expect(p.rows.every((r, i) => same(r.data as Uint8Array, rows[i]?.data as Uint8Array))).toBe(true);
        }
      }
    }
  });

  it('refuses a stream cut short, a foreign one, a row of other columns and a null', () => {
    const s = stream(0);
    const cutShort = new BinaryCopyParser(cols);
    cutShort.push(s.subarray(0, s.length - 2));
    expect(() => cutShort.finish()).toThrow(CopyFormatError);
    expect(() => new BinaryCopyParser(cols).push(Buffer.from('COPYPG\n\xff\r\n\0\0\0\0\0\0\0\0\0', 'latin1'))).toThrow(CopyFormatError);
    const oneColumn = Buffer.concat([header(0), Buffer.from([0, 1]), int8(1), trailer]);
    expect(() => new BinaryCopyParser(cols).push(oneColumn)).toThrow(CopyFormatError);
    const withNull = Buffer.concat([header(0), Buffer.from([0, 2]), int8(1), Buffer.from([255, 255, 255, 255]), trailer]);
    expect(() => new BinaryCopyParser(cols).push(withNull)).toThrow(CopyFormatError);
  });

  it('writes integer parameters into the COPY text, negative ones in parentheses', () => {
    const q = binaryCopyQuery(
      {
        sql: 'select k, data from t where k = $1 or k = $2 or k in ($3, $10)',
        parameters: [5, -3, 0, 0, 0, 0, 0, 0, 0, 77],
        query: {} as any,
        queryId: {} as any,
      },
      { k: 'int', data: 'bytes' },
    );
    expect(q.sql).toBe(
      'copy (select q."k"::int8, q."data"::bytea from (select k, data from t where k = 5 or k = (-3) or k in (0, 77)) as q) to stdout (format binary)',
    );
  });
});
