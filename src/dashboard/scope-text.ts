// The `scope` event of a job's timeline in words: what the turn reverted, what it kept with the agent's reason,
// and the changed-files budget; unrelated pages are named as such. Pure.

const str = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
const clip = (s: string, max = 240) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

export function scopeText(d: Record<string, unknown>): string {
  // An unrelated page says so: the other reasons show in the path itself (a lockfile, dist/…).
  const paths = (list: unknown) =>
    Array.isArray(list)
      ? list.map((f) => {
          const entry = f as { path?: unknown; reason?: unknown } | null;
          return `${str(entry?.path)}${entry?.reason === 'unrelated-page' ? ' (unrelated page)' : ''}`;
        })
      : [];
  const reverted = paths(d.reverted);
  const kept = paths(d.justified);
  const parts = [
    reverted.length > 0 ? `reverted ${reverted.length} out-of-scope file${reverted.length === 1 ? '' : 's'}: ${clip(reverted.join(', '))}` : '',
    kept.length > 0 ? `kept ${kept.length} with the agent's reason: ${clip(kept.join(', '))}` : '',
    d.overBudget ? `over the budget: ${str(d.changedFiles)} of ${str(d.maxChangedFiles)} files, so the pull request is a draft` : '',
  ].filter(Boolean);
  return `Scope: ${parts.join('; ')}`;
}
