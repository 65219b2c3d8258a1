// The bookkeeping of kept results (src/db/kept-results.ts), alone; the reads that use it are tested in
// batch.test.ts (PostgreSQL) and sqlite-reads.test.ts.
import { describe, expect, it } from 'vitest';
import { KEPT_RESULTS_PER_STATEMENT, KeptSnapshots, keyOf, MAX_CHECK_BACKOFF } from '../../src/db/kept-results.ts';

describe('keyOf', () => {
  it('tells argument lists apart by type, length and position', () => {
    const keys = [['a', 'b'], ['ab'], ['a', ''], [1], ['1'], [null], ['n1;'], [1, 2], [12]].map(keyOf);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('does not key values it cannot tell apart exactly', () => {
    for (const v of [Number.NaN, Number.POSITIVE_INFINITY, {}, [1], true, undefined, 1n]) expect(keyOf(['x', v])).toBeUndefined();
  });
});

describe('KeptSnapshots', () => {
  it('answers only when every key has rows, with the snapshot they were read under', () => {
    const k = new KeptSnapshots<{ n: number }>();
    expect(k.all(['a'])).toBeUndefined();
    k.keep('a', [{ n: 1 }], 's1');
    k.keep('b', [], 's1');
    expect(k.all(['a', 'b', 'a'])).toEqual({ rows: [[{ n: 1 }], [], [{ n: 1 }]], snapshot: 's1' });
    expect(k.all(['a', 'c'])).toBeUndefined();
    expect(k.all(['a', undefined])).toBeUndefined();
    expect(Object.isFrozen(k.all(['a'])?.rows[0]?.[0])).toBe(true);
  });

  it('drops what was read under another snapshot', () => {
    const k = new KeptSnapshots<number>();
    k.keep('a', [1], 's1');
    k.keep('b', [2], 's2');
    expect(k.all(['a'])).toBeUndefined();
    expect(k.all(['b'])).toEqual({ rows: [[2]], snapshot: 's2' });
    expect(k.size).toBe(1);
  });

  it('a failed check drops the results it was about; checks back off while they keep failing', () => {
    const k = new KeptSnapshots<number>();
    k.keep('a', [1], 's1');
    expect(k.shouldCheck()).toBe(true);
    expect(k.checked('s1', 's1')).toBe(true);
    expect(k.all(['a'])?.snapshot).toBe('s1');
    expect(k.checked('s1', 's2')).toBe(false);
    expect(k.all(['a'])).toBeUndefined();
    // Backoff 1, then 3, 7, … batches without a check; capped.
    const skipped: number[] = [];
    for (let failures = 0; failures < 8; failures++) {
      let n = 0;
      while (!k.shouldCheck()) n++;
      skipped.push(n);
      k.checked('x', 'y');
    }
    expect(skipped).toEqual([1, 3, 7, 15, 31, 63, MAX_CHECK_BACKOFF, MAX_CHECK_BACKOFF]);
    // A check that succeeds ends the backoff.
    while (!k.shouldCheck());
    k.checked('y', 'y');
    expect(k.shouldCheck()).toBe(true);
  });

  it('a check about results already replaced leaves the newer ones', () => {
    const k = new KeptSnapshots<number>();
    k.keep('a', [1], 's1');
    k.keep('a', [2], 's2');
    expect(k.checked('s1', 's3')).toBe(false);
    expect(k.all(['a'])).toEqual({ rows: [[2]], snapshot: 's2' });
  });

  it('keeps at most KEPT_RESULTS_PER_STATEMENT results', () => {
    const k = new KeptSnapshots<number>();
    for (let i = 0; i < KEPT_RESULTS_PER_STATEMENT + 5; i++) k.keep(`k${i}`, [i], 's');
    expect(k.size).toBeLessThanOrEqual(KEPT_RESULTS_PER_STATEMENT);
    expect(k.all([`k${KEPT_RESULTS_PER_STATEMENT + 4}`])?.rows).toEqual([[KEPT_RESULTS_PER_STATEMENT + 4]]);
  });
});
