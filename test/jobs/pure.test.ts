// Pure parts of the jobs area: conversation merging, list cursors, idempotency fingerprints, event text.
import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { mergeConversation, parseConversation } from '../../src/jobs/conversation.ts';
import { eventDataText, parseSeq, sseFrame } from '../../src/jobs/events.ts';
import { canonicalJson, checkIdempotencyKey, requestFingerprint } from '../../src/jobs/idempotency.ts';
import { decodeCursor, encodeCursor } from '../../src/jobs/view.ts';

describe('conversation', () => {
  const history: ModelMessage[] = [
    { role: 'user', content: 'one' },
    { role: 'assistant', content: 'did one' },
  ];
  const turn: ModelMessage[] = [
    { role: 'user', content: 'two' },
    { role: 'assistant', content: 'did two' },
  ];

  it('takes a full conversation (history first) as is', () => {
    expect(mergeConversation(history, 'two', [...history, ...turn])).toEqual([...history, ...turn]);
  });
  it('appends a turn that starts with the prompt', () => {
    expect(mergeConversation(history, 'two', turn)).toEqual([...history, ...turn]);
  });
  it('adds the prompt when the executor returned only responses', () => {
    expect(mergeConversation(history, 'two', [{ role: 'assistant', content: 'did two' }])).toEqual([...history, ...turn]);
  });
  it('first turn', () => {
    expect(mergeConversation([], 'two', turn)).toEqual(turn);
  });
  it('parses stored text defensively', () => {
    expect(parseConversation(JSON.stringify(history))).toEqual(history);
    expect(parseConversation('not json')).toEqual([]);
    expect(parseConversation('{"a":1}')).toEqual([]);
  });
});

describe('list cursors', () => {
  it('round-trip and reject anything else', () => {
    const c = encodeCursor(1_763_712_000_000, 'job_AbC123');
    expect(decodeCursor(c)).toEqual({ createdAt: 1_763_712_000_000, id: 'job_AbC123' });
    for (const bad of ['', '!!', Buffer.from('x.y').toString('base64url'), Buffer.from('12.bad id').toString('base64url'), 'a'.repeat(300)]) {
      expect(decodeCursor(bad), bad).toBeNull();
    }
  });
});

describe('idempotency', () => {
  it('fingerprints ignore key order but not values, method or path', () => {
    const a = requestFingerprint('POST', '/v2/agent/p/job', { prompt: 'x', source: { ref: 'a', repository: 'b' } });
    expect(requestFingerprint('post', '/v2/agent/p/job', { source: { repository: 'b', ref: 'a' }, prompt: 'x' })).toBe(a);
    expect(requestFingerprint('POST', '/v2/agent/p/job', { prompt: 'y', source: { ref: 'a', repository: 'b' } })).not.toBe(a);
    expect(requestFingerprint('POST', '/v2/agent/q/job', { prompt: 'x', source: { ref: 'a', repository: 'b' } })).not.toBe(a);
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[1,{"c":2,"d":1}]}');
  });
  it('validates the header', () => {
    expect(checkIdempotencyKey(undefined)).toEqual({ key: null });
    expect(checkIdempotencyKey('abc-123')).toEqual({ key: 'abc-123' });
    expect(checkIdempotencyKey('k'.repeat(255)).key).toBe('k'.repeat(255));
    expect(checkIdempotencyKey('k'.repeat(256)).error).toContain('1–255');
    expect(checkIdempotencyKey('has space').error).toBeDefined();
    expect(checkIdempotencyKey(['a', 'b']).error).toBeDefined();
  });
});

describe('events', () => {
  it('scrub secrets and clip long text', () => {
    const text = eventDataText({ summary: `token ghp_${'a'.repeat(36)} and Bearer xyz`, big: 'z'.repeat(10_000) });
    expect(text).not.toContain('ghp_aaaa');
    expect(text).not.toContain('xyz');
    expect(text.length).toBeLessThan(5000);
  });
  it('SSE frames carry the seq as id and the type as event', () => {
    expect(sseFrame({ seq: 7, type: 'commit', at: '2026-01-01T00:00:00.000Z', data: { sha: 'a' } })).toBe(
      'id: 7\nevent: commit\ndata: {"seq":7,"type":"commit","at":"2026-01-01T00:00:00.000Z","data":{"sha":"a"}}\n\n',
    );
    expect(parseSeq('12')).toBe(12);
    expect(parseSeq(' 3 ')).toBe(3);
    expect(parseSeq('-1')).toBeNull();
    expect(parseSeq('1e3')).toBeNull();
    expect(parseSeq(undefined)).toBeNull();
  });
});
