// Security issue 13, "no 500 from input, on either database": lone UTF-16 surrogates and NUL in text fields,
// numbers beyond what a column holds, and a Last-Event-ID / `after` beyond the last event (JSON and SSE).
// Each case was a 500 (or a stream that ended at once) on SQLite, PostgreSQL or both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_EVENT_SEQ, parseSeq } from '../../src/jobs/events.ts';
import { textProblem } from '../../src/lib/text.ts';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { JOBS_TEST_ENV, WAIT_LIMIT_MS } from '../helpers/jobs.ts';

const JSON_CT = { 'content-type': 'application/json' };
const HIGH = '\\ud800'; // JSON escapes: the parsed string holds the lone surrogate itself
const LOW = '\\udfff';

describe('text and seq rules (pure)', () => {
  it('textProblem: NUL and lone surrogates (high or low) are refused; pairs and other text are fine', () => {
    expect(textProblem('plain text, emoji 😀, ünïcödé')).toBeNull();
    expect(textProblem('\ud83d\ude00')).toBeNull();
    expect(textProblem('')).toBeNull();
    expect(textProblem('a\u0000b')).toMatch(/NUL/);
    expect(textProblem('\ud800')).toMatch(/lone UTF-16 surrogate/);
    expect(textProblem('x\udfff')).toMatch(/lone UTF-16 surrogate/);
    expect(textProblem('\ude00\ud83d')).toMatch(/lone UTF-16 surrogate/);
  });

  it('parseSeq: digits of any length, clamped to the seq column; anything else is null', () => {
    expect(parseSeq('7')).toBe(7);
    expect(parseSeq(String(MAX_EVENT_SEQ))).toBe(MAX_EVENT_SEQ);
    expect(parseSeq('2147483648')).toBe(MAX_EVENT_SEQ);
    expect(parseSeq('9'.repeat(400))).toBe(MAX_EVENT_SEQ);
    for (const bad of ['', ' ', '-1', '1.5', '1e3', 'abc', '0x10', '\u0000']) expect(parseSeq(bad), JSON.stringify(bad)).toBeNull();
  });
});

