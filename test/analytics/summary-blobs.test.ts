// Summary blobs read back as stored, on both dialects, through the dialect's fast form for large blobs
// (DialectCaps.selectBinary: a binary COPY on PostgreSQL, the blob itself on SQLite) and the plain column.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { summaryStore } from '../../src/analytics/store/summary-store.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

describeEachDialect('summary blobs read in bulk', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await openTestDb(dialect);
  });
  afterAll(() => t?.cleanup());

  it('come back byte for byte, of every length, empty and large', async () => {
    const sizes = [0, 1, 2, 3, 56, 57, 58, 76, 77, 228, 229, 1000, 300_000];
    const blobs = sizes.map((n, i) => Uint8Array.from({ length: n }, (_, k) => (k * 131 + i * 7 + (k >> 8)) & 255));
    await summaryStore.upsertSummaries(
      t.db.kysely,
      blobs.map((data, day) => ({ projectOrd: 1, day, version: 1, data })),
    );
    const days = sizes.map((_, day) => day);
    const fast = await summaryStore.selectSummaries(t.db.kysely, 1, days, t.db.caps);
    const plain = await summaryStore.selectSummaries(t.db.kysely, 1, days);
    for (const rows of [fast, plain]) {
      expect(rows.length).toBe(sizes.length);
      for (const r of rows) expect(new Uint8Array(r.data)).toEqual(blobs[r.day]);
    }
    let version = 0;
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 5000 }), async (data) => {
        // Each a newer version (a stored summary is only ever replaced by a newer one).
        await summaryStore.upsertSummaries(t.db.kysely, [{ projectOrd: 2, day: 1, version: ++version, data }]);
        const [r] = await summaryStore.selectSummaries(t.db.kysely, 2, [1], t.db.caps);
        expect(new Uint8Array(r?.data ?? [])).toEqual(data);
      }),
      { numRuns: 50 },
    );
  });
});
