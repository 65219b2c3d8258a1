// `inkwell analytics import` as a user runs it: the command replaces its process by one with the import's heap
// settings (src/cli/analytics.ts), then imports; a second run of the same file adds nothing.
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { tempDir } from '../helpers/db.ts';
import { runJson } from './run-cli.ts';

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