describeEachDialect('hostile input', (dialect) => {
  let t: TestApp;
  let s: Seeded;
  let jobId: string;
  const jobPath = () => `/v2/agent/${s.project.id}/job/${jobId}`;
  beforeAll(async () => {
    t = await startTestApp(dialect, {}, JOBS_TEST_ENV);
    s = await t.seed();
    const job = await t.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.adminKey, body: { prompt: 'first' } });
    expect(job.status).toBe(201);
    jobId = job.body.id;
  });
  afterAll(async () => t?.close());

  // An ingest-secret key: a trusted sender, which may set visitorId and timestamp (a public key may not).
  const ingest = (events: string[], key = s.ingestSecretKey) =>
    t.request('POST', `/v1/analytics/${s.project.id}/events`, { key, raw: `{"events":[${events.join(',')}]}`, headers: JSON_CT });
  const collect = (events: string[], key = s.ingestKey) =>
    t.request('POST', '/v1/collect', { raw: `{"projectId":"${s.project.id}","key":"${key}","events":[${events.join(',')}]}`, headers: JSON_CT });

  it('1. a lone surrogate in visitorId (high or low) is a per-event rejection naming the field, not a 500', async () => {
    for (const bad of [HIGH, LOW, `a${HIGH}b`]) {
      // Twice in one batch (the same unstorable visitor twice was what broke the writer), plus a good event.
      const events = [`{"path":"/a","visitorId":"${bad}"}`, `{"path":"/a","visitorId":"${bad}"}`, '{"path":"/ok","visitorId":"v1"}'];
      for (const r of [await ingest(events), await ingest(events, s.adminKey), await collect(events, s.ingestSecretKey)]) {
        expect(r.status, bad).toBe(202);
        expect(r.body.accepted).toBe(1);
        expect(r.body.rejected).toEqual([
          { index: 0, error: expect.stringMatching(/^visitorId must be well-formed Unicode/) },
          { index: 1, error: expect.stringMatching(/^visitorId must be well-formed Unicode/) },
        ]);
      }
      // A public ingest key may not set visitorId at all: a 400 naming the field, whatever its value.
      for (const r of [await ingest(events, s.ingestKey), await collect(events)]) {
        expect(r.status, bad).toBe(400);
        expect(r.body.details[0].path).toBe('events.0.visitorId');
      }
    }
  });

  it('1. every stored event text field refuses lone surrogates and NUL, through the API and /v1/collect', async () => {
    for (const field of ['path', 'url', 'referrer', 'userAgent', 'accept', 'ip', 'visitorId']) {
      for (const bad of [HIGH, LOW, '\\u0000']) {
        const value = field === 'url' ? `https://x.test/p${bad}` : field === 'path' ? `/p${bad}` : `v${bad}`;
        const event = field === 'path' || field === 'url' ? `{"${field}":"${value}"}` : `{"path":"/a","${field}":"${value}"}`;
        const r = await ingest([event]);
        expect(r.status, `${field} ${bad}`).toBe(202);
        expect(r.body.rejected, `${field} ${bad}`).toEqual([{ index: 0, error: expect.stringMatching(new RegExp(`^${field} must`)) }]);
      }
    }
    for (const bad of [HIGH, LOW, '\\u0000']) {
      const r = await collect([`{"path":"/p${bad}"}`, `{"path":"/ok","referrer":"r${bad}"}`, '{"path":"/fine"}']);
      expect(r.status, bad).toBe(202);
      expect(r.body.accepted).toBe(1);
      expect(r.body.rejected.map((x: { index: number }) => x.index)).toEqual([0, 1]);
    }
    // The request-level fields of /v1/collect are checked by the validation layer: a 400 naming the field.
    const r = await t.request('POST', '/v1/collect', { raw: `{"projectId":"p${HIGH}","key":"${s.ingestKey}","events":[{"path":"/"}]}`, headers: JSON_CT });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_request');
    expect(r.body.details[0].path).toBe('projectId');
    // The exports still read (the good events only: nothing unstorable got in).
    const views = await t.request('GET', `/v1/analytics/${s.project.id}/views`, { key: s.adminKey });
    expect(views.status).toBe(200);
    expect(views.body.views.map((v: { path: string }) => v.path)).toEqual(['/ok']);
  });

  it('2. NUL or a lone surrogate in a job prompt (create and message) and other job fields → 400 naming the field', async () => {
    const cases: [string, string, string][] = [
      ['POST', '/job', `{"prompt":"a\\u0000b"}`],
      ['POST', '/job', `{"prompt":"a${HIGH}"}`],
      ['POST', '/job', `{"prompt":"ok","branch":"b\\u0000"}`],
      ['POST', '/job', `{"prompt":"ok","source":{"repository":"https://github.com/acme/d${LOW}"}}`],
      ['POST', '/job', `{"prompt":"ok","model":"openai-compatible/m\\u0000"}`],
    ];
    const fields = ['prompt', 'prompt', 'branch', 'source.repository', 'model'];
    for (const [i, [method, suffix, raw]] of cases.entries()) {
      const r = await t.request(method, `/v2/agent/${s.project.id}${suffix}`, { key: s.adminKey, raw, headers: JSON_CT });
      expect(r.status, raw).toBe(400);
      expect(r.body.code, raw).toBe('invalid_request');
      expect(r.body.details[0].path, raw).toBe(fields[i]);
      expect(r.body.error, raw).toMatch(/NUL|well-formed Unicode/);
    }
    for (const bad of ['\\u0000', HIGH, LOW]) {
      const r = await t.request('POST', `${jobPath()}/message`, { key: s.adminKey, raw: `{"prompt":"more${bad}"}`, headers: JSON_CT });
      expect(r.status, bad).toBe(400);
      expect(r.body.details[0].path).toBe('prompt');
    }
    // The same request with an Idempotency-Key: still a 400 (the key is never stored), and a control
    // character in the key itself is a 400 naming the header.
    const withKey = await t.request('POST', `${jobPath()}/message`, {
      key: s.adminKey,
      raw: '{"prompt":"x\\u0000"}',
      headers: { ...JSON_CT, 'idempotency-key': 'k1' },
    });
    expect(withKey.status).toBe(400);
    const badKey = await t.request('POST', `${jobPath()}/message`, { key: s.adminKey, body: { prompt: 'x' }, headers: { 'idempotency-key': 'a\tb' } });
    expect(badKey.status).toBe(400);
    expect(badKey.body.details[0].path).toBe('Idempotency-Key');
    // Nothing of the refused requests was stored: the job has its two creation events only.
    const events = await t.request('GET', `${jobPath()}/events`, { key: s.adminKey });
    expect(events.body.events.map((e: { type: string }) => e.type)).toEqual(['status', 'user_message']);
  });

  it('3. `after` and Last-Event-ID beyond the seq column → 200 with no events; negative or non-integer → 400', async () => {
    for (const after of ['2147483647', '2147483648', '4294967296', String(2 ** 53), '9007199254740993', '1e308', '1e400', '9'.repeat(400)]) {
      const r = await t.request('GET', `${jobPath()}/events?after=${after}`, { key: s.adminKey });
      expect(r.status, after.slice(0, 20)).toBe(200);
      expect(r.body).toEqual({ events: [], hasMore: false });
    }
    for (const after of ['-1', '1.5', 'abc', '', '-1e400']) {
      const r = await t.request('GET', `${jobPath()}/events?after=${after}`, { key: s.adminKey });
      expect(r.status, after).toBe(400);
      expect(r.body.details[0].path).toBe('after');
    }
    for (const id of ['2147483648', '999999999999999', '9'.repeat(1000)]) {
      const r = await t.request('GET', `${jobPath()}/events`, { key: s.adminKey, headers: { 'last-event-id': id } });
      expect(r.status, id.slice(0, 20)).toBe(200);
      expect(r.body).toEqual({ events: [], hasMore: false });
    }
    const bad = await t.request('GET', `${jobPath()}/events`, { key: s.adminKey, headers: { 'last-event-id': '12abc' } });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toBe('Last-Event-ID');
    // An empty Last-Event-ID counts as absent.
    const empty = await t.request('GET', `${jobPath()}/events`, { key: s.adminKey, headers: { 'last-event-id': '' } });
    expect(empty.status).toBe(200);
    expect(empty.body.events.length).toBeGreaterThan(0);
  });

  it('3. other numeric and date parameters at their bounds: 200 or 400, never 500', async () => {
    const urls = [
      `/v2/agent/${s.project.id}/jobs?limit=2147483648`,
      `/v2/agent/${s.project.id}/jobs?limit=1e308`,
      `/v2/agent/${s.project.id}/jobs?cursor=${Buffer.from(`${'9'.repeat(16)}.job_x`).toString('base64url')}`,
      `/v1/analytics/${s.project.id}/views?offset=999999999999999`,
      `/v1/analytics/${s.project.id}/views?offset=9007199254740993`,
      `/v1/analytics/${s.project.id}/views?limit=2147483648`,
      `/v1/analytics/${s.project.id}/visitors?dateFrom=0000-01-01&dateTo=9999-12-31`,
      `/v1/analytics/${s.project.id}/visitors?dateFrom=9999-12-31T23:59:59.999999999-23:59`,
      `/v1/analytics/${s.project.id}/visitors?dateFrom=99999-01-01`,
    ];
    for (const url of urls) {
      const r = await t.request('GET', url, { key: s.adminKey });
      expect([200, 400], url).toContain(r.status);
    }
    // Event numbers at and beyond their bounds are per-event rejections.
    const r = await ingest([
      '{"path":"/a","status":2147483648}',
      '{"path":"/a","status":1e308}',
      '{"path":"/a","timestamp":"9999-12-31T23:59:59Z"}',
      '{"path":"/a","timestamp":"0000-01-01"}',
    ]);
    expect(r.status).toBe(202);
    expect(r.body.rejected.map((x: { index: number }) => x.index)).toEqual([0, 1, 2, 3]);
  });

  /** Opens the SSE stream; `next(ms)` resolves with the text read within ms ('' when none), or null at the end. */
  async function openStream(query: string, headers: Record<string, string>) {
    const abort = new AbortController();
    const res = await fetch(`${t.baseUrl}${jobPath()}/events${query}`, {
      headers: { authorization: `Bearer ${s.adminKey}`, accept: 'text/event-stream', ...headers },
      signal: abort.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let pending: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
    return {
      res,
      async next(ms: number): Promise<string | null> {
        pending ??= reader.read();
        const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms));
        const r = await Promise.race([pending, timeout]);
        if (r === 'timeout') return '';
        pending = null;
        return r.done ? null : decoder.decode(r.value);
      },
      /** Reads until `pattern` appears (or the deadline passes); null when the stream ended first. */
      async until(pattern: RegExp, ms: number): Promise<string | null> {
        let text = '';
        const deadline = Date.now() + ms;
        while (Date.now() < deadline && !pattern.test(text)) {
          const chunk = await this.next(deadline - Date.now());
          if (chunk === null) return null;
          text += chunk;
        }
        return text;
      },
      close: () => abort.abort(),
    };
  }

  it('4. SSE with a Last-Event-ID beyond the last event stays open, then delivers the next event appended', async () => {
    for (const [query, headers] of [
      ['', { 'last-event-id': '999999999999999' }],
      ['?after=2147483648', {}],
      ['', { 'last-event-id': '9'.repeat(500) }],
    ] as [string, Record<string, string>][]) {
      const before = await lastSeq();
      const stream = await openStream(query, headers);
      try {
        expect(stream.res.status).toBe(200);
        expect(stream.res.headers.get('content-type')).toMatch(/text\/event-stream/);
        // Open, and quiet: no event is replayed and the stream does not end (it did at once on PostgreSQL).
        const quiet = await stream.until(/id: /, 600);
        expect(quiet, 'the stream ended at once').not.toBeNull();
        expect(quiet).not.toMatch(/id: /);
        // A new event (a follow-up message) arrives on the open stream with the next seq.
        const sent = await t.request('POST', `${jobPath()}/message`, { key: s.adminKey, body: { prompt: `next ${query || 'id'}` } });
        expect(sent.status).toBe(200);
        expect(await lastSeq()).toBe(before + 1);
        const next = await stream.until(new RegExp(`id: ${before + 1}\n`), WAIT_LIMIT_MS);
        expect(next).toMatch(new RegExp(`id: ${before + 1}\nevent: user_message\n`));
        expect(next).not.toMatch(new RegExp(`id: ${before}\n`));
      } finally {
        stream.close();
      }
    }
  });

  async function lastSeq(): Promise<number> {
    const events = (await t.request('GET', `${jobPath()}/events`, { key: s.adminKey })).body.events as { seq: number }[];
    return events.at(-1)?.seq ?? 0;
  }

  it('4. HEAD on the live stream answers its headers and ends (it held the connection forever; found by the fuzz)', async () => {
    const res = await fetch(`${t.baseUrl}${jobPath()}/events`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${s.adminKey}`, accept: 'text/event-stream', 'last-event-id': '999999999999999' },
      signal: AbortSignal.timeout(WAIT_LIMIT_MS),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(await res.text()).toBe('');
    // The connection is usable at once for the next request.
    const next = await t.request('GET', `${jobPath()}/events`, { key: s.adminKey });
    expect(next.status).toBe(200);
  });

  it('4. SSE with a malformed Last-Event-ID → 400 before any stream; an empty one counts as absent', async () => {
    const bad = await fetch(`${t.baseUrl}${jobPath()}/events`, {
      headers: { authorization: `Bearer ${s.adminKey}`, accept: 'text/event-stream', 'last-event-id': 'x1' },
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).details[0].path).toBe('Last-Event-ID');
    const stream = await openStream('', { 'last-event-id': '' });
    try {
      expect(stream.res.status).toBe(200);
      expect(await stream.until(/id: 1\n/, WAIT_LIMIT_MS)).toMatch(/id: 1\n/);
    } finally {
      stream.close();
    }
  });
});
