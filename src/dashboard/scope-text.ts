// The `scope` event of a job's timeline in words: what the turn reverted, what it kept with the agent's reason,
// and the changed-files budget. Pure.

const str = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
const clip = (s: string, max = 240) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

export function scopeText(d: Record<string, unknown>): string {
  const paths = (list: unknown) => (Array.isArray(list) ? list.map((f) => str((f as { path?: unknown })?.path)) : []);
  const reverted = paths(d.reverted);
  const kept = paths(d.justified);
  const parts = [
    reverted.length > 0 ? `reverted ${reverted.length} out-of-scope file${reverted.length === 1 ? '' : 's'}: ${clip(reverted.join(', '))}` : '',
    kept.length > 0 ? `kept ${kept.length} with the agent's reason: ${clip(kept.join(', '))}` : '',
    d.overBudget ? `over the budget: ${str(d.changedFiles)} of ${str(d.maxChangedFiles)} files, so the pull request is a draft` : '',
  ].filter(Boolean);
  return `Scope: ${parts.join('; ')}`;
}
