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
// any connection is open (SQLite deletes it only when the last one closes; a checkpoint restarts or truncates it
// in place), and the writer's own connection is open as long as it syncs: so the file is opened once, on the
// first sync, and its descriptor kept until the writer closes (opening and closing it for each sync was 13% of
// the writer thread's time with one event per request). A failed sync closes it, and the next one opens the
// file again by name.
//
// One sync at a time: a call while one runs waits for the next, which starts when the running one ends and
// covers every commit made meanwhile (group commit of the syncs themselves: the busier the writer, the more
// transactions one fdatasync covers).
import fs from 'node:fs';
import type SQLite from 'better-sqlite3';

/** fdatasync of one file through a descriptor opened on first use and kept; `close` gives it back. */
export interface FileSyncer {
  sync(): Promise<void>;
  close(): void;
}

export function fileSyncer(file: string): FileSyncer {
  let fd: number | null = null;
  const drop = () => {
    const d = fd;
    fd = null;
    if (d !== null) {
      try {
        fs.closeSync(d);
      } catch {
        // Closing a descriptor of a regular file only fails for a bad descriptor: nothing to give back then.
      }
    }
  };
  const syncFd = (d: number) =>
    new Promise<void>((resolve, reject) => {
      fs.fdatasync(d, (err) => {
        if (err) {
          if (fd === d) drop();
          reject(err);
        } else resolve();
      });
    });
  return {
    sync: () => {
      if (fd !== null) return syncFd(fd);
      return new Promise<void>((resolve, reject) => {
        fs.open(file, 'r+', (err, d) => {
          if (err) {
            reject(err);
            return;
          }
          // Two first syncs cannot race (walSyncer runs one at a time), but should they, one descriptor is kept.
          if (fd !== null) fs.closeSync(d);
          else fd = d;
          syncFd(fd).then(resolve, reject);
        });
      });
    },
    close: drop,
  };
}

/** Resolves once everything written to the WAL before it was called is on disk; `close` when the writer closes. */
export type WalSyncer = (() => Promise<void>) & { close(): Promise<void> };

/**
 * A function that resolves once everything written to `walFile` before it was called is on disk.
 * `sync` (tests) replaces the fdatasync of the file.
 */
export function walSyncer(walFile: string, sync?: () => Promise<void>): WalSyncer {
  const file = sync ? null : fileSyncer(walFile);
  const syncOnce = sync ?? (file as FileSyncer).sync;
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  const start = (): Promise<void> => {
    const p = syncOnce().finally(() => {
      if (running === p) running = null;
    });
    running = p;
    return p;
  };
  const durable = () => {
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
  // The descriptor goes once the syncs asked for have ended (the writer closes after its last write settled).
  const close = async () => {
    await Promise.allSettled([running, next]);
    file?.close();
  };
  return Object.assign(durable, { close });
}

/**
 * Switches the writer's connection `sqlite` (of the file `file`) to commits that the returned function makes
 * durable (synchronous=NORMAL plus walSyncer), when it runs in WAL mode. Otherwise (a file system where SQLite
 * could not enable WAL keeps a rollback journal, and there is no WAL file to sync) the connection is left as it
 * is, syncing inside COMMIT, and the result is undefined.
 */
export function deferWalSync(sqlite: SQLite.Database, file: string): WalSyncer | undefined {
  if (String(sqlite.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') return undefined;
  sqlite.pragma('synchronous = NORMAL');
  return walSyncer(`${file}-wal`);
}
