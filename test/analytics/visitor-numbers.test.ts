// The ClickHouse store's visitor numbers (src/analytics/clickhouse/visitor-numbers.ts) with its per-project state
// bounded by bytes: a project whose index was dropped gets it back from the SQL dictionary, and every key keeps
// its one number. No ClickHouse needed: the numbers live in the SQL database.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { testNumbering } from '../helpers/clickhouse.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

describeEachDialect('ClickHouse visitor numbers, bounded state', (dialect) => {
  let t: TestDb;
  beforeEach(async () => {
    t = await openTestDb(dialect);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('a numbering that holds one project at a time gives the same numbers as one that holds them all', async () => {
    const tight = testNumbering(t.db, { maxBytes: 1 });
    const roomy = testNumbering(t.db);
    const seen = new Map<string, number>();
    for (let round = 0; round < 5; round++) {
      for (const [k, project] of ['p1', 'p2', 'p3'].entries()) {
        const keys = Array.from({ length: 30 }, (_, i) => `h:key${(round * 11 + i * (k + 1)) % 70}`);
        // Alternate which instance numbers first: the other must agree with it.
        const [first, second] = round % 2 === 0 ? [tight, roomy] : [roomy, tight];
        const a = await first.numbers(project, keys);
        const b = await second.numbers(project, keys);
        for (const key of keys) {
          const n = a.get(key) as number;
          expect(b.get(key)).toBe(n);
          const before = seen.get(`${project} ${key}`);
          if (before !== undefined) expect(n).toBe(before);
          seen.set(`${project} ${key}`, n);
        }
      }
    }
    // Dense per project: 1..n.
    for (const project of ['p1', 'p2', 'p3']) {
      const numbers = [...seen].filter(([k]) => k.startsWith(`${project} `)).map(([, n]) => n);
      expect(numbers.sort((x, y) => x - y)).toEqual(numbers.map((_, i) => i + 1));
    }
  });
});
