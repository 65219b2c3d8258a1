// A real HTTP webhook receiver on 127.0.0.1 that records every request and answers from a script.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Status codes to answer with, in order; the last one repeats. 'hang' never answers. */
  script: (number | 'hang')[];
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(script: (number | 'hang')[] = [200]): Promise<Receiver> {
  const received: Received[] = [];
  const r: Partial<Receiver> = { received, script };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const s = r.script as (number | 'hang')[];
      const answer = s[Math.min(received.length - 1, s.length - 1)] ?? 200;
      if (answer === 'hang') return;
      res.writeHead(answer, { 'content-type': 'text/plain' });
      res.end(answer >= 300 ? `receiver says no (${answer})` : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  r.url = `http://127.0.0.1:${port}/hooks/inkwell?x=1`;
  r.waitFor = async (count, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    while (received.length < count) {
      if (Date.now() > deadline) throw new Error(`receiver got ${received.length} requests, expected ${count}`);
      await new Promise((res) => setTimeout(res, 10));
    }
  };
  r.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return r as Receiver;
}

/** Polls until `fn` returns a truthy value. The time limit is a safety net for a hang, not a speed check. */
export async function eventually<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((res) => setTimeout(res, 15));
  }
}
