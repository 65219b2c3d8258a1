// The mirror lock: in-process queue plus a lock file shared with other processes.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withLock } from '../../src/git/lock.ts';
import { tempDir } from '../helpers/git.ts';

let dir: string;
let key: string;
beforeEach(() => {
  dir = tempDir('inkwell-lock-');
  key = path.join(dir, 'mirror');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('withLock', () => {
  it('runs holders of the same key one at a time, in order; other keys are independent', async () => {
    const log: string[] = [];
    let inside = 0;
    let maxInside = 0;
    const job = (name: string) =>
      withLock(key, async () => {
        inside++;
        maxInside = Math.max(maxInside, inside);
        log.push(`${name}:in`);
        await sleep(20);
        log.push(`${name}:out`);
        inside--;
        return name;
      });
    const other = withLock(`${key}-other`, async () => 'other');
    expect(await Promise.all([job('a'), job('b'), job('c'), other])).toEqual(['a', 'b', 'c', 'other']);
    expect(maxInside).toBe(1);
    expect(log).toEqual(['a:in', 'a:out', 'b:in', 'b:out', 'c:in', 'c:out']);
    expect(fs.existsSync(`${key}.lock`)).toBe(false);
  });

  it('waits for a lock file held by another process, and releases after a failure', async () => {
    fs.writeFileSync(`${key}.lock`, '99999\n');
    let ran = false;
    const pending = withLock(key, async () => {
      ran = true;
    });
    await sleep(150);
    expect(ran).toBe(false);
    fs.rmSync(`${key}.lock`);
    await pending;
    expect(ran).toBe(true);
    await expect(withLock(key, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(fs.existsSync(`${key}.lock`)).toBe(false);
    expect(await withLock(key, async () => 'next')).toBe('next');
  });

  it('takes over a stale lock file (a crashed holder)', async () => {
    fs.writeFileSync(`${key}.lock`, '99999\n');
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(`${key}.lock`, old, old);
    expect(await withLock(key, async () => 'mine', { staleMs: 1000 })).toBe('mine');
  });

  it('stops waiting when aborted', async () => {
    fs.writeFileSync(`${key}.lock`, '99999\n');
    const controller = new AbortController();
    const pending = withLock(key, async () => 'never', { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    // The queue is not wedged for the next caller once the file is gone.
    fs.rmSync(`${key}.lock`);
    expect(await withLock(key, async () => 'after')).toBe('after');
  });
});
