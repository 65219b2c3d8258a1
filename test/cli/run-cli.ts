// Runs `node bin/inkwell.js …` as a real child process: with pipes, or on a pseudo-terminal.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A minimal environment: nothing from the developer's shell leaks into the child's configuration. */
export function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...extra };
}

export function runCli(args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/inkwell.js', ...args], { cwd: ROOT, env: baseEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a command that must succeed with --json and returns the one JSON object it printed. */
export async function runJson(args: string[], env: Record<string, string>): Promise<any> {
  const r = await runCli([...args, '--json'], env);
  if (r.code !== 0) throw new Error(`inkwell ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  const value = JSON.parse(r.stdout);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`expected one JSON object, got ${r.stdout}`);
  return value;
}

export interface TerminalRun {
  /** Everything the command wrote to the terminal (stdout and stderr together, as a terminal shows them). */
  output(): string;
  /** The process id of the CLI inside the terminal (null until it started). */
  cliPid(): number | null;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL for the CLI and the terminal (cleanup). */
  kill(): void;
}

/**
 * Runs `node bin/inkwell.js …` on a real pseudo-terminal of `columns` columns (util-linux `script`; a size of
 * 0 is what a terminal reports before anyone set its size). Output beyond `maxBytes` is dropped, and the
 * terminal is killed, so a command that loops on its output cannot fill memory.
 */
export function runInTerminal(args: string[], env: Record<string, string>, columns: number, maxBytes = 1 << 20): TerminalRun {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = `stty cols ${columns} rows 24 && exec ${[process.execPath, 'bin/inkwell.js', ...args].map(quote).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, env: baseEnv(env), stdio: ['ignore', 'pipe', 'inherit'] });
  // `script` starts the shell that execs the CLI: its only child.
  const cliPid = () => {
    try {
      const pid = Number(fs.readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/)[0]);
      return pid > 0 ? pid : null;
    } catch {
      return null;
    }
  };
  const kill = () => {
    const pid = cliPid();
    if (pid) process.kill(pid, 'SIGKILL');
    child.kill('SIGKILL');
  };
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    if (out.length < maxBytes) out += d.toString('utf8');
    else kill();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { output: () => out, cliPid, exited, kill };
}
