// `inkwell analytics import` as a user runs it: the command replaces its process by one with the import's heap
// settings (src/cli/analytics.ts), then imports; a second run of the same file adds nothing, and an import killed
// mid-file loses nothing it reported imported.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { tempDir } from '../helpers/db.ts';
import { baseEnv, ROOT, runJson } from './run-cli.ts';

it('imports a combined log once: the second run adds nothing', async () => {
  const dir = tempDir('inkwell-import-cli-');
  try {
    const env = { INKWELL_DATA_DIR: dir };
    const project = await runJson(['project', 'create', '--name', 'Docs', '--repository', 'https://github.com/acme/docs'], env);
    const log = path.join(dir, 'access.log');
    const lines = Array.from(
      { length: 50 },
      (_, n) =>
        `198.51.100.${n % 7} - - [02/Mar/2026:10:00:${String(n % 60).padStart(2, '0')} +0000] "GET /docs/p${n % 9} HTTP/1.1" 200 5 "-" "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0"`,
    );
    // Two identical lines are two requests.
    fs.writeFileSync(log, `${[...lines, lines[0]].join('\n')}\n`);
    const args = ['analytics', 'import', '--project', project.id, '--format', 'combined', log];
    const first = (await runJson(args, env)).files[0].stats;
    expect(first).toMatchObject({ lines: 51, inserted: 51, accepted: 51, unparseable: 0, rejected: 0 });
    const again = (await runJson(args, env)).files[0].stats;
    expect(again).toMatchObject({ lines: 51, inserted: 0, accepted: 51 });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('an import killed mid-file keeps every line it reported imported; importing again adds exactly the rest', async () => {
  const dir = tempDir('inkwell-import-kill-');
  try {
    const env = { INKWELL_DATA_DIR: dir };
    const project = await runJson(['project', 'create', '--name', 'Docs', '--repository', 'https://github.com/acme/docs'], env);
    const log = path.join(dir, 'access.log');
    const total = 100_000;
    const out = fs.createWriteStream(log);
    for (let n = 0; n < total; n++) {
      const t = `${String(Math.floor(n / 3600) % 24).padStart(2, '0')}:${String(Math.floor(n / 60) % 60).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}`;
      out.write(
        `203.0.113.${n % 200} - - [0${1 + Math.floor(n / 86_400)}/Mar/2026:${t} +0000] "GET /docs/p${n % 97} HTTP/1.1" 200 ${n % 5000} "-" "Mozilla/5.0 (agent ${n % 13})"\n`,
      );
    }
    await new Promise<void>((resolve) => out.end(resolve));
    const args = ['analytics', 'import', '--project', project.id, '--format', 'combined', log];
    // The first progress line comes after the first batch was acknowledged: what it counts as new is durable.
    const child = spawn(process.execPath, ['bin/inkwell.js', ...args], { cwd: ROOT, env: baseEnv(env), stdio: ['ignore', 'ignore', 'pipe'] });
    let environ: string[] | null = null;
    const reported = await new Promise<number>((resolve, reject) => {
      let err = '';
      child.stderr.on('data', (d) => {
        err += d;
        const m = /(\d+) new/.exec(err);
        if (m && Number(m[1]) > 0) {
          // Re-executed (process.execve, where there is one) with the import's environment (src/cli/analytics.ts IMPORT_ENV).
          if (process.platform === 'linux' && typeof (process as { execve?: unknown }).execve === 'function')
            environ = fs.readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
          child.kill('SIGKILL');
          resolve(Number(m[1]));
        }
      });
      child.on('close', (code) => reject(new Error(`import ended (${code}) before it was killed: ${err.slice(-500)}`)));
    });
    await new Promise((resolve) => child.once('close', resolve));
    expect(child.signalCode).toBe('SIGKILL');
    expect(reported).toBeLessThan(total);
    if (environ !== null) expect(environ).toContain('MALLOC_ARENA_MAX=2');
    const again = (await runJson(args, env)).files[0].stats;
    // Stored before this run: the lines it found already imported.
    expect(again.accepted).toBe(total);
    expect(again.accepted - again.inserted).toBeGreaterThanOrEqual(reported);
    const third = (await runJson(args, env)).files[0].stats;
    expect(third).toMatchObject({ lines: total, accepted: total, inserted: 0 });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);
