// The bounded maps of analytics caches (src/analytics/lru.ts): SizedLru, whose entries grow while cached.
import { describe, expect, it } from 'vitest';
import { ByteLru, SizedLru } from '../../src/analytics/lru.ts';

describe('SizedLru', () => {
  const sized = (max: number) => new SizedLru<string, { n: number }>(max, (v) => v.n);

  it('evicts least recently used entries down to the bound, measuring an entry again when told it grew', () => {
    const lru = sized(100);
    const a = { n: 30 };
    lru.set('a', a);
    lru.set('b', { n: 30 });
    lru.set('c', { n: 30 });
    expect(lru.bytes).toBe(90);
    expect(lru.get('a')).toBe(a); // a is now the most recent: b goes first
    a.n = 50;
    lru.resize('a');
    expect(lru.get('b')).toBeUndefined();
    expect(lru.bytes).toBe(80);
    expect(lru.size).toBe(2);
  });

  it('keeps the entry being resized even when it alone passes the bound', () => {
    const lru = sized(10);
    const big = { n: 5 };
    lru.set('x', { n: 5 });
    lru.set('big', big);
    big.n = 50;
    lru.resize('big');
    expect(lru.get('big')).toBe(big);
    expect(lru.get('x')).toBeUndefined();
    expect(lru.bytes).toBe(50);
    // A new entry evicts it (least recently used), keeping itself.
    lru.set('y', { n: 1 });
    expect(lru.get('big')).toBeUndefined();
    expect(lru.bytes).toBe(1);
  });

  it('tells its dispose callback of every value that leaves: evicted, deleted, replaced or cleared, never one set again', () => {
    const gone: number[] = [];
    const lru = new SizedLru<string, { n: number; id: number }>(
      100,
      (v) => v.n,
      (v) => gone.push(v.id),
    );
    const a = { n: 40, id: 1 };
    lru.set('a', a);
    lru.set('b', { n: 40, id: 2 });
    lru.set('a', a);
    expect(gone).toEqual([]);
    lru.set('c', { n: 40, id: 3 }); // b is the least recently used (a was set again)
    expect(gone).toEqual([2]);
    lru.set('a', { n: 10, id: 4 });
    expect(gone).toEqual([2, 1]);
    lru.delete('c');
    lru.delete('c');
    expect(gone).toEqual([2, 1, 3]);
    lru.set('d', { n: 10, id: 5 });
    lru.clear();
    expect(gone.sort()).toEqual([1, 2, 3, 4, 5]);
    expect(lru.size).toBe(0);
  });

  it('delete and clear keep the sum right; resizing a missing key only trims', () => {
    const lru = sized(100);
    lru.set('a', { n: 40 });
    lru.set('b', { n: 40 });
    lru.delete('a');
    expect(lru.bytes).toBe(40);
    lru.resize('gone');
    expect(lru.size).toBe(1);
    lru.clear();
    expect(lru.bytes).toBe(0);
    expect(lru.size).toBe(0);
  });
});

describe('ByteLru', () => {
  it('evicts least recently used values down to the bound and never keeps one larger than it', () => {
    const lru = new ByteLru<string>(10);
    lru.set('a', 'A', 4);
    lru.set('b', 'B', 4);
    expect(lru.get('a')).toBe('A');
    lru.set('c', 'C', 4); // b is the least recently used
    expect(lru.get('b')).toBeUndefined();
    expect(lru.bytes).toBe(8);
    lru.set('huge', 'H', 11);
    expect(lru.get('huge')).toBeUndefined();
    expect(lru.size).toBe(2);
    lru.set('a', 'A2', 6); // replacing an entry counts its new size only
    expect(lru.bytes).toBe(10);
    expect(lru.get('a')).toBe('A2');
  });
});
