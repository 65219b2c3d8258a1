// Generates the analytics benchmark dataset (deterministic): `npm run bench:gen -- [--events 200k] [--seed 42] [--force]`.
import fs from 'node:fs';
import { genArgs, parseArgs } from './lib/args.ts';
import { datasetFiles, ensureDataset, genOptions } from './lib/dataset.ts';

const args = parseArgs(process.argv.slice(2));
const o = genOptions(genArgs(args));
const files = datasetFiles(o);
if (args.has('force')) {
  fs.rmSync(files.csv, { force: true });
  fs.rmSync(files.meta, { force: true });
}
const { meta, csv } = ensureDataset(o, (m) => console.log(m));
console.log(csv);
console.log(JSON.stringify({ window: meta.window, counts: meta.counts, bytes: meta.bytes }, null, 2));
