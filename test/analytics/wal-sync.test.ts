// The ingest writer's durability without an fsync inside COMMIT (wal-sync.ts): a write resolves only after a
// WAL sync that started after its commit has finished, while the next group is written meanwhile.
import fs from 'node:fs';
import SQLite from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEventPreparer } from '../../src/analytics/ingest/prepare.ts';
import { packEvents, type WriteEvent } from '../../src/analytics/ingest/write-batch.ts';
import { createGroupWriter } from '../../src/analytics/ingest/writer/ingest-writer.ts';
import { deferWalSync, fileSyncer, walSyncer } from '../../src/analytics/ingest/writer/wal-sync.ts';
import type { Database } from '../../src/db/index.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { openTestDb, type TestDb } from '../helpers/db.ts';
import { storedRows } from './stored-events.ts';

/** A sync that finishes when the test says so; `started` counts the syncs begun. */
function manualSync() {
  const ends: (() => void)[] = [];
  let started = 0;
  return {
    sync: () =>
      new Promise<void>((resolve) => {
        started++;
        ends.push(resolve);
      }),
    started: () => started,
    finishNext: () => (ends.shift() as () => void)(),
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('walSyncer', () => {
  it('one sync at a time; a call while one runs waits for the next, which covers every call made meanwhile', async () => {
    const m = manualSync();
    const durable = walSyncer('/nonexistent-wal', m.sync);
    const done: string[] = [];
    const a = durable().then(() => done.push('a'));
    expect(m.started()).toBe(1);
    // Committed after the first sync began: it may not count for them.
    const b = durable().then(() => done.push('b'));
    const c = durable().then(() => done.push('c'));
    await tick();
    expect(m.started()).toBe(1);
    m.finishNext();
    await a;
    await tick();
    expect(done).toEqual(['a']);
    expect(m.started()).toBe(2);
    m.finishNext();
    await Promise.all([b, c]);
    expect(done).toEqual(['a', 'b', 'c']);
    expect(m.started()).toBe(2);
    // Idle again: the next call starts a sync at once.
    const d = durable();
    expect(m.started()).toBe(3);
    m.finishNext();
    await d;
  });

  it('a failed sync fails its callers; the next call syncs again', async () => {
    let fail = true;
    const durable = walSyncer('/nonexistent-wal', () => (fail ? Promise.reject(new Error('EIO')) : Promise.resolve()));
    await expect(durable()).rejects.toThrow('EIO');
    fail = false;
    await expect(durable()).resolves.toBeUndefined();
  });

  it('syncs a real file by name (fdatasync)', async () => {
    const dir = fs.mkdtempSync('/tmp/inkwell-walsync-');
    fs.writeFileSync(`${dir}/x-wal`, 'frames');
    await expect(walSyncer(`${dir}/x-wal`)()).resolves.toBeUndefined();
    await expect(walSyncer(`${dir}/missing-wal`)()).rejects.toThrow();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the file open from its first sync until closed; opens it again after a failure', async () => {
    const dir = fs.mkdtempSync('/tmp/inkwell-walsync-');
    const file = `${dir}/y-wal`;
    // Descriptors of this process open on the file (the directory's own, gone by the time it is read, is skipped).
    const openFds = () =>
      fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`) === file;
        } catch {
          return false;
        }
      }).length;
    const f = fileSyncer(file);
    await expect(f.sync()).rejects.toThrow();
    fs.writeFileSync(file, 'frames');
    await f.sync();
    await f.sync();
    expect(openFds()).toBe(1);
    f.close();
    expect(openFds()).toBe(0);
    await f.sync();
    expect(openFds()).toBe(1);
    const durable = walSyncer(file);
    await Promise.all([durable(), durable(), durable()]);
    expect(openFds()).toBe(2);
    await durable.close();
    f.close();
    expect(openFds()).toBe(0);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('deferWalSync', () => {
  it('defers the sync of a WAL-mode connection; leaves a rollback-journal connection syncing in COMMIT', () => {
    const dir = fs.mkdtempSync('/tmp/inkwell-walsync-');
    const wal = new SQLite(`${dir}/wal.db`);
    wal.pragma('journal_mode = WAL');
    wal.pragma('synchronous = FULL');
    expect(deferWalSync(wal, `${dir}/wal.db`)).toBeTypeOf('function');
    expect(wal.pragma('synchronous', { simple: true })).toBe(1);
    const journal = new SQLite(`${dir}/journal.db`);
    journal.pragma('journal_mode = DELETE');
    journal.pragma('synchronous = FULL');
    expect(deferWalSync(journal, `${dir}/journal.db`)).toBeUndefined();
    expect(journal.pragma('synchronous', { simple: true })).toBe(2);
    wal.close();
    journal.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('group writer with a durability step (SQLite file)', () => {
  let t: TestDb;
  let projectId: string;
  beforeEach(async () => {
    t = await openTestDb('sqlite');
    projectId = (await createProjectService(createProjectsStore(t.db.kysely)).createProject({ name: 'w', repository: 'r' })).id;
  });
  afterEach(async () => {
    await t.cleanup();
  });

  function batchOf(offset: number, n: number) {
    const prep = createEventPreparer();
    const project = { id: projectId, visitorSecret: 's', rotation: 'none' as const };
    const gen = prep.beginBatch(project);
    const events = Array.from({ length: n }, (_, i) => {
      const ev = prep.prepare(
        {
          path: `/p/${(offset + i) % 7}`,
          timestamp: new Date(Date.UTC(2026, 4, 1, 10) + offset + i).toISOString(),
          userAgent: 'Mozilla/5.0 Firefox/125.0',
          visitorId: `v${i}`,
        },
        project,
        gen,
        Date.UTC(2026, 4, 2),
        null,
      );
      if (typeof ev === 'string') throw new Error(ev);
      return ev as WriteEvent;
    });
    return packEvents(events);
  }

  async function count(db: Database): Promise<number> {
    return (await storedRows(db)).length;
  }

  it('a write resolves only once its group is durable; the next group is committed meanwhile', async () => {
    const m = manualSync();
    const writer = createGroupWriter(t.db, { durable: walSyncer('/unused', m.sync) });
    const settled: number[] = [];
    const first = writer.write(projectId, 'api', batchOf(0, 3)).then((n) => settled.push(n));
    // Committed, then waiting for its sync.
    for (let i = 0; i < 50 && m.started() < 1; i++) await tick();
    expect(m.started()).toBe(1);
    expect(await count(t.reopen())).toBe(3);
    expect(settled).toEqual([]);
    // The next group commits while the first one's sync runs, and waits for a sync of its own.
    const second = writer.write(projectId, 'api', batchOf(100, 2)).then((n) => settled.push(n));
    for (let i = 0; i < 50 && (await count(t.db)) < 5; i++) await tick();
    expect(await count(t.db)).toBe(5);
    expect(settled).toEqual([]);
    m.finishNext();
    await first;
    expect(settled).toEqual([3]);
    for (let i = 0; i < 50 && m.started() < 2; i++) await tick();
    expect(m.started()).toBe(2);
    m.finishNext();
    await second;
    expect(settled).toEqual([3, 2]);
    await writer.close();
  });

  it('a failed sync fails the writes of its groups (they were committed, not known durable)', async () => {
    const writer = createGroupWriter(t.db, { durable: () => Promise.reject(new Error('EIO')) });
    await expect(writer.write(projectId, 'api', batchOf(0, 2))).rejects.toThrow('EIO');
    await writer.close();
  });
});
