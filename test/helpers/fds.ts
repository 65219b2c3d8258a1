// Open file descriptors of this process (and so of its worker threads), from /proc.
import fs from 'node:fs';

/** Descriptors open on deleted (unlinked) files whose path begins with `prefix`. */
export function openDeletedFiles(prefix: string): number {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      const target = fs.readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(prefix) && target.endsWith(' (deleted)')) n++;
    } catch {
      // The descriptor readdir itself used, closed since.
    }
  }
  return n;
}
