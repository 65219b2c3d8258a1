// File operations confined to one directory tree (the job's worktree), race-free against symlinks.
//
// Invariant: every file system object this module reads, writes, creates, moves or deletes is reached
// from the root's directory descriptor through real directory entries, each opened with O_NOFOLLOW at
// the moment of use. A symbolic link is never followed by the kernel: when a path component is a link,
// its target is read, resolved lexically against the directory that holds it and checked (inside the
// root, not into `.git`), and resolution starts again from the root with the resulting path. So a link
// that another operation creates, moves or retargets between a check and a use can only make the use
// fail (ELOOP), never let it land outside the tree.
//
// How a component is opened "at" a directory without openat(2), which Node does not expose: on Linux,
// `/proc/self/fd/<fd>/<name>` looks up `name` in the directory the descriptor refers to, wherever that
// directory is now. Where /proc is missing (macOS, say) paths are plain strings checked with lstat and
// every operation on a root is serialised by a per-root queue instead; that is race-free only against
// this module's own operations, which are the only writers during a run.
import { constants as C } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { checkToolPath, isGitInternal } from './paths.ts';

/** A refusal or failure the model can read and act on. Never carries an absolute path. */
export class ConfinedError extends Error {}

function refuse(message: string): never {
  throw new ConfinedError(message);
}

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException)?.code;

/** A file over the size a read allows (a refusal the model can read, with the size). */
export class TooLargeError extends ConfinedError {
  constructor(
    message: string,
    readonly size: number,
  ) {
    super(message);
  }
}

/** Largest file read as text (a bound on memory, far above any documentation page). */
export const MAX_READ_BYTES = 16 * 1024 * 1024;
/** Symlinks followed while resolving one path (Linux allows 40). */
const MAX_HOPS = 40;
/** Directory depth a walk descends (each level holds a descriptor while its subtree is listed). */
const MAX_WALK_DEPTH = 64;

const PROC_FD = '/proc/self/fd';
let procUsable: boolean | undefined;

/** Whether `/proc/self/fd/<fd>/<name>` looks `name` up in the descriptor's directory (checked once). */
async function hasProcFd(root: string): Promise<boolean> {
  if (procUsable !== undefined) return procUsable;
  try {
    const fh = await fs.open(root, C.O_RDONLY | C.O_DIRECTORY);
    try {
      const [viaFd, direct] = await Promise.all([fs.stat(`${PROC_FD}/${fh.fd}/.`), fs.stat(root)]);
      procUsable = viaFd.ino === direct.ino && viaFd.dev === direct.dev;
    } finally {
      await fh.close();
    }
  } catch {
    procUsable = false;
  }
  return procUsable;
}

/** Tests: `false` forces the path fallback, `undefined` detects again. */
export function setProcFdUsableForTesting(value: boolean | undefined): void {
  procUsable = value;
}

/** A directory reached without following links: `ref` names it for path-based calls. */
interface Dir {
  ref: string;
  fh?: fs.FileHandle;
}

const at = (dir: Dir, name: string) => `${dir.ref}/${name}`;

export type EntryKind = 'file' | 'directory' | 'symlink' | 'other';

function kindOf(st: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): EntryKind {
  return st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'other';
}

/** A path resolved to the directory that holds its last component. */
interface Located {
  parent: Dir;
  name: string;
  /** The repository-relative path of the object (after following links). */
  rel: string;
}

/**
 * Where a symlink at `linkRel` pointing to `target` leads, as a repository-relative path, with `rest`
 * appended; refuses absolute targets, targets that leave the root and targets into `.git`. Pure.
 */
export function followLink(input: string, linkRel: string, target: string, rest: string[] = []): string {
  if (path.posix.isAbsolute(target) || path.win32.isAbsolute(target)) {
    refuse(`path "${input}" goes through the symlink "${linkRel}", which points outside the repository`);
  }
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(linkRel), target, ...rest));
  if (joined === '..' || joined.startsWith('../')) refuse(`path "${input}" goes through the symlink "${linkRel}", which points outside the repository`);
  const rel = joined === '.' ? '' : joined.replace(/\/+$/, '');
  if (isGitInternal(rel)) refuse(`path "${input}" goes through the symlink "${linkRel}", which points into .git`);
  return rel;
}

/** One confined operation: holds the descriptors it opened and closes them all at the end. */
class Session {
  private readonly opened: fs.FileHandle[] = [];

