// Minimal `--name value` / `--flag` argument parsing for the bench scripts (no I/O).
export function parseArgs(argv: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${JSON.stringify(a)}`);
    const eq = a.indexOf('=');
    if (eq > 0) out.set(a.slice(2, eq), a.slice(eq + 1));
    else if (i + 1 < argv.length && !(argv[i + 1] as string).startsWith('--')) out.set(a.slice(2), argv[++i] as string);
    else out.set(a.slice(2), 'true');
  }
  return out;
}

/** A positive integer option; accepts 200k / 10M / 1_000_000 forms. */
export function intArg(args: Map<string, string>, name: string): number | undefined {
  const v = args.get(name);
  if (v === undefined) return undefined;
  const m = /^(\d[\d_]*)(k|m)?$/i.exec(v.trim());
  if (!m) throw new Error(`--${name} must be a whole number such as 200000, 200k or 10M (got ${JSON.stringify(v)})`);
  const n = Number((m[1] as string).replaceAll('_', '')) * (m[2] ? (m[2].toLowerCase() === 'k' ? 1_000 : 1_000_000) : 1);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be at least 1`);
  return n;
}

export function genArgs(args: Map<string, string>): { events?: number; seed?: number; visitors?: number; paths?: number; days?: number } {
  const out: { events?: number; seed?: number; visitors?: number; paths?: number; days?: number } = {};
  for (const k of ['events', 'seed', 'visitors', 'paths', 'days'] as const) {
    const v = intArg(args, k);
    if (v !== undefined) out[k] = v;
  }
  return out;
}
