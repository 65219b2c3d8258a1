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
const CLOCK_TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * CPU time (user + system, ms) of this process's finished children so far (Linux: cutime + cstime of
 * /proc/self/stat, in clock ticks), or null. Less sensitive than wall time to other work on the machine.
 */
function childrenCpuMs(): number | null {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_S) * 1000;
  } catch {
    return null;
  }
}
const BIN = path.join(ROOT, 'bin', 'inkwell.js');
const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 10;

execFileSync(process.execPath, [path.join(ROOT, 'bin', 'build.js'), '--quiet'], { stdio: 'inherit' });
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'inkwell-cli-bench-'));
const env: NodeJS.ProcessEnv = { ...process.env, INKWELL_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
delete env.INKWELL_FROM_SOURCE;
execFileSync(process.execPath, [BIN, 'project', 'create', '--name', 'Bench', '--repository', 'https://github.com/acme/docs'], { env, stdio: 'ignore' });

const commands: Record<string, { args: string[]; env?: NodeJS.ProcessEnv }> = {
  "node -e ''": { args: ['-e', ''] },
  'inkwell --help': { args: [BIN, '--help'] },
  'inkwell project list': { args: [BIN, 'project', 'list'] },
  'inkwell --help (sources through tsx)': { args: [BIN, '--help'], env: { ...env, INKWELL_FROM_SOURCE: '1' } },
};
const times: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
try {
  // One warm-up each (tsx's transform cache, the file system cache).
  for (const c of Object.values(commands)) spawnSync(process.execPath, c.args, { env: c.env ?? env, stdio: 'ignore' });
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, c] of Object.entries(commands)) {
      const cpuBefore = childrenCpuMs();
      const started = process.hrtime.bigint();
      const res = spawnSync(process.execPath, c.args, { env: c.env ?? env, stdio: 'ignore' });
      if (res.status !== 0) throw new Error(`${name} exited ${res.status}`);
      (times[name] as number[]).push(Number(process.hrtime.bigint() - started) / 1e6);
      const cpuAfter = childrenCpuMs();
      if (cpuBefore !== null && cpuAfter !== null) (cpu[name] as number[]).push(cpuAfter - cpuBefore);
    }
  }
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}

const node = median(times["node -e ''"] as number[]);
const rows = Object.entries(times).map(([name, ms]) => ({
  command: name,
  medianMs: Math.round(median(ms)),
  overNodeMs: Math.round(median(ms) - node),
  minMs: Math.round(Math.min(...ms)),
  cpuMedianMs: cpu[name]?.length ? Math.round(median(cpu[name] as number[])) : null,
}));
console.log(`rounds: ${ROUNDS}, node ${process.version}`);
console.table(rows);
const written = writeResults('cli-startup', {
  benchmark: 'cli-startup',
  environment: environment(),
  method: {
    rounds: ROUNDS,
    // Below 0 (e.g. `nice -n -19 npm run bench:cli`): the commands got the cores first while other work ran.
    niceness: os.getPriority(),
    notes: [
      'Each round runs every command once, in turn; medians over the rounds; one warm-up run of each first.',
      'The CLI runs from dist/ (built by bin/build.js before the rounds); the tsx row runs the same --help from the sources.',
      `cpuMedianMs: the command's CPU time (user + system, all its threads), in clock ticks of ${1000 / CLOCK_TICKS_PER_S} ms; wall time on a loaded machine includes waiting for a core.`,
    ],
  },
  results: rows,
  samplesMs: times,
  cpuSamplesMs: cpu,
});
console.log(`results: ${written.latest}`);
