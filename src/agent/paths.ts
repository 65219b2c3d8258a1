// Path confinement for the agent's tools. Pure: string logic only, no file system access.
// Tool paths are relative to the repository root. Refused: empty, absolute, `..` escapes, anything
// inside `.git`, NUL bytes. Symlinks are resolved and checked at the moment of each operation by
// confined-fs.ts.
import path from 'node:path';

export type PathCheck = { ok: true; rel: string } | { ok: false; error: string };

/** Normalizes a tool path to a clean relative path ('' is the root when `allowRoot`). */
export function checkToolPath(input: unknown, opts: { allowRoot?: boolean } = {}): PathCheck {
  if (typeof input !== 'string') return { ok: false, error: 'path must be a string' };
  if (input.includes('\0')) return { ok: false, error: 'path must not contain NUL bytes' };
  const raw = input.trim().replace(/\\/g, '/');
  if (raw === '' || raw === '.' || raw === './' || raw === '/') {
    if (opts.allowRoot && raw !== '/') return { ok: true, rel: '' };
    if (raw === '/') return { ok: false, error: `absolute paths are not allowed ("${input}"); use a path relative to the repository root` };
    return { ok: false, error: 'path must name a file relative to the repository root' };
  }
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw) || raw.startsWith('~')) {
    return { ok: false, error: `absolute paths are not allowed ("${input}"); use a path relative to the repository root` };
  }
  const normalized = path.posix.normalize(raw).replace(/\/+$/, '');
  if (normalized === '..' || normalized.startsWith('../')) return { ok: false, error: `path "${input}" is outside the repository` };
  if (normalized === '.' || normalized === '') {
    return opts.allowRoot ? { ok: true, rel: '' } : { ok: false, error: 'path must name a file relative to the repository root' };
  }
  if (isGitInternal(normalized)) return { ok: false, error: `path "${input}" is inside .git, which the agent may not read or change` };
  return { ok: true, rel: normalized };
}

/** True when any component of a relative path is `.git` (case-insensitive: case-folding file systems). */
export function isGitInternal(rel: string): boolean {
  return rel.split('/').some((c) => c.toLowerCase() === '.git');
}

/** True when `target` (absolute, resolved) is `root` or inside it. */
export function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (rel.split(path.sep)[0] !== '..' && !path.isAbsolute(rel));
}
