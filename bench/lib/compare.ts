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

/**
 * A system's name in logs, tables and the history: `sqlite`, `sqlite@<label>` for the compared checkout, or
 * `sqlite~<variant>` for a --node-variants service.
 */
export const systemName = (r: { backend: string; commit?: string; variant?: string }): string =>
  r.commit ? `${r.backend}@${r.commit}` : r.variant ? `${r.backend}~${r.variant}` : r.backend;

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

/**
 * --node-variants 'NAME:FLAGS;NAME:FLAGS…': more services of this checkout, each started with those Node/V8 flags
 * instead of the ones `inkwell serve` gives itself (INKWELL_SERVE_NODE_FLAGS set, so it does not re-execute; an
 * empty FLAGS is Node's defaults), measured in the same rounds. E.g. 'defaults:;semi32:--max-semi-space-size=32'.
 */
export interface NodeVariant {
  /** What its results are labelled with (`sqlite~semi32`). */
  label: string;
  nodeArgs: string[];
}

export function nodeVariantsFromArgs(args: Map<string, string>): NodeVariant[] {
  const spec = args.get('node-variants');
  if (!spec) return [];
  return spec
    .split(';')
    .filter((v) => v.trim() !== '')
    .map((v) => {
      const m = /^([\w.-]+):(.*)$/s.exec(v.trim());
      if (!m) throw new Error(`--node-variants takes NAME:FLAGS;NAME:FLAGS (got ${JSON.stringify(v)})`);
      return { label: m[1] as string, nodeArgs: (m[2] as string).split(/\s+/).filter(Boolean) };
    });
}

/** The service settings of a --node-variants entry. */
export const variantService = (v: NodeVariant) => ({ nodeArgs: v.nodeArgs, extraEnv: { INKWELL_SERVE_NODE_FLAGS: `bench:${v.label}` } });
