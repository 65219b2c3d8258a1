import readline from 'node:readline';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/analytics/import/line-splitter.ts';

/** Lines (as latin1 text, so every byte shows) the splitter gives for `input` fed in chunks of the given sizes. */
function split(input: Buffer, chunkSizes: number[], maxLine?: number): (string | 'TOO LONG')[] {
  const s = new LineSplitter(maxLine);
  const out: (string | 'TOO LONG')[] = [];
  const line = (b: Buffer, a: number, e: number) => out.push(b.toString('latin1', a, e));
  const tooLong = () => out.push('TOO LONG');
  let i = 0;
  let k = 0;
  while (i < input.length) {
    const n = Math.max(1, chunkSizes[k++ % chunkSizes.length] ?? input.length);
    s.push(input.subarray(i, i + n), line, tooLong);
    i += n;
  }
  s.end(line, tooLong);
  return out;
}

/** What node:readline (crlfDelay: Infinity, as the importer used) gives for the same bytes in the same chunks. */
async function readlineLines(input: Buffer, chunkSizes: number[]): Promise<string[]> {
  const chunks: Buffer[] = [];
  let i = 0;
  let k = 0;
  while (i < input.length) {
    const n = Math.max(1, chunkSizes[k++ % chunkSizes.length] ?? input.length);
    chunks.push(input.subarray(i, i + n));
    i += n;
  }
  // Decoded as latin1 so that every byte is one character (the importer decoded UTF-8; line breaks are the same).
  const input_ = new Readable({ read() {} });
  input_.setEncoding('latin1');
  for (const c of chunks) input_.push(c);
  input_.push(null);
  const rl = readline.createInterface({ input: input_, crlfDelay: Number.POSITIVE_INFINITY });
  const out: string[] = [];
  for await (const l of rl) out.push(l);
  return out;
}

describe('LineSplitter', () => {
  it('splits on LF, CRLF and a lone CR, across chunk boundaries, and keeps a last line without a break', () => {
    const input = Buffer.from('a\nb\r\nc\rd\r\n\r\ne\n\nf', 'latin1');
    for (const sizes of [[input.length], [1], [2], [3, 1], [5, 2, 7]]) expect(split(input, sizes)).toEqual(['a', 'b', 'c', 'd', '', 'e', '', 'f']);
  });

  it('a CR ending one chunk and an LF starting the next are one line break', () => {
    expect(split(Buffer.from('x\r\ny'), [2])).toEqual(['x', 'y']);
    expect(split(Buffer.from('x\r\r\ny'), [2])).toEqual(['x', '', 'y']);
  });

  it('gives nothing for an empty input, and no extra line after a final break', () => {
    expect(split(Buffer.alloc(0), [1])).toEqual([]);
    expect(split(Buffer.from('a\n'), [1])).toEqual(['a']);
    expect(split(Buffer.from('a\r\n'), [1])).toEqual(['a']);
  });

  it('reports a line longer than the limit once, without buffering it, and goes on with the next', () => {
    const long = 'x'.repeat(50);
    const input = Buffer.from(`ok\n${long}\nnext\n${long}`);
    for (const sizes of [[input.length], [7], [1]]) expect(split(input, sizes, 20)).toEqual(['ok', 'TOO LONG', 'next', 'TOO LONG']);
    expect(split(Buffer.from(`${'y'.repeat(20)}\n${'z'.repeat(21)}\n`), [4], 20)).toEqual(['y'.repeat(20), 'TOO LONG']);
  });

  it('passes bytes through as they are (invalid UTF-8, NUL, a BOM)', () => {
    const input = Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0x0a, 0xff, 0xfe, 0x00, 0x0a, 0xc3]);
    expect(split(input, [3]).map((l) => Buffer.from(l, 'latin1').toString('hex'))).toEqual(['efbbbf61', 'fffe00', 'c3']);
  });

  it('gives the lines node:readline gives, for any bytes in any chunking', async () => {
    const byte = fc.constantFrom(0x0a, 0x0d, 0x61, 0x20, 0xc3, 0xa9, 0x00);
    await fc.assert(
      fc.asyncProperty(fc.array(byte, { maxLength: 60 }), fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 }), async (bytes, sizes) => {
        const input = Buffer.from(bytes);
        expect(split(input, sizes)).toEqual(await readlineLines(input, sizes));
      }),
      { numRuns: 300 },
    );
  });
});
