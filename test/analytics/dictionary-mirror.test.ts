// The preparing thread's copy of committed dictionary ids (pure: no threads, no database).
import { describe, expect, it } from 'vitest';
import { packEvents, type WriteEvent } from '../../src/analytics/ingest/write-batch.ts';
import { DictionaryMirror } from '../../src/analytics/ingest/writer/dictionary-mirror.ts';

const ev = (path: string, vkey: string, ua: string | null): WriteEvent => [0, 1, path, path, vkey, ua, null, 'GET', 200, null, 'human', null, null, 1, null];
const learnedOf = (keys: string[], ids: number[]) => ({ keys, ids });
const none = learnedOf([], []);

describe('DictionaryMirror', () => {
  it('marks each string of a batch, per role: its id when learned, 0 when unknown, -1 when not used in that role', () => {
    const m = new DictionaryMirror(100);
    m.learn('p1', { paths: learnedOf(['/a'], [7]), visitors: learnedOf(['v:1'], [70]), userAgents: none });
    const b = packEvents([ev('/a', 'v:1', 'UA'), ev('/b', 'v:1', null), ev('/a', 'v:2', 'UA')]);
    m.fill('p1', b);
    const at = (s: string) => b.strings.indexOf(s);
    expect(b.known?.paths[at('/a')]).toBe(7);
    expect(b.known?.paths[at('/b')]).toBe(0);
    expect(b.known?.paths[at('v:1')]).toBe(-1);
    expect(b.known?.visitors[at('v:1')]).toBe(70);
    expect(b.known?.visitors[at('v:2')]).toBe(0);
    expect(b.known?.userAgents[at('UA')]).toBe(0);
    expect(b.known?.userAgents[at('/a')]).toBe(-1);
  });

  it('keeps projects apart, and forgets everything on clear', () => {
    const m = new DictionaryMirror(100);
    m.learn('p1', { paths: learnedOf(['/a'], [7]), visitors: none, userAgents: learnedOf(['UA'], [3]) });
    const other = packEvents([ev('/a', 'v:1', 'UA')]);
    m.fill('p2', other);
    expect([...(other.known?.paths ?? [])].filter((x) => x > 0)).toEqual([]);
    const mine = packEvents([ev('/a', 'v:1', 'UA')]);
    m.fill('p1', mine);
    expect(mine.known?.userAgents[mine.strings.indexOf('UA')]).toBe(3);
    m.clear();
    const after = packEvents([ev('/a', 'v:1', 'UA')]);
    m.fill('p1', after);
    expect([...(after.known?.paths ?? [])].filter((x) => x > 0)).toEqual([]);
  });
});
