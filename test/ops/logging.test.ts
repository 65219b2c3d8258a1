// Logs: JSON lines, keys/tokens/Authorization never printed, whatever path they take into a log call.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { generateKey } from '../../src/lib/ids.ts';
import { createLazyLogger, createLogger, scrubSecrets } from '../../src/lib/logger.ts';
import { startTestApp } from '../helpers/app.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { stream, lines, text: () => lines.join('\n') };
}

describe('scrubSecrets', () => {
  const admin = generateKey('admin');
  const ingest = generateKey('ingest');
  const cases: [string, string][] = [
    [`key ${admin} here`, 'key ink_[redacted] here'],
    [`pub ${ingest}.`, 'pub ink_pub_[redacted].'],
    ['Authorization: Bearer abc.def-ghi', 'Authorization: Bearer [redacted]'],
    ['authorization: bearer xyz', 'authorization: bearer [redacted]'],
    [`token ghp_${'a'.repeat(36)} end`, 'token [redacted] end'],
    [`github_pat_${'B'.repeat(30)}`, '[redacted]'],
    [`glpat-${'c'.repeat(20)}`, '[redacted]'],
    [`sk-ant-api03-${'d'.repeat(30)}`, '[redacted]'],
    ['fetch https://x-access-token:s3cr3t@github.com/acme/docs.git failed', 'fetch https://x-access-token:[redacted]@github.com/acme/docs.git failed'],
    ['postgres://inkwell:pa55@db:5432/inkwell', 'postgres://inkwell:[redacted]@db:5432/inkwell'],
  ];
  for (const [input, output] of cases) {
    it(`scrubs ${output}`, () => {
      expect(scrubSecrets(input)).toBe(output);
    });
  }
  it('leaves ordinary text, ids and short prefixes alone', () => {
    const text = 'job job_abc123 for prj_XYZ by key key_q7fNAknISCih (prefix ink_AbCd) at https://github.com/acme/docs';
    expect(scrubSecrets(text)).toBe(text);
  });
});

describe('createLogger', () => {
  it('writes JSON lines and redacts secrets in fields, nested headers, errors and messages', () => {
    const out = capture();
    const key = generateKey('admin');
    const log = createLogger({ logLevel: 'debug', logPretty: false }, out.stream);
    log.info({ authorization: `Bearer ${key}` }, 'a');
    log.info({ req: { headers: { authorization: `Bearer ${key}`, cookie: `s=${key}` } } }, 'b');
    log.info({ headers: { authorization: `Bearer ${key}` } }, 'c');
    log.info({ key, token: 'tok', secret: 'sec', password: 'pw', apiKey: 'ak', nested: { key, token: 't2' } }, 'd');
    log.error({ err: new Error(`auth failed for ${key} via postgres://u:pw@db/x`) }, 'e');
    log.warn(`message with ${key} in it`);
    log.debug('fmt %s', `Bearer ${key}`);
    const text = out.text();
    expect(out.lines).toHaveLength(7);
    for (const line of out.lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(text).not.toContain(key);
    expect(text).not.toContain(key.slice(4));
    expect(text).not.toMatch(/"(tok|sec|pw|ak|t2)"/);
    expect(text).not.toContain(':pw@');
    const err = JSON.parse(out.lines[4] as string);
    expect(err.err.message).toBe('auth failed for ink_[redacted] via postgres://u:[redacted]@db/x');
    expect(JSON.parse(out.lines[0] as string).authorization).toBe('[redacted]');
  });

  it('respects the level', () => {
    const out = capture();
    const log = createLogger({ logLevel: 'warn', logPretty: false }, out.stream);
    log.info('hidden');
    log.warn('shown');
    expect(out.lines.map((l) => JSON.parse(l).msg)).toEqual(['shown']);
  });
});

describe('createLazyLogger', () => {
  it('makes the logger on first use only, then forwards calls, children, level reads and writes to it', () => {
    const out = capture();
    let made = 0;
    const log = createLazyLogger(() => {
      made++;
      return createLogger({ logLevel: 'info', logPretty: false }, out.stream);
    });
    expect(made).toBe(0);
    log.info({ key: generateKey('admin') }, 'first');
    log.child({ job: 'job_1' }).warn('from a child');
    expect(log.level).toBe('info');
    log.level = 'error';
    log.warn('hidden now');
    expect(made).toBe(1);
    const lines = out.lines.map((l) => JSON.parse(l));
    expect(lines.map((l) => l.msg)).toEqual(['first', 'from a child']);
    expect(lines[0].key).toBe('[redacted]');
    expect(lines[1].job).toBe('job_1');
  });
});

describe('HTTP request logs', () => {
  it('never contain the key of a request, even at debug level and on a 500', async () => {
    const out = capture();
    const t = await startTestApp(
      'sqlite',
      { logLevel: 'debug' },
      {},
      {
        logDestination: out.stream,
        routes: async (app) => {
          app.get('/test/fail', async (request) => {
            throw new Error(`downstream refused ${request.headers.authorization}`);
          });
        },
      },
    );
    try {
      const s = await t.seed();
      await t.request('GET', `/v1/projects/${s.project.id}`, { key: s.adminKey, headers: { 'x-custom': s.ingestKey } });
      await t.request('GET', `/v1/projects/${s.project.id}?key=${s.adminKey}`, { key: s.ingestKey });
      const failed = await t.request('GET', '/test/fail', { key: s.adminKey });
      expect(failed.status).toBe(500);
      const text = out.text();
      expect(out.lines.length).toBeGreaterThanOrEqual(4);
      for (const l of out.lines) expect(() => JSON.parse(l)).not.toThrow();
      expect(text).toContain('unhandled error');
      expect(text).toContain(failed.body.requestId);
      for (const secret of [s.adminKey, s.ingestKey, s.adminKey.slice(4), s.ingestKey.slice(8)]) expect(text).not.toContain(secret);
    } finally {
      await t.close();
    }
  });
});
