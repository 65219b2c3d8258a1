// Where the ingest writer runs is decided by the database's capabilities, not its dialect: in a worker thread
// where writes hold up the calling thread and the worker can open the same data (a SQLite file), in the
// calling thread otherwise (PostgreSQL, an in-memory SQLite database).
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqlAnalyticsStore } from '../../src/analytics/store/sql-analytics-store.ts';
import { testConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/db/index.ts';
import { describeEachDialect, openTestDb, type TestDb, tempDir } from '../helpers/db.ts';

const ingestOver = (db: Database, worker?: boolean) =>
  createSqlAnalyticsStore({
    config: { analytics: { ...testConfig().analytics, ...(worker === undefined ? {} : { ingestWorker: worker }) } },
    db,
    now: Date.now,
  });

describeEachDialect('ingest writer placement', (dialect) => {
  let t: TestDb;
  beforeEach(async () => {
    t = await openTestDb(dialect);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('a worker thread exactly where writes would hold up the caller and the data has a file to open', async () => {
    const expected = dialect === 'sqlite' ? 'worker' : 'thread';
    expect(t.db.caps.writerThread).toBe(dialect === 'sqlite');
    expect(t.db.file === undefined).toBe(dialect === 'postgres');
    const svc = ingestOver(t.db);
    expect(svc.writerMode).toBe(expected);
    await svc.close();
    const off = ingestOver(t.db, false);
    expect(off.writerMode).toBe('thread');
    await off.close();
  });
});

describe('ingest writer placement, SQLite connections', () => {
  const opened: Database[] = [];
  afterEach(async () => {
    for (const d of opened.splice(0)) await d.close();
  });

  it('an in-memory database has no file for a second connection: the calling thread writes', async () => {
    const db = openDatabase({});
    opened.push(db);
    expect(db.caps.writerThread).toBe(true);
    expect(db.file).toBeUndefined();
    const svc = ingestOver(db);
    expect(svc.writerMode).toBe('thread');
    await svc.close();
  });

  it("walAutocheckpointPages sets the connection's WAL checkpoint threshold, the file's other connections keep theirs", () => {
    const file = path.join(tempDir(), 'a.db');
    const plain = openDatabase({ sqlitePath: file });
    const tuned = openDatabase({ sqlitePath: file, walAutocheckpointPages: 16_384 });
    opened.push(plain, tuned);
    expect(tuned.file).toBe(file);
    expect(plain.sqliteHandle?.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect(tuned.sqliteHandle?.pragma('wal_autocheckpoint', { simple: true })).toBe(16_384);
  });
});
