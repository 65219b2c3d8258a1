import { Compile } from 'typebox/compile';
import { describe, expect, it } from 'vitest';
import { IngestEventSchema, validateIngestEvent } from '../../src/analytics/ingest/event.ts';

const NOW = Date.UTC(2025, 5, 1, 12);

describe('IngestEventSchema', () => {
  const check = Compile(IngestEventSchema);
  it('requires path or url and forbids unknown fields', () => {
    expect(check.Check({ path: '/a' })).toBe(true);
    expect(check.Check({ url: 'https://x.example/a' })).toBe(true);
    expect(check.Check({})).toBe(false);
    expect(check.Check({ userAgent: 'x' })).toBe(false);
    expect(check.Check({ path: '/a', extra: 1 })).toBe(false);
  });
  it('bounds status to integers 100–599', () => {
    for (const s of [100, 200, 599]) expect(check.Check({ path: '/a', status: s })).toBe(true);
    for (const s of [99, 600, 200.5, '200']) expect(check.Check({ path: '/a', status: s })).toBe(false);
  });
  it('is plain JSON Schema (usable by Fastify/ajv as well)', () => {
    const json = JSON.parse(JSON.stringify(IngestEventSchema));
    expect(json.additionalProperties).toBe(false);
    expect(json.anyOf).toEqual([{ required: ['path'] }, { required: ['url'] }]);
  });
});

describe('validateIngestEvent', () => {
  it('accepts a full event, normalises its path and reads its timestamp', () => {
    const r = validateIngestEvent(
      {
        url: 'https://docs.example.com/guide/intro.md?x=1',
        timestamp: '2025-01-02T03:04:05+01:00',
        userAgent: 'ua',
        ip: '10.0.0.1',
        status: 200,
        method: 'GET',
      },
      NOW,
    );
    expect(r).toMatchObject({ ok: true, path: '/guide/intro', timestampMs: Date.UTC(2025, 0, 2, 2, 4, 5) });
  });

  it('defaults the timestamp to now and prefers path over url', () => {
    expect(validateIngestEvent({ path: '/a/', url: 'https://x.example/b' }, NOW)).toMatchObject({ ok: true, path: '/a', timestampMs: NOW });
  });

  it('accepts an empty user agent (a request without the header)', () => {
    expect(validateIngestEvent({ path: '/a', userAgent: '' }, NOW).ok).toBe(true);
  });

  it.each([
    [null, '', 'event must be an object'],
    [[], '', 'event must be an object'],
    ['x', '', 'event must be an object'],
    [{}, 'path', 'path or url is required'],
    [{ userAgent: 'x' }, 'path', 'path or url is required'],
    [{ path: '/a', foo: 1 }, 'foo', 'unknown field "foo"'],
    [{ path: '' }, 'path', 'path must be'],
    [{ path: 7 }, 'path', 'path must be'],
    [{ path: '?q=1' }, 'path', 'path is not a page path'],
    [{ url: `https://x.example/${'a'.repeat(3000)}` }, 'url', 'url is not a page path'],
    [{ path: '/a', status: 99 }, 'status', 'status must be an integer from 100 to 599'],
    [{ path: '/a', status: 200.5 }, 'status', 'status must be an integer'],
    [{ path: '/a', timestamp: 'yesterday' }, 'timestamp', 'timestamp must be an ISO 8601'],
    [{ path: '/a', timestamp: '2025-02-30T00:00:00Z' }, 'timestamp', 'timestamp must be an ISO 8601'],
    [{ path: '/a', timestamp: 1735689600000 }, 'timestamp', 'timestamp must be an ISO 8601'],
    [{ path: '/a', method: 'GE T' }, 'method', 'method must be an HTTP method'],
    [{ path: '/a', visitorId: '' }, 'visitorId', 'visitorId must be a string of 1–128'],
    [{ path: '/a', visitorId: 'x'.repeat(129) }, 'visitorId', 'visitorId must be a string of 1–128'],
    [{ path: '/a', ip: 'x'.repeat(101) }, 'ip', 'ip must be a string of at most 100'],
    [{ path: '/a', userAgent: 'x'.repeat(2049) }, 'userAgent', 'userAgent must be a string of at most 2048'],
  ])('%j → %s', (value, field, message) => {
    const r = validateIngestEvent(value, NOW);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.field).toBe(field);
      expect(r.error).toContain(message);
    }
  });
});
