// A job's diff between the worker (src/git/diff.ts → a job_diffs row) and the API (row → the response). Pure.
import type { BranchDiff, DiffFile } from '../git/diff.ts';
import { iso } from '../lib/time.ts';
import type { JobDiffRow } from './store.ts';

export interface JobDiffView {
  /** Merge base of the branch with the job's ref; null while the job has pushed nothing. */
  base: string | null;
  /** The branch's commit the diff was taken at; null while the job has pushed nothing. */
  head: string | null;
  files: DiffFile[];
  totals: { files: number; additions: number; deletions: number };
  diff: string;
  truncated: boolean;
  /** When the diff was taken; null while the job has pushed nothing. */
  updatedAt: string | null;
}

export function toDiffRow(jobId: string, d: BranchDiff, now: number): JobDiffRow {
  return {
    job_id: jobId,
    base_sha: d.base,
    head_sha: d.head,
    files: JSON.stringify(d.files),
    diff: d.diff,
    truncated: d.truncated ? 1 : 0,
    updated_at: now,
  };
}

/** The API's answer for a stored diff, or for none (a job that has pushed nothing yet: no files, empty text). */
export function toDiffView(row: JobDiffRow | null): JobDiffView {
  const files = row ? (JSON.parse(row.files) as DiffFile[]) : [];
  const totals = { files: files.length, additions: 0, deletions: 0 };
  for (const f of files) {
    totals.additions += f.additions;
    totals.deletions += f.deletions;
  }
  return {
    base: row?.base_sha ?? null,
    head: row?.head_sha ?? null,
    files,
    totals,
    diff: row?.diff ?? '',
    truncated: Number(row?.truncated ?? 0) === 1,
    updatedAt: row ? iso(Number(row.updated_at)) : null,
  };
}