  constructor(
    readonly root: Dir,
    private readonly useFd: boolean,
  ) {}

  /** Opens `name` in `parent` as a directory without following a link; null when it is not a directory. */
  async openDir(parent: Dir, name: string): Promise<Dir | 'symlink' | 'missing' | 'not-dir'> {
    const p = at(parent, name);
    if (this.useFd) {
      try {
        const fh = await fs.open(p, C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW);
        this.opened.push(fh);
        return { ref: `${PROC_FD}/${fh.fd}`, fh };
      } catch (err) {
        const code = errno(err);
        if (code === 'ENOENT') return 'missing';
        if (code !== 'ELOOP' && code !== 'ENOTDIR') throw err;
      }
    }
    const st = await fs.lstat(p).catch((err) => {
      if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') return null;
      throw err;
    });
    if (!st) return 'missing';
    if (st.isSymbolicLink()) return 'symlink';
    if (!st.isDirectory()) return 'not-dir';
    return this.useFd ? this.openDir(parent, name) : { ref: p };
  }

  /** The link target of `name` in `parent`, or null when it is not (or no longer) a link. */
  async readLink(parent: Dir, name: string): Promise<string | null> {
    try {
      return await fs.readlink(at(parent, name));
    } catch (err) {
      if (['EINVAL', 'ENOENT', 'ENOTDIR'].includes(errno(err) ?? '')) return null;
      throw err;
    }
  }

  /**
   * Resolves a relative path (already checked) to its parent directory and last name. Links in parent
   * components are followed (inside the root only); so is a link in the last component when `followLast`.
   * With `create`, missing parent directories are made.
   */
  async locate(input: string, rel: string, opts: { followLast: boolean; create?: boolean; allowRoot?: boolean }): Promise<Located> {
    let current = rel;
    for (let hops = 0; hops <= MAX_HOPS; hops++) {
      const parts = current.split('/');
      let dir = this.root;
      let restarted = false;
      for (let i = 0; i < parts.length - 1 && !restarted; i++) {
        const name = parts[i]!;
        const here = parts.slice(0, i + 1).join('/');
        let next = await this.openDir(dir, name);
        if (next === 'missing' && opts.create) {
          await fs.mkdir(at(dir, name), 0o755).catch((err) => {
            if (errno(err) !== 'EEXIST') throw err;
          });
          next = await this.openDir(dir, name);
        }
        if (next === 'missing') return { parent: dir, name: parts.slice(i).join('/'), rel: current };
        if (next === 'not-dir') refuse(`path "${input}": "${here}" is a file, not a directory`);
        if (next === 'symlink') {
          const target = await this.readLink(dir, name);
          if (target === null) {
            restarted = true; // replaced meanwhile: resolve again
            break;
          }
          current = followLink(input, here, target, parts.slice(i + 1));
          if (current === '') refuse(`path "${input}" must name a file, not the repository root`);
          restarted = true;
          break;
        }
        dir = next;
      }
      if (restarted) continue;
      const name = parts.at(-1)!;
      if (opts.followLast) {
        const target = await this.readLink(dir, name);
        if (target !== null) {
          current = followLink(input, current, target);
          if (current === '') {
            if (opts.allowRoot) return { parent: this.root, name: '', rel: '' };
            refuse(`path "${input}" must name a file, not the repository root`);
          }
          continue;
        }
      }
      return { parent: dir, name, rel: current };
    }
    refuse(`path "${input}" has too many levels of symbolic links`);
  }

  /** Opens the directory a path names (links followed inside the root); the root itself for ''. */
  async openDirectory(input: string, rel: string): Promise<{ dir: Dir; rel: string } | 'missing' | 'not-dir'> {
    let current = rel;
    for (let hops = 0; hops <= MAX_HOPS; hops++) {
      if (current === '') return { dir: this.root, rel: '' };
      const loc = await this.locate(input, current, { followLast: true, allowRoot: true });
      if (loc.name === '') return { dir: this.root, rel: '' };
      if (loc.name.includes('/')) return 'missing';
      const dir = await this.openDir(loc.parent, loc.name);
      if (dir === 'symlink') {
        current = loc.rel; // became a link after locate looked: resolve again
        continue;
      }
      if (dir === 'missing' || dir === 'not-dir') return dir;
      return { dir, rel: loc.rel };
    }
    refuse(`path "${input}" has too many levels of symbolic links`);
  }

