import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { testConfig } from '../../src/config.ts';
import { type Database, openFromConfig } from '../../src/db/index.ts';

describe('openFromConfig on SQLite', () => {
  let db: Database | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    await db?.close();
    db = undefined;
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  const open = async (env: Record<string, string>): Promise<number> => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inkwell-open-'));
    dirs.push(dir);
    db = await openFromConfig(testConfig({ dataDir: dir }, env));
    // SQLite reports a size in KiB as a negative number.
    return db.sqliteHandle?.pragma('cache_size', { simple: true }) as number;
  };

  it('gives its connection the page cache of INKWELL_SQLITE_CACHE_MB (16 MiB unless set)', async () => {
    expect(await open({})).toBe(-16 * 1024);
    await db?.close();
    db = undefined;
    expect(await open({ INKWELL_SQLITE_CACHE_MB: '64' })).toBe(-64 * 1024);
  });

  it('refuses a cache size that is not a whole number of MiB from 1', () => {
    expect(() => testConfig({}, { INKWELL_SQLITE_CACHE_MB: '0' })).toThrow(/INKWELL_SQLITE_CACHE_MB/);
  });
});
