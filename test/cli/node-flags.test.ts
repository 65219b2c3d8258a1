// reexecWithNodeFlags (src/cli/node-flags.ts): the process it replaces itself with, checked with process.execve
// stubbed (nothing is replaced).
import { afterEach, expect, it } from 'vitest';
import { reexecWithNodeFlags } from '../../src/cli/node-flags.ts';

type Execve = (file: string, args: string[], env: NodeJS.ProcessEnv) => never;
const proc = process as { execve?: Execve };
const original = proc.execve;
const saved = { ...process.env };

afterEach(() => {
  proc.execve = original;
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
});

function captured(run: () => void): { args: string[]; env: NodeJS.ProcessEnv } | null {
  let call: { args: string[]; env: NodeJS.ProcessEnv } | null = null;
  proc.execve = ((_file: string, args: string[], env: NodeJS.ProcessEnv) => {
    call = { args, env };
  }) as Execve;
  run();
  return call;
}

it.skipIf(process.platform === 'win32')('adds the flags, the marker and the extra environment, the operator’s values winning', () => {
  delete process.env.TEST_REEXEC_MARKER;
  delete process.env.MALLOC_ARENA_MAX;
  const call = captured(() => reexecWithNodeFlags(['--heap-growing-percent=30'], 'TEST_REEXEC_MARKER', { MALLOC_ARENA_MAX: '2' }));
  expect(call).not.toBeNull();
  expect(call?.args.slice(0, 2)).toEqual([process.execPath, '--heap-growing-percent=30']);
  expect(call?.env.TEST_REEXEC_MARKER).toBe('--heap-growing-percent=30');
  expect(call?.env.MALLOC_ARENA_MAX).toBe('2');
  expect(call?.env.PATH).toBe(process.env.PATH);

  process.env.MALLOC_ARENA_MAX = '4';
  const kept = captured(() => reexecWithNodeFlags(['--heap-growing-percent=30'], 'TEST_REEXEC_MARKER', { MALLOC_ARENA_MAX: '2' }));
  expect(kept?.env.MALLOC_ARENA_MAX).toBe('4');

  // Once re-executed (the marker set), nothing happens again.
  process.env.TEST_REEXEC_MARKER = '0';
  expect(captured(() => reexecWithNodeFlags(['--heap-growing-percent=30'], 'TEST_REEXEC_MARKER', { MALLOC_ARENA_MAX: '2' }))).toBeNull();
});
