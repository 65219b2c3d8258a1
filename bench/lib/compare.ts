// --compare <checkout>: a benchmark also runs each backend's service from another checkout (its own
// database), in the same rounds, so a change is measured side by side with the code before it.
import { execFileSync } from 'node:child_process';
import type { ServiceEnv } from './service.ts';

export interface Compare {
  /** The other checkout. */
  dir: string;
  /** Its short commit (and the --compare-env setting, when given): what its results are labelled with. */
  label: string;
  /** Environment for its services only. */
  env: Record<string, string>;
}

/** The --compare checkout (and, where the bench allows it, --compare-env NAME=VALUE), or undefined. */
export function compareFromArgs(args: Map<string, string>, opts: { env?: boolean } = {}): Compare | undefined {
  const dir = args.get('compare');
  const setting = opts.env ? args.get('compare-env') : undefined;
  if (setting !== undefined && !/^[A-Z_][A-Z0-9_]*=/.test(setting)) throw new Error('--compare-env takes NAME=VALUE');
  if (!dir) return undefined;
  const commit = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const env = setting ? Object.fromEntries([setting.split(/=(.*)/s).slice(0, 2) as [string, string]]) : {};
  return { dir, label: setting ? `${commit}+${setting}` : commit, env };
}

/** A system's name in logs, tables and the history: `sqlite`, or `sqlite@<label>` for the compared checkout. */
export const systemName = (r: { backend: string; commit?: string }): string => (r.commit ? `${r.backend}@${r.commit}` : r.backend);

/** The result file's note on the comparison (nothing without one). */
export const compareNote = (c: Compare | undefined) =>
  c ? { compare: { commit: c.label, note: 'the inkwell entries with a commit ran from that checkout, in the same rounds' } } : {};

/** One side of a comparison: this checkout (no commit) or the --compare checkout, on one backend. */
export interface Side {
  backend: ServiceEnv['backend'];
  /** The compared checkout's label; absent for this checkout. */
  commit?: string;
  /** The checkout whose `inkwell` runs (absent: this one). */
  repoDir?: string;
  /** Environment for this side's services only (--compare-env). */
  env: Record<string, string>;
}

/** This checkout's side, then (with --compare) the compared checkout's, for one backend. */
export function sidesOf(backend: ServiceEnv['backend'], compare: Compare | undefined): Side[] {
  const sides: Side[] = [{ backend, env: {} }];
  if (compare) sides.push({ backend, commit: compare.label, repoDir: compare.dir, env: compare.env });
  return sides;
}
