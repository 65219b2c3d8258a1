// Cross-checks the generator's ground truth against Inkwell's own pure analytics functions (normalisation,
// classification, qualifying views): `npx tsx bench/check-dataset.ts [--events 200k]`. Exits 1 on any mismatch.
import { classify } from '../src/analytics/classify/classify.ts';
import { normalizePath } from '../src/analytics/classify/normalize.ts';
import { isQualifyingView } from '../src/analytics/classify/qualify.ts';
import { genArgs, parseArgs } from './lib/args.ts';
import { ensureDataset, genOptions, readEvents } from './lib/dataset.ts';

const args = parseArgs(process.argv.slice(2));
const { meta, csv } = ensureDataset(genOptions(genArgs(args)), console.log);
const mismatches = new Map<string, { count: number; example: string }>();
const note = (kind: string, example: string) => {
  const m = mismatches.get(kind);
  if (m) m.count++;
  else mismatches.set(kind, { count: 1, example });
};
let n = 0;
for await (const e of readEvents(csv)) {
  n++;
  const ua = meta.userAgents[e.ua] as string;
  const accept = e.acceptMd ? meta.acceptMarkdown : null;
  const path = normalizePath(e.raw);
  if (path !== e.path) note('path', `${e.raw} → ${path} (expected ${e.path})`);
  const c = classify({ userAgent: ua, path: e.raw, accept });
  if (c.class !== e.cls) note(`class ${e.cls}→${c.class}`, `${e.raw} ${ua} accept=${accept ?? ''} rule=${c.rule}`);
  const q = isQualifyingView({ method: e.method, status: e.status, path: path ?? e.raw, class: c.class });
  if (q !== e.q) note(`qualifying ${e.q}→${q}`, `${e.method} ${e.status} ${e.raw} ${c.class}`);
}
console.log(`${n.toLocaleString('en')} events checked against src/analytics`);
for (const [kind, m] of mismatches) console.log(`MISMATCH ${kind}: ${m.count} (e.g. ${m.example})`);
if (mismatches.size > 0) process.exit(1);
console.log('ground truth agrees with Inkwell normalisation, classification and qualifying rules');
