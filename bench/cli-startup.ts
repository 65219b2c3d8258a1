// CLI start-up: `inkwell --help` and `inkwell project list` (on a small embedded database) against `node -e ''`,
// measured in the same rounds (the commands interleaved, so load on the machine hits all alike). Prints the
// medians and writes bench/results/cli-startup-latest.json and a line in history.jsonl. `npm run bench:cli -- --rounds 15`.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { environment, writeResults } from './lib/results.ts';
import { median } from './lib/stats.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin', 'inkwell.js');
const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 10;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'inkwell-cli-bench-'));
const env = { ...process.env, INKWELL_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
execFileSync(process.execPath, [BIN, 'project', 'create', '--name', 'Bench', '--repository', 'https://github.com/acme/docs'], { env, stdio: 'ignore' });

const commands: Record<string, string[]> = {
  "node -e ''": ['-e', ''],
  'inkwell --help': [BIN, '--help'],
  'inkwell project list': [BIN, 'project', 'list'],
};
const times: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
try {
  // One warm-up each (tsx's transform cache, the file system cache).
  for (const args of Object.values(commands)) spawnSync(process.execPath, args, { env, stdio: 'ignore' });
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, args] of Object.entries(commands)) {
      const started = process.hrtime.bigint();
      const res = spawnSync(process.execPath, args, { env, stdio: 'ignore' });
      if (res.status !== 0) throw new Error(`${name} exited ${res.status}`);
      (times[name] as number[]).push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}

const node = median(times["node -e ''"] as number[]);
const rows = Object.entries(times).map(([name, ms]) => ({ command: name, medianMs: Math.round(median(ms)), overNodeMs: Math.round(median(ms) - node) }));
console.log(`rounds: ${ROUNDS}, node ${process.version}`);
console.table(rows);
const written = writeResults('cli-startup', {
  benchmark: 'cli-startup',
  environment: environment(),
  method: { rounds: ROUNDS, notes: ['Each round runs every command once, in turn; medians over the rounds; one warm-up run of each first.'] },
  results: rows,
  samplesMs: times,
});
console.log(`results: ${written.latest}`);
