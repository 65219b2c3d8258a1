import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeVersionProblem } from '../../bin/node-version.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/inkwell.js');

describe('the Node.js version check of bin/inkwell.js', () => {
  it('accepts 22.15 and later, refuses older with the version it needs', () => {
    for (const ok of ['22.15.0', 'v22.15.1', '22.20.0', '23.0.0', '24.21.0', '26.1.0']) expect(nodeVersionProblem(ok)).toBeNull();
    for (const old of ['22.14.9', 'v20.20.2', '18.0.0', '']) expect(nodeVersionProblem(old)).toContain('needs Node.js 22.15 or later');
    expect(nodeVersionProblem('v20.20.2')).toContain('this is v20.20.2');
  });

  // The machine's own Node.js, where it is older than the one running the tests (CI installs Node 24 beside it).
  const system = '/usr/bin/node';
  const systemVersion = fs.existsSync(system) ? execFileSync(system, ['-p', 'process.versions.node']).toString().trim() : null;
  it.skipIf(systemVersion === null || nodeVersionProblem(systemVersion) === null)('an older Node.js exits 1 at once with that message', () => {
    const r = spawnSync(system, [BIN, '--help'], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('inkwell needs Node.js 22.15 or later');
    expect(r.stdout).toBe('');
  });
});
