// The CLI's output helpers without a process around them: when to colour, how a database is named, and the
// progress line on a stream that says it is a terminal (its width changed between draws).
import { PassThrough } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { databaseLabel } from '../../src/cli/db.ts';
import { colorsFor, wantsColor } from '../../src/cli/output.ts';
import { createProgress, MIN_LIVE_COLUMNS } from '../../src/cli/progress.ts';

const ESC = '\x1b';

/** A stream that records what is written and claims to be a terminal of `columns` columns. */
function terminal(columns: number) {
  const stream = Object.assign(new PassThrough(), { isTTY: true, columns, hasColors: () => true });
  let out = '';
  stream.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return { stream, output: () => out };
}

describe('wantsColor', () => {
  const tty = { isTTY: true, hasColors: () => true };
  const pipe = { isTTY: false };
  const cases: [string, { isTTY?: boolean; hasColors?: () => boolean }, NodeJS.ProcessEnv, boolean][] = [
    ['a terminal', tty, {}, true],
    ['a pipe', pipe, {}, false],
    ['a terminal with NO_COLOR', tty, { NO_COLOR: '1' }, false],
    ['a terminal with an empty NO_COLOR (unset, by the convention)', tty, { NO_COLOR: '' }, true],
    ['a pipe with FORCE_COLOR', pipe, { FORCE_COLOR: '1' }, true],
    ['a terminal with FORCE_COLOR=0', tty, { FORCE_COLOR: '0' }, false],
    ['NO_COLOR over FORCE_COLOR', pipe, { NO_COLOR: '1', FORCE_COLOR: '1' }, false],
    ['TERM=dumb', tty, { TERM: 'dumb' }, false],
    ['a terminal without colours', { isTTY: true, hasColors: () => false }, {}, false],
  ];
  it.each(cases)('%s', (_name, stream, env, expected) => {
    expect(wantsColor(stream, env)).toBe(expected);
    expect(colorsFor(stream, env).green('ok')).toBe(expected ? `${ESC}[32mok${ESC}[39m` : 'ok');
  });
});

describe('databaseLabel', () => {
  it('names a relative file as ./path and leaves absolute paths and URLs as they are', () => {
    expect(databaseLabel('data/inkwell.db', true)).toBe('./data/inkwell.db');
    expect(databaseLabel('./data/inkwell.db', true)).toBe('./data/inkwell.db');
    expect(databaseLabel('/srv/inkwell/inkwell.db', true)).toBe('/srv/inkwell/inkwell.db');
    expect(databaseLabel('postgres://inkwell@db:5432/inkwell', false)).toBe('postgres://inkwell@db:5432/inkwell');
  });
});

describe('createProgress', () => {
  it('on a terminal: one clipped spinner line redrawn in place, steps above it, the result last', () => {
    const t = terminal(40);
    const p = createProgress('x'.repeat(100), t.stream, {});
    p.log('step one');
    p.end('ok', 'done');
    const out = t.output();
    expect(out).toContain(`\r${ESC}[K`);
    expect(out).toContain('step one\n');
    expect(out.endsWith(`${ESC}[32m✓${ESC}[39m done\n`)).toBe(true);
    // Each drawn spinner line fits the terminal: frame, space, text clipped with an ellipsis.
    const drawn = out
      .split('\r')
      .slice(1)
      .map((segment) => stripVTControlCharacters(segment.split(`${ESC}[K`)[0] as string));
    expect(drawn.some((line) => line.endsWith('…'))).toBe(true);
    for (const line of drawn) expect([...line].length).toBeLessThanOrEqual(39);
  });

  it('a terminal narrowed below the minimum (to 0) ends the spinner at the next draw: plain lines from then on', () => {
    const t = terminal(80);
    const p = createProgress('working', t.stream, {});
    t.stream.columns = 0;
    p.log('a step');
    const before = t.output().length;
    p.log('another step');
    p.end('fail', 'failed');
    expect(t.output().slice(before)).toBe(`another step\n${ESC}[31m✗${ESC}[39m failed\n`);
  });

  it(`no spinner on a terminal under ${MIN_LIVE_COLUMNS} columns, on TERM=dumb, or on a pipe; NO_COLOR: no colours`, () => {
    for (const [columns, env] of [
      [0, {}],
      [MIN_LIVE_COLUMNS - 1, {}],
      [80, { TERM: 'dumb' }],
    ] as const) {
      const t = terminal(columns);
      const p = createProgress('working', t.stream, env);
      p.log('a step');
      p.end('warn', 'archived');
      expect(t.output()).not.toContain('\r');
      expect(t.output()).toContain('a step\n');
    }
    const piped = new PassThrough();
    let out = '';
    piped.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const p = createProgress('working', piped, {});
    p.log('a step');
    p.end('ok', 'done');
    expect(out).toBe('a step\n✓ done\n');
    const t = terminal(80);
    createProgress('working', t.stream, { NO_COLOR: '1' }).end('ok', 'done');
    expect([31, 32, 33, 36].some((c) => t.output().includes(`${ESC}[${c}m`))).toBe(false);
  });
});
