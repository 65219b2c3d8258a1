// Unlinked scratch files: data kept on disk (in the page cache, not the process's RSS) for as long as a descriptor
// is open, gone when it closes or the process exits. Used by the export's range spill (range-spill.ts) and the ingest
// writer's visitor key file (visitor-keys.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Where scratch files of a database go: beside its SQLite file (on disk), else the system's temporary directory. */
export function scratchDirOf(db: { file?: string | undefined }): string {
  return db.file ? path.dirname(db.file) : os.tmpdir();
}

/**
 * Opens a new file in `dir` for reading and writing, owner-only, and unlinks it at once; its descriptor. 'wx+':
 * O_EXCL, so a file or symlink already at the name (a shared temporary directory) is refused, not followed.
 */
export function openUnlinked(dir: string, prefix: string): number {
  const file = path.join(dir, `${prefix}-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  const fd = fs.openSync(file, 'wx+', 0o600);
  fs.unlinkSync(file);
  return fd;
}

/** Writes all of `data` at `at` (writeSync may write less than asked). */
export function writeAllAt(fd: number, data: Uint8Array, at: number): void {
  let done = 0;
  while (done < data.length) done += fs.writeSync(fd, data, done, data.length - done, at + done);
}
