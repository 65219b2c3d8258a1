// The files a check run reads, through the agent's confined file system (never outside the worktree, links
// resolved by hand inside it) and within a budget: files, bytes, one file's size, and the run's signal.
import { ConfinedError, ConfinedTree, TooLargeError } from '../agent/confined-fs.ts';
import { searchFiles } from '../agent/search.ts';
import type { CheckLimits } from './types.ts';

/** The run's time ran out (its signal aborted): the caller reports `check-timeout`. */
export class ChecksAbortedError extends Error {}

export type ReadResult = { ok: true; text: string } | { ok: false; reason: 'missing' | 'outside' | 'too-large' | 'binary' | 'budget'; message: string };

export class DocsReader {
  private readonly tree: ConfinedTree;
  private readonly cache = new Map<string, ReadResult>();
  private filesRead = 0;
  private bytesRead = 0;
  /** Set once the file or byte budget ran out: later reads answer `budget`. */
  budgetHit = false;
  listTruncated = false;
  private listed: Set<string> | null = null;

  constructor(
    root: string,
    readonly limits: CheckLimits,
    private readonly signal?: AbortSignal,
  ) {
    this.tree = new ConfinedTree(root);
  }

  throwIfAborted(): void {
    if (this.signal?.aborted) throw new ChecksAbortedError('the checks ran out of time');
  }

  /** Every file of the worktree (`.git` skipped, linked directories not entered), listed once. */
  async files(): Promise<Set<string>> {
    if (this.listed) return this.listed;
    this.throwIfAborted();
    const { files, truncated } = await this.tree.list('.', this.limits.maxListed);
    this.listTruncated = truncated;
    this.listed = new Set(files);
    return this.listed;
  }

  /** Whether a path names a file (or a directory) inside the worktree, following links inside it only. */
  async exists(rel: string): Promise<'yes' | 'no' | 'outside'> {
    this.throwIfAborted();
    try {
      const { kind } = await this.tree.list(rel, 1);
      return kind === null ? 'no' : 'yes';
    } catch (err) {
      if (err instanceof ConfinedError) return /outside|\.git/.test(err.message) ? 'outside' : 'no';
      throw err;
    }
  }

  /**
   * Which of `files` contain one of `names` (plain text), found in one pass by the search worker (links not
   * followed, files over the size limit skipped, 10 s at most); null when the search could not finish.
   */
  async mentioning(files: string[], names: string[]): Promise<{ files: Set<string>; complete: boolean } | null> {
    this.throwIfAborted();
    const query = names.map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|');
    const found = await this.tree
      .withRootRef((root) =>
        searchFiles({ root, files, query, maxMatches: 20_000, maxFileBytes: this.limits.maxFileBytes, maxLineChars: 100_000 }, 10_000, this.signal),
      )
      .catch((err) => {
        if (this.signal?.aborted) throw new ChecksAbortedError('the checks ran out of time');
        throw err;
      });
    if (!found.ok) return null;
    return { files: new Set(found.matches.map((m) => m.file)), complete: !found.capped };
  }

  /** A file's text, once per run (cached), within the budget. */
  async read(rel: string): Promise<ReadResult> {
    const cached = this.cache.get(rel);
    if (cached) return cached;
    this.throwIfAborted();
    const result = await this.readUncached(rel);
    this.cache.set(rel, result);
    return result;
  }

  private async readUncached(rel: string): Promise<ReadResult> {
    if (this.filesRead >= this.limits.maxFiles || this.bytesRead >= this.limits.maxBytes) {
      this.budgetHit = true;
      return { ok: false, reason: 'budget', message: `not read: the checks read ${this.filesRead} files (${this.bytesRead} bytes), their limit` };
    }
    this.filesRead++;
    const max = Math.min(this.limits.maxFileBytes, this.limits.maxBytes - this.bytesRead);
    try {
      const { content } = await this.tree.read(rel, max);
      this.bytesRead += content.length;
      if (content.subarray(0, 8000).includes(0)) return { ok: false, reason: 'binary', message: `"${rel}" is a binary file` };
      return { ok: true, text: content.toString('utf8') };
    } catch (err) {
      if (err instanceof TooLargeError) {
        if (err.size <= this.limits.maxFileBytes) this.budgetHit = true;
        return { ok: false, reason: err.size > this.limits.maxFileBytes ? 'too-large' : 'budget', message: err.message };
      }
      if (err instanceof ConfinedError) {
        const outside = /outside|\.git/.test(err.message);
        return { ok: false, reason: outside ? 'outside' : 'missing', message: err.message };
      }
      throw err;
    }
  }
}
