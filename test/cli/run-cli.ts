// Runs `node bin/inkwell.js …` as a real child process.
import { spawn } from 'node:child_process';
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
