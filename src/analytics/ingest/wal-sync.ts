// Durable commits for the SQLite ingest writer without an fsync inside COMMIT (see ingest-worker.ts).
//
// The writer's connection runs synchronous=NORMAL: a COMMIT writes its WAL frames (and returns) without syncing
// them. `walSyncer` then makes them durable: an fdatasync of the WAL file on libuv's thread pool, while the
// writer thread goes on with its next transaction. A write is acknowledged only after a sync that started after
// its COMMIT returned has finished, so what was acknowledged is on disk as with synchronous=FULL (where the
// same sync runs inside COMMIT, and the next transaction waits for it).
//
// Why the file's frames are all that needs syncing: in WAL mode a committed transaction is its frames in the
// WAL (the database file changes only in checkpoints). With synchronous=NORMAL SQLite itself syncs the WAL
// before every checkpoint copies frames into the database file, and syncs the database file after, so frames
// are never dropped from the WAL before the database holds them durably. The WAL file keeps its inode while
// any connection is open (it is deleted only when the last one closes), and it is opened by name for each sync.
//
// One sync at a time: a call while one runs waits for the next, which starts when the running one ends and
// covers every commit made meanwhile (group commit of the syncs themselves: the busier the writer, the more
// transactions one fdatasync covers).
import fs from 'node:fs';
import type SQLite from 'better-sqlite3';

function fdatasyncFile(file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(file, 'r+', (err, fd) => {
      if (err) {
        reject(err);
        return;
      }
      fs.fdatasync(fd, (syncErr) => {
        fs.close(fd, () => {
          if (syncErr) reject(syncErr);
          else resolve();
        });
      });
    });
  });
}

/**
 * A function that resolves once everything written to `walFile` before it was called is on disk.
 * `sync` (tests) replaces the fdatasync of the file.
 */
export function walSyncer(walFile: string, sync: () => Promise<void> = () => fdatasyncFile(walFile)): () => Promise<void> {
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  const start = (): Promise<void> => {
    const p = sync().finally(() => {
      if (running === p) running = null;
    });
    running = p;
    return p;
  };
  return () => {
    if (running === null) return start();
    // The running sync may have started before this caller's commit: it waits for the next one.
    next ??= running
      .then(
        () => {},
        () => {},
      )
      .then(() => {
        next = null;
        return start();
      });
    return next;
  };
}

/**
 * Switches the writer's connection `sqlite` (of the file `file`) to commits that the returned function makes
 * durable (synchronous=NORMAL plus walSyncer), when it runs in WAL mode. Otherwise (a file system where SQLite
 * could not enable WAL keeps a rollback journal, and there is no WAL file to sync) the connection is left as it
 * is, syncing inside COMMIT, and the result is undefined.
 */
export function deferWalSync(sqlite: SQLite.Database, file: string): (() => Promise<void>) | undefined {
  if (String(sqlite.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') return undefined;
  sqlite.pragma('synchronous = NORMAL');
  return walSyncer(`${file}-wal`);
}
