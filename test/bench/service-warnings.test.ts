import { describe, expect, it } from 'vitest';
import { serviceWarnings } from '../../bench/lib/service.ts';

describe('serviceWarnings (bench/lib/service.ts)', () => {
  it("echoes the service's warn and error lines, whole across chunk boundaries, and nothing else", () => {
    const seen: string[] = [];
    const feed = serviceWarnings(42, (l) => seen.push(l));
    const info = '{"level":30,"msg":"listening"}\n';
    const failed = '{"level":40,"msg":"request failed","statusCode":500}\n';
    const unhandled = '{"level":50,"msg":"unhandled error","err":{"message":"SQLITE_BUSY: database is locked"}}\n';
    const all = [info, failed, unhandled, 'not json\n'].join('');
    // Fed in 7-byte pieces: lines split anywhere still come out whole.
    for (let i = 0; i < all.length; i += 7) feed(Buffer.from(all.slice(i, i + 7)));
    expect(seen).toEqual([`[inkwell 42] ${failed}`, `[inkwell 42] ${unhandled}`]);
  });
});
