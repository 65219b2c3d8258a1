// The mirror lock: in-process queue plus a lock file shared with other processes.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { holderState, parseHolder, processStart, withLock } from '../../src/git/lock.ts';
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

  describe('holders identified by pid, host, boot and start time', () => {
    const boot = () => fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const pidns = () => fs.readlinkSync('/proc/self/ns/pid');
    const holderFile = (pid: number, over: Record<string, unknown> = {}) =>
      JSON.stringify({ pid, host: os.hostname(), boot: boot(), pidns: pidns(), start: processStart(pid), token: 'theirs', ...over });

    it('writes its own identity into the lock file while held', async () => {
      const seen = await withLock(key, async () => parseHolder(fs.readFileSync(`${key}.lock`, 'utf8')));
      expect(seen).toMatchObject({ pid: process.pid, host: os.hostname(), boot: boot(), start: processStart('self') });
      expect(holderState(seen!)).toBe('alive');
    });

    it('waits while the holder process lives; takes over at once when it is killed (no staleness wait)', async () => {
      const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
      await new Promise((r) => holder.once('spawn', r));
      fs.writeFileSync(`${key}.lock`, holderFile(holder.pid!));
      let ran = false;
      // Ten minutes of staleness: only the liveness check can let the waiter in within the test's time.
      const pending = withLock(
        key,
        async () => {
          ran = true;
          return 'mine';
        },
        { staleMs: 10 * 60_000 },
      );
      await sleep(200);
      expect(ran).toBe(false);
      holder.kill('SIGKILL');
      await new Promise((r) => holder.once('exit', r));
      expect(await pending).toBe('mine');
      expect(fs.existsSync(`${key}.lock`)).toBe(false);
      expect(fs.existsSync(`${key}.lock.takeover`)).toBe(false);
    });

    it('a reused pid (another start time) or another boot is a dead holder', () => {
      expect(holderState(parseHolder(holderFile(process.pid, { start: '1' }))!)).toBe('dead');
      expect(holderState(parseHolder(holderFile(process.pid, { boot: 'another-boot' }))!)).toBe('dead');
      expect(holderState(parseHolder(holderFile(2 ** 22 + 7))!)).toBe('dead');
      expect(holderState(parseHolder(holderFile(process.pid))!)).toBe('alive');
    });

    it('a holder on another host (or pid namespace) is judged by its heartbeat only', async () => {
      const remote = holderFile(process.pid, { host: 'another-host' });
      expect(holderState(parseHolder(remote)!)).toBe('unknown');
      expect(holderState(parseHolder(holderFile(process.pid, { pidns: 'pid:[1]' }))!)).toBe('unknown');
      fs.writeFileSync(`${key}.lock`, remote);
      let ran = false;
      const pending = withLock(
        key,
        async () => {
          ran = true;
        },
        { staleMs: 60_000 },
      );
      await sleep(150);
      expect(ran).toBe(false);
      // Its heartbeat stops: the file's mtime falls behind by more than staleMs.
      const old = new Date(Date.now() - 120_000);
      fs.utimesSync(`${key}.lock`, old, old);
      await pending;
      expect(ran).toBe(true);
    });

    it('releasing never removes a lock another holder took over meanwhile', async () => {
      await withLock(key, async () => {
        fs.writeFileSync(`${key}.lock`, holderFile(process.pid, { token: 'new-holder' }));
      });
      expect(parseHolder(fs.readFileSync(`${key}.lock`, 'utf8'))?.token).toBe('new-holder');
    });
  });
});
