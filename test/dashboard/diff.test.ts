// The dashboard's reading of a unified diff (src/dashboard/diff.ts) on what git itself writes: files in order,
// hunk lines by kind (a removed line that starts with "--" is a removed line, not a header), the "no newline"
// marker, renames and binary files; and the highlighter's language by extension.
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { parseDiff } from '../../src/dashboard/diff.ts';
import { highlightLine, languageOf } from '../../src/dashboard/highlight.ts';
import { gitSync, tempDir } from '../helpers/git.ts';

it('cuts what git diff writes into files and lines', () => {
  const dir = tempDir('inkwell-diff-view-');
  try {
    const write = (file: string, content: string | Buffer) => {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), content);
    };
    gitSync(['init', '-q', '-b', 'main'], dir);
    write('docs/a.md', '# A\n\n-- a dash line\nkept\n');
    write('docs/old.md', 'moved as is\n'.repeat(5));
    write('img/x.bin', Buffer.from([0, 1, 2, 3]));
    gitSync(['add', '-A'], dir);
    gitSync(['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'base'], dir);
    write('docs/a.md', '# A\n\nkept\nno newline at the end');
    gitSync(['mv', 'docs/old.md', 'docs/new.md'], dir);
    write('img/x.bin', Buffer.from([0, 9, 9, 3]));
    gitSync(['add', '-A'], dir);
    const text = gitSync(['diff', '--cached', '-M', '--no-ext-diff', '--no-textconv'], dir);

    const files = parseDiff(text);
    expect(files.map((f) => f.path)).toEqual(['docs/a.md', 'docs/new.md', 'img/x.bin']);
    const a = files[0]!.lines.filter((l) => l.kind !== 'meta' && l.kind !== 'hunk');
    expect(a).toEqual([
      { kind: 'ctx', text: '# A' },
      { kind: 'ctx', text: '' },
      { kind: 'del', text: '-- a dash line' },
      { kind: 'ctx', text: 'kept' },
      { kind: 'add', text: 'no newline at the end' },
    ]);
    expect(files[0]!.lines.at(-1)).toEqual({ kind: 'meta', text: '\\ No newline at end of file' });
    expect(files[1]!.lines.every((l) => l.kind === 'meta')).toBe(true);
    expect(files[2]!.lines.map((l) => l.text)).toContain('Binary files a/img/x.bin and b/img/x.bin differ');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('highlights by extension, with the text escaped', () => {
  expect(['a.md', 'b.MDX', 'c.yml', 'd.json', 'e.ts', 'f.sh', 'g.patch', 'h.png', 'Makefile'].map(languageOf)).toEqual([
    'markdown',
    'markdown',
    'yaml',
    'json',
    'typescript',
    'bash',
    'diff',
    undefined,
    undefined,
  ]);
  const html = highlightLine('# Title <img src=x onerror=alert(1)>', 'markdown');
  expect(html).toContain('class="hljs-section"');
  expect(html).not.toContain('<img');
  expect(html).toContain('&lt;img');
});
