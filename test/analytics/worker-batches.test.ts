// The writes sent to the ingest worker in one message: every batch's arrays survive the one-buffer packing
// (odd lengths, with and without `known`), and the caller's batches are left as they were.
import { describe, expect, it } from 'vitest';
import { packWrites, unpackWrites } from '../../src/analytics/ingest/worker-batches.ts';
import { packEvents, type WriteBatch, type WriteEvent } from '../../src/analytics/ingest/write-batch.ts';

function event(i: number): WriteEvent {
  return [
    1_700_000_000_000 + i * 997,
    19_675 + (i % 3),
    `/docs/p${i % 5}?x=${i}`,
    `/docs/p${i % 5}`,
    `v:${i % 4}`,
    i % 5 === 0 ? null : `agent ${i % 2}`,
    null,
    'GET',
    i % 7 === 0 ? null : 200 + (i % 3),
    null,
    i % 3 === 0 ? 'ai' : 'human',
    null,
    null,
    i % 2 === 0 ? 0 : 1,
    i % 4 === 0 ? `line:${i}` : null,
  ];
}

function batch(n: number, offset: number, withKnown: boolean): WriteBatch {
  const b = packEvents(Array.from({ length: n }, (_, i) => event(offset + i)));
  if (withKnown) {
    const s = b.strings.length;
    b.known = {
      paths: Float64Array.from({ length: s }, (_, i) => (i % 2 === 0 ? i + 1 : 0)),
      visitors: Float64Array.from({ length: s }, (_, i) => (i % 3 === 0 ? 1e12 + i : -1)),
      userAgents: Float64Array.from({ length: s }, (_, i) => i * 0.5),
    };
  }
  return b;
}

const plain = (b: WriteBatch) => ({
  n: b.n,
  strings: [...b.strings],
  refs: [...b.refs],
  ts: [...b.ts],
  day: [...b.day],
  status: [...b.status],
  qualifying: [...b.qualifying],
  known: b.known ? { paths: [...b.known.paths], visitors: [...b.known.visitors], userAgents: [...b.known.userAgents] } : undefined,
});

describe('worker batches', () => {
  it('packs several writes into one buffer and unpacks the same batches', () => {
    const writes = [
      { id: 1, projectId: 'p1', source: 'api' as const, batch: batch(1, 0, false) },
      { id: 2, projectId: 'p2', source: 'collect' as const, batch: batch(3, 10, true) },
      { id: 7, projectId: 'p1', source: 'import' as const, batch: batch(1000, 100, true) },
      { id: 9, projectId: 'p1', source: 'api' as const, batch: batch(5, 2000, false) },
    ];
    const before = writes.map((w) => plain(w.batch));
    const packed = packWrites(writes);
    // What the worker receives: the buffer transferred, the rest cloned.
    const received = structuredClone(packed, { transfer: [packed.buffer] });
    const out = unpackWrites(received);
    expect(out.map((w) => [w.id, w.projectId, w.source])).toEqual(writes.map((w) => [w.id, w.projectId, w.source]));
    expect(out.map((w) => plain(w.batch))).toEqual(before);
    // The senders' batches are untouched (a fallback writer may still need them).
    expect(writes.map((w) => plain(w.batch))).toEqual(before);
    expect(out[0]?.batch.known).toBeUndefined();
  });
});