  async lstat(loc: Located): Promise<EntryKind | null> {
    if (loc.name.includes('/')) return null;
    try {
      return kindOf(await fs.lstat(at(loc.parent, loc.name)));
    } catch (err) {
      if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') return null;
      throw err;
    }
  }

  /** Opens a regular file without following a link in its last component. */
  async openFile(loc: Located, flags: number, mode?: number): Promise<fs.FileHandle> {
    const fh = await fs.open(at(loc.parent, loc.name), flags | C.O_NOFOLLOW | C.O_NONBLOCK, mode);
    this.opened.push(fh);
    const st = await fh.stat();
    if (st.isDirectory()) refuse(`"${loc.rel}" is a directory`);
    if (!st.isFile()) refuse(`"${loc.rel}" is not a regular file`);
    return fh;
  }

  async close(): Promise<void> {
    await Promise.all(this.opened.map((fh) => fh.close().catch(() => undefined)));
  }
}

/**
 * Reads a whole file of at most `maxBytes`. The size from `stat` gives the early refusal with the exact size;
 * the reads themselves never take more than `maxBytes + 1` bytes, so a file that grows between the stat and
 * the read (a parallel write in the same step) is refused too instead of being read past the cap.
 */
/** What `readAll` needs of an open file (a `fs.FileHandle` is one). */
export interface ReadableFile {
  stat(): Promise<{ size: number }>;
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
}

export async function readAll(fh: ReadableFile, rel: string, maxBytes = MAX_READ_BYTES): Promise<Buffer> {
  const st = await fh.stat();
  if (st.size > maxBytes) throw new TooLargeError(`"${rel}" is ${st.size} bytes; files over ${maxBytes} bytes cannot be read`, st.size);
  let buf = Buffer.allocUnsafe(st.size + 1);
  let filled = 0;
  for (;;) {
    if (filled === buf.length) {
      if (filled > maxBytes)
        throw new TooLargeError(`"${rel}" grew past ${maxBytes} bytes while it was being read; files over ${maxBytes} bytes cannot be read`, filled);
      const grown = Buffer.allocUnsafe(Math.min(buf.length * 2, maxBytes + 1));
      buf.copy(grown, 0, 0, filled);
      buf = grown;
    }
    const { bytesRead } = await fh.read(buf, filled, buf.length - filled, filled);
    if (bytesRead === 0) return buf.subarray(0, filled);
    filled += bytesRead;
  }
}

/** Files under a directory, sorted per directory; `.git` skipped; linked directories not entered. */
export interface WalkResult {
  files: string[];
  truncated: boolean;
}

/**
 * The worktree seen through confined operations. Stateless between calls: each call opens the root
 * afresh and closes every descriptor it opened before returning.
 */
