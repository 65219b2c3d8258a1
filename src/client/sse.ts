// A Server-Sent Events parser (the WHATWG event-stream format): feed it text chunks, get whole events. Pure.

export interface SseMessage {
  /** `id:` of the event ('' when none). */
  id: string;
  /** `event:` name ('message' when none). */
  event: string;
  data: string;
  /** `retry:` in ms, when the server sent one. */
  retry?: number;
}

export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private id = '';
  private retry: number | undefined;

  /** Parses a chunk; returns the events completed by it. */
  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const out: SseMessage[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (!m) break;
      // A lone \r at the very end may be the first half of \r\n: wait for more.
      if (m[0] === '\r' && m.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      const msg = this.line(line);
      if (msg) out.push(msg);
    }
    return out;
  }

  private line(line: string): SseMessage | null {
    if (line === '') {
      if (this.data.length === 0) {
        this.event = '';
        return null;
      }
      const msg: SseMessage = { id: this.id, event: this.event || 'message', data: this.data.join('\n') };
      if (this.retry !== undefined) msg.retry = this.retry;
      this.data = [];
      this.event = '';
      return msg;
    }
    if (line.startsWith(':')) return null;
    const i = line.indexOf(':');
    const field = i === -1 ? line : line.slice(0, i);
    let value = i === -1 ? '' : line.slice(i + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
    return null;
  }
}
