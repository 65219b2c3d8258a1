import { describe, expect, it } from 'vitest';
import { SseParser } from '../../src/client/sse.ts';

describe('SSE parser', () => {
  it('parses events split across arbitrary chunk boundaries, with every line ending', () => {
    const text =
      'retry: 1000\n\n: heartbeat\n\nid: 1\nevent: status\ndata: {"a":1}\n\nid: 2\r\nevent: tool_call\r\ndata: line1\r\ndata: line2\r\n\r\nid:3\rdata:x\r\r: end\n';
    for (const size of [1, 2, 3, 7, text.length]) {
      const p = new SseParser();
      const out = [];
      for (let i = 0; i < text.length; i += size) out.push(...p.push(text.slice(i, i + size)));
      expect(out.map((m) => [m.id, m.event, m.data])).toEqual([
        ['1', 'status', '{"a":1}'],
        ['2', 'tool_call', 'line1\nline2'],
        ['3', 'message', 'x'],
      ]);
      expect(out[0]!.retry).toBe(1000);
    }
  });

  it('keeps the last id for events without one and ignores unknown fields', () => {
    const p = new SseParser();
    const out = p.push('id: 5\ndata: a\n\nfoo: bar\ndata: b\n\n');
    expect(out.map((m) => [m.id, m.data])).toEqual([
      ['5', 'a'],
      ['5', 'b'],
    ]);
  });
});