export class ConfinedTree {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly root: string) {}

  /** Runs `fn` in a session on the root; on platforms without /proc, one at a time. */
  private async session<T>(fn: (s: Session) => Promise<T>): Promise<T> {
    const useFd = await hasProcFd(this.root);
    const run = async () => {
      const rootFh = useFd ? await fs.open(this.root, C.O_RDONLY | C.O_DIRECTORY) : undefined;
      const s = new Session(rootFh ? { ref: `${PROC_FD}/${rootFh.fd}`, fh: rootFh } : { ref: this.root }, useFd);
      try {
        return await fn(s);
      } finally {
        await s.close();
        await rootFh?.close().catch(() => undefined);
      }
    };
    if (useFd) return run();
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private check(input: unknown, allowRoot = false): string {
    const checked = checkToolPath(input, { allowRoot });
    if (!checked.ok) refuse(checked.error);
    return checked.rel;
  }

  /** The content of a regular file (links followed inside the root); over `maxBytes` it is a TooLargeError. */
  async read(input: unknown, maxBytes = MAX_READ_BYTES): Promise<{ rel: string; content: Buffer }> {
    const rel = this.check(input);
    return this.session(async (s) => {
      const loc = await s.locate(String(input), rel, { followLast: true });
      const fh = await this.openExisting(s, loc, C.O_RDONLY);
      return { rel: loc.rel, content: await readAll(fh, loc.rel, Math.min(maxBytes, MAX_READ_BYTES)) };
    });
  }

  /** Creates or replaces a file; parents are made. `created` says whether it did not exist. */
  async write(input: unknown, content: string): Promise<{ rel: string; created: boolean }> {
    const rel = this.check(input);
    return this.session(async (s) => {
      const loc = await s.locate(String(input), rel, { followLast: true, create: true });
      if (loc.name.includes('/')) refuse(`could not create the folders of "${loc.rel}"`);
      let created = true;
      let fh: fs.FileHandle;
      try {
        fh = await s.openFile(loc, C.O_WRONLY | C.O_CREAT | C.O_EXCL, 0o644);
      } catch (err) {
        if (errno(err) === 'EISDIR') refuse(`"${loc.rel}" is a directory`);
        if (errno(err) !== 'EEXIST') throw err;
        created = false;
        // O_EXCL failed with EEXIST also for a dangling link: never write through it.
        if ((await s.lstat(loc)) === 'symlink') refuse(`"${loc.rel}" changed while it was being written; try again`);
        fh = await s.openFile(loc, C.O_WRONLY).catch((e) => {
          if (errno(e) === 'EISDIR') refuse(`"${loc.rel}" is a directory`);
          throw e;
        });
        await fh.truncate(0);
      }
      await fh.writeFile(content, 'utf8');
      return { rel: loc.rel, created };
    });
  }

  /** Reads a text file and writes back `edit(text)` through the same descriptor. */
  async update(input: unknown, edit: (text: Buffer, rel: string) => string): Promise<{ rel: string }> {
    const rel = this.check(input);
    return this.session(async (s) => {
      const loc = await s.locate(String(input), rel, { followLast: true });
      const fh = await this.openExisting(s, loc, C.O_RDWR);
      const before = await readAll(fh, loc.rel);
      const after = edit(before, loc.rel);
      const bytes = Buffer.from(after, 'utf8');
      await fh.truncate(0);
      // Explicit positions: reading left the file position at the old end.
      for (let off = 0; off < bytes.length; ) off += (await fh.write(bytes, off, bytes.length - off, off)).bytesWritten;
      return { rel: loc.rel };
    });
  }

  /** Deletes a file or a link itself (never what a link points to). */
  async remove(input: unknown): Promise<{ rel: string }> {
    const rel = this.check(input);
    return this.session(async (s) => {
      const loc = await s.locate(String(input), rel, { followLast: false });
      const kind = await s.lstat(loc);
      if (kind === null) refuse(`file "${loc.rel}" does not exist`);
      if (kind === 'directory') refuse(`"${loc.rel}" is a directory; delete the files in it one by one`);
      await fs.unlink(at(loc.parent, loc.name)).catch((err) => {
        if (errno(err) === 'EISDIR' || errno(err) === 'EPERM') refuse(`"${loc.rel}" is a directory; delete the files in it one by one`);
        if (errno(err) === 'ENOENT') refuse(`file "${loc.rel}" does not exist`);
        throw err;
      });
      return { rel: loc.rel };
    });
  }

  /**
   * Moves a file or a link (the link itself) to a path that does not exist yet; parents are made. A link
   * is moved only when, from its new place, it still points inside the repository and not into `.git`.
   */
  async move(fromInput: unknown, toInput: unknown): Promise<{ from: string; to: string }> {
    const fromRel = this.check(fromInput);
    const toRel = this.check(toInput);
    return this.session(async (s) => {
      const src = await s.locate(String(fromInput), fromRel, { followLast: false });
      const kind = await s.lstat(src);
      if (kind === null) refuse(`file "${src.rel}" does not exist`);
      if (kind === 'directory') refuse(`"${src.rel}" is a directory; move the files in it one by one`);
      const dst = await s.locate(String(toInput), toRel, { followLast: true, create: true });
      if (dst.name.includes('/')) refuse(`could not create the folders of "${dst.rel}"`);
      if ((await s.lstat(dst)) !== null) refuse(`"${dst.rel}" already exists; delete it first or choose another name`);
      if (kind === 'symlink') {
        const target = await s.readLink(src.parent, src.name);
        if (target !== null) {
          try {
            followLink(String(toInput), dst.rel, target);
          } catch {
            refuse(`the symlink "${src.rel}" cannot be moved to "${dst.rel}": from there it would point outside the repository or into .git`);
          }
        }
      }
      const from = at(src.parent, src.name);
      const to = at(dst.parent, dst.name);
      // link + unlink: never replaces an entry created at `to` meanwhile (rename would). link(2) on Linux
      // links a symlink itself, not its target.
      try {
        await fs.link(from, to);
        await fs.unlink(from);
      } catch (err) {
        if (errno(err) === 'EEXIST') refuse(`"${dst.rel}" already exists; delete it first or choose another name`);
        if (errno(err) === 'ENOENT') refuse(`file "${src.rel}" does not exist`);
        if (errno(err) !== 'EPERM' && errno(err) !== 'EXDEV' && errno(err) !== 'EMLINK') throw err;
        await fs.rename(from, to);
      }
      return { from: src.rel, to: dst.rel };
    });
  }

  /** Lists files under a directory (links followed inside the root to reach it; not while walking). */
  async list(input: unknown, limit: number): Promise<{ rel: string; kind: EntryKind | null } & WalkResult> {
    const rel = this.check(input, true);
    return this.session(async (s) => {
      const opened = await s.openDirectory(String(input), rel);
      if (opened === 'missing') return { rel, kind: null, files: [], truncated: false };
      if (opened === 'not-dir') {
        const loc = await s.locate(String(input), rel, { followLast: true });
        return { rel: loc.rel, kind: await s.lstat(loc), files: [], truncated: false };
      }
      return { rel: opened.rel, kind: 'directory' as const, ...(await walkDir(s, opened.dir, opened.rel, limit)) };
    });
  }

  /**
   * Runs `fn` with a root reference that a worker thread of this process can resolve files under without
   * following links (see `openNoFollowSync`): `/proc/self/fd/<n>` while `fn` runs, else the root path.
   */
  async withRootRef<T>(fn: (rootRef: string) => Promise<T>): Promise<T> {
    return this.session((s) => fn(s.root.ref));
  }

  private async openExisting(s: Session, loc: Located, flags: number): Promise<fs.FileHandle> {
    if (loc.name.includes('/')) refuse(`file "${loc.rel}" does not exist`);
    try {
      return await s.openFile(loc, flags);
    } catch (err) {
      const code = errno(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') refuse(`file "${loc.rel}" does not exist`);
      if (code === 'EISDIR') refuse(`"${loc.rel}" is a directory; use list_files to see what it contains`);
      if (code === 'ELOOP') refuse(`"${loc.rel}" changed while it was being read; try again`);
      throw err;
    }
  }
}

async function walkDir(s: Session, dir: Dir, rel: string, limit: number): Promise<WalkResult> {
  const files: string[] = [];
  let truncated = false;
  async function visit(d: Dir, dRel: string, depth: number): Promise<void> {
    const entries = await fs.readdir(d.ref, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (files.length >= limit) {
        truncated = true;
        return;
      }
      if (e.name.toLowerCase() === '.git') continue;
      const childRel = dRel ? `${dRel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (depth >= MAX_WALK_DEPTH) continue;
        const child = await s.openDir(d, e.name);
        if (typeof child === 'object') {
          await visit(child, childRel, depth + 1);
          await child.fh?.close().catch(() => undefined);
        }
      } else files.push(childRel);
    }
  }
  await visit(dir, rel, 0);
  return { files, truncated };
}

/**
 * Plain-JavaScript source of a synchronous no-follow open, for worker threads started with `eval`
 * (they share this process's descriptors, so `/proc/self/fd/<n>` resolves there too). Each component is
 * opened with O_NOFOLLOW; a link anywhere makes the open fail, which callers treat as "skip".
 */
export const OPEN_NO_FOLLOW_SYNC_SOURCE = `
function openNoFollowSync(fs, rootRef, rel) {
  const C = fs.constants;
  const viaFd = rootRef.startsWith('/proc/self/fd/');
  const parts = rel.split('/');
  let dirFd = null;
  let ref = rootRef;
  try {
    for (let i = 0; i < parts.length - 1; i++) {
      if (viaFd) {
        const fd = fs.openSync(ref + '/' + parts[i], C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW);
        if (dirFd !== null) fs.closeSync(dirFd);
        dirFd = fd;
        ref = '/proc/self/fd/' + fd;
      } else {
        ref = ref + '/' + parts[i];
        if (!fs.lstatSync(ref).isDirectory()) throw new Error('not a directory');
      }
    }
    return fs.openSync(ref + '/' + parts[parts.length - 1], C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  } finally {
    if (dirFd !== null) fs.closeSync(dirFd);
  }
}
`;
