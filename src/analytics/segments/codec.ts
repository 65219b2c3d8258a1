// The segment codec: one (project, day)'s raw events as a compressed, immutable, columnar blob. Pure: no I/O.
//
// A segment carries every field of an `analytics_events` row that reclassification, rebuilding the derived
// tables and audits need, with the dictionaries (paths, visitors, user agents) referenced by id as the row
// does; the project and day are the segment's address, not its content.
//
// Appending (how a store is meant to use it; see docs/architecture.md "Analytics segments"): every ingest
// flush writes one new small segment per (project, day) it touched, in the same transaction as the day's
// version bump, and never rewrites an existing one. A day is read as the concatenation of its segments.
// Compaction merges a day's segments (mergeSegments) into one, or a few when a day is larger than
// MAX_SEGMENT_EVENTS, and replaces them in one transaction; the events are the same multiset, so the day's
// data version need not move. Merging tiers (e.g. eight segments of similar size into one) rewrites each event
// O(log) times rather than once per flush.
//
// Order: events are stored sorted by (ts, order given), a stable sort. Sorted times delta-code to about a
// byte, and a reader can stop at a time bound; nothing reads arrival order (today's row id is not used by any
// export, reclassification or audit), and events with the same ts keep the order they were given in. So
// decode(merge(a, b)) = decode(encode(events(a) ++ events(b))), byte for byte: the property the tests check.
//
// Layout (little-endian):
//   header, 24 bytes, uncompressed:
//     0  magic "IKSG"
//     4  format version (1)
//     5  compression (0 none, 1 zstd)
//     6  reserved, 2 bytes, 0
//     8  event count n (u32, ≤ MAX_SEGMENT_EVENTS)
//     12 body length (u32, uncompressed, ≤ MAX_BODY_BYTES)
//     16 payload length (u32, the bytes after the header)
//     20 crc32 of bytes 0–19 followed by the payload
//   payload: the body, compressed as the header says. Body:
//     column count (a byte), then per column its id (a byte) and byte length (a varint): the column offsets;
//     then the columns in that order. Every column of the format appears exactly once.
//   columns (n = event count; a "dict" column is k distinct values in order of first appearance, each as a
//   varint tag — 0 = null, else value + 1 for integers or UTF-8 byte length + 1 for strings, followed by the
//   bytes — then n indexes into them of 0 (k ≤ 1), 1 (k ≤ 256), 2 (k ≤ 65,536), 3 or 4 bytes each):
//     ts        first ts, then n − 1 deltas (varints; sorted, so ≥ 0)
//     path      dict of path ids              raw_path  dict of strings (null = same as the path)
//     visitor   n varints (visitor ordinals)  ua        dict of user agent ids (null = none)
//     accept, method, referrer, rule          dicts of strings, nullable
//     status    dict of integers, nullable    flags     n bytes: class (bits 0–1: human, ai, crawler),
//                                                       category (bits 2–3: none, search, training, other),
//                                                       qualifying (bit 4); bits 5–7 zero
//     rules_version, source                   dicts of strings, never null
//     dedup     m = events with a key (varint); when 0 < m < n a presence bitmap (n bits, LSB first); then m
//               64-bit hashes, big-endian (dedup.ts says why 64 bits)
//
// Decoding treats every byte as hostile: the checksum is checked first, the header's counts are capped
// before anything is allocated, zstd may not expand past the declared length, every count is bounded by the
// bytes that remain or by n, every index and flag is checked, strings must be valid UTF-8, and any violation
// is a SegmentFormatError naming the column. Allocation stays proportional to min(n, body length).
import zlib from 'node:zlib';
import { ByteReader, ByteWriter, SegmentFormatError } from './bytes.ts';
import { MAX_LEVEL, zstdCompress, zstdDecompress } from './compress.ts';
import { DEDUP_HASH_BYTES } from './dedup.ts';

export { SegmentFormatError } from './bytes.ts';

export const SEGMENT_FORMAT_VERSION = 1;
/** Most events one segment holds (bounds a decoder's allocations; a larger day compacts into several). */
export const MAX_SEGMENT_EVENTS = 1 << 20;
/** Largest uncompressed body. */
export const MAX_BODY_BYTES = 1 << 26;
/** Largest integer id (path, user agent) and status a segment holds. */
export const MAX_ID = 0xffff_ffff;
/**
 * Largest visitor ordinal a segment holds: visitors are the one dictionary that can pass 32 bits (a bigserial
 * over every project's visitors; day sets hold them relative to a per-day base), and the column is varints anyway.
 */
export const MAX_VISITOR = Number.MAX_SAFE_INTEGER;
/** Largest timestamp (epoch ms): the last instant a JavaScript Date holds. */
export const MAX_TS = 8_640_000_000_000_000;
/** zstd level of a new segment (fast enough for every flush; see bench/segments.ts). */
export const DEFAULT_LEVEL = 3;

const MAGIC = [0x49, 0x4b, 0x53, 0x47]; // "IKSG"
const HEADER_BYTES = 24;
const COMPRESSION_NONE = 0;
const COMPRESSION_ZSTD = 1;

export type SegmentClass = 'human' | 'ai' | 'crawler';
export type SegmentCategory = 'search' | 'training' | 'other' | null;

/** One raw event as a segment stores it. */
export interface SegmentEvent {
  /** Epoch ms, an integer from 0 to MAX_TS. */
  ts: number;
  /** analytics_paths.id of the normalised path. */
  pathId: number;
  /** The path or URL as sent, for audits; null = the same as the normalised path. */
  rawPath: string | null;
  /** The visitor's ordinal in its project (analytics_visitor_chunks, tables.ts). */
  visitor: number;
  /** analytics_user_agents.id; null = no user agent. */
  uaId: number | null;
  accept: string | null;
  method: string | null;
  status: number | null;
  referrer: string | null;
  cls: SegmentClass;
  category: SegmentCategory;
  rule: string | null;
  rulesVersion: string;
  qualifying: boolean;
  /** api | collect | import */
  source: string;
  /** dedupHash of the import dedup key; null for live events. */
  dedup: bigint | null;
}

/** A dictionary-encoded column: event i's value is values[index[i]]. */
export interface DictColumn<T> {
  values: readonly T[];
  index: Uint8Array | Uint16Array | Uint32Array;
}

/** A decoded segment, column by column (events sorted by ts). */
export interface Segment {
  n: number;
  ts: Float64Array;
  pathId: DictColumn<number>;
  rawPath: DictColumn<string | null>;
  visitor: Float64Array;
  uaId: DictColumn<number | null>;
  accept: DictColumn<string | null>;
  method: DictColumn<string | null>;
  status: DictColumn<number | null>;
  referrer: DictColumn<string | null>;
  /** Class, category and qualifying bits (see classOf, categoryOf, isQualifying). */
  flags: Uint8Array;
  rule: DictColumn<string | null>;
  rulesVersion: DictColumn<string>;
  source: DictColumn<string>;
  /** Null when no event has a key. */
  dedup: { present: Uint8Array; hash: BigUint64Array } | null;
}

export interface SegmentHeader {
  version: number;
  compression: 'none' | 'zstd';
  events: number;
  bodyBytes: number;
  payloadBytes: number;
}

export interface EncodeOptions {
  /** zstd level (1–19) or 'none' (tests and fuzzing of the body decoder). Default DEFAULT_LEVEL. */
  compression?: number | 'none';
}

/** Events a segment cannot hold (not an I/O or format problem: the caller's input). */
export class SegmentInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SegmentInputError';
  }
}

/** The events do not fit one segment (too many, or a body over MAX_BODY_BYTES): split them. */
export class SegmentTooLargeError extends SegmentInputError {}

// Column ids (their order is the order the encoder writes; the decoder accepts any order).
const C_TS = 1;
const C_PATH = 2;
const C_RAW_PATH = 3;
const C_VISITOR = 4;
const C_UA = 5;
const C_ACCEPT = 6;
const C_METHOD = 7;
const C_STATUS = 8;
const C_REFERRER = 9;
const C_FLAGS = 10;
const C_RULE = 11;
const C_RULES_VERSION = 12;
const C_SOURCE = 13;
const C_DEDUP = 14;
const COLUMN_COUNT = 14;
const COLUMN_NAMES = [
  '',
  'ts',
  'path',
  'raw_path',
  'visitor',
  'ua',
  'accept',
  'method',
  'status',
  'referrer',
  'flags',
  'rule',
  'rules_version',
  'source',
  'dedup',
];

const CLASSES: readonly SegmentClass[] = ['human', 'ai', 'crawler'];
const CATEGORIES: readonly SegmentCategory[] = [null, 'search', 'training', 'other'];
const FLAG_QUALIFYING = 0x10;

export const classOf = (flags: number): SegmentClass => CLASSES[flags & 3] as SegmentClass;
export const categoryOf = (flags: number): SegmentCategory => CATEGORIES[(flags >> 2) & 3] as SegmentCategory;
export const isQualifying = (flags: number): boolean => (flags & FLAG_QUALIFYING) !== 0;

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

type WellFormed = string & { isWellFormed(): boolean };

// ---------------------------------------------------------------------------------------------------------
// Encoding

const indexWidth = (k: number): number => (k <= 1 ? 0 : k <= 0x100 ? 1 : k <= 0x1_0000 ? 2 : k <= 0x100_0000 ? 3 : 4);

const bad = (i: number, field: string, why: string): never => {
  throw new SegmentInputError(`event ${i}: ${field} ${why}`);
};

/** The value of an id-like field (path, visitor, user agent, status), checked. */
function checkId(v: number | null, i: number, field: string, nullable: boolean, max = MAX_ID): number | null {
  if (v === null) return nullable ? null : bad(i, field, 'must not be null');
  if (!Number.isInteger(v) || v < 0 || v > max) bad(i, field, `must be an integer from 0 to ${max}`);
  return v;
}

/**
 * One dict column being built. Values are checked when first seen (a string once per segment, not once per
 * event), and a run of one value (rules version, source, method) costs a comparison, not a map lookup
 * (encode throughput: bench/segments.ts).
 */
class DictBuilder<T extends string | number | null> {
  readonly values: T[] = [];
  readonly index: Uint32Array;
  private readonly ids = new Map<T, number>();
  private last: T | undefined = undefined;
  private lastId = 0;

  constructor(
    n: number,
    private readonly field: string,
    private readonly check: (v: T, i: number, field: string) => void,
  ) {
    this.index = new Uint32Array(n);
  }

  add(k: number, v: T, i: number): void {
    if (v === this.last) {
      this.index[k] = this.lastId;
      return;
    }
    let id = this.ids.get(v);
    if (id === undefined) {
      this.check(v, i, this.field);
      id = this.values.length;
      this.ids.set(v, id);
      this.values.push(v);
    }
    this.index[k] = id;
    this.last = v;
    this.lastId = id;
  }

  write(w: ByteWriter): void {
    w.varint(this.values.length);
    for (const v of this.values) {
      if (v === null) w.varint(0);
      else if (typeof v === 'number') w.varint(v + 1);
      else {
        const b = utf8.encode(v as string);
        w.varint(b.length + 1);
        w.bytes(b);
      }
    }
    const width = indexWidth(this.values.length);
    if (width === 0) return;
    const index = this.index;
    for (let k = 0; k < index.length; k++) w.fixed(index[k] as number, width);
  }
}

const idCheck = (nullable: boolean) => (v: number | null, i: number, field: string) => void checkId(v, i, field, nullable);
const textCheck = (nullable: boolean) => (v: string | null, i: number, field: string) => {
  if (v === null) {
    if (!nullable) bad(i, field, 'must not be null');
    return;
  }
  if (typeof v !== 'string') bad(i, field, 'must be a string');
  if (!(v as WellFormed).isWellFormed()) bad(i, field, 'must be well-formed Unicode (it has a lone UTF-16 surrogate)');
};

/** The events' positions sorted by (ts, position): stable, and cheap on the nearly sorted input ingest gives. */
function sortedOrder(events: readonly SegmentEvent[]): number[] {
  const n = events.length;
  const order = new Array<number>(n);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    order[i] = i;
    const ts = (events[i] as SegmentEvent).ts;
    if (!Number.isInteger(ts) || ts < 0 || ts > MAX_TS) bad(i, 'ts', `must be an integer from 0 to ${MAX_TS}`);
    if (i > 0 && ts < (events[i - 1] as SegmentEvent).ts) sorted = false;
  }
  if (!sorted) order.sort((a, b) => (events[a] as SegmentEvent).ts - (events[b] as SegmentEvent).ts || a - b);
  return order;
}

/**
 * The columns of one segment being built, filled event by event in stored order (by encodeBody from event
 * objects, by mergedBody from decoded segments), then written as a body by finish().
 */
class BodyBuilder {
  readonly ts: Float64Array;
  readonly visitor: Float64Array;
  readonly flags: Uint8Array;
  private dedupPresent: Uint8Array | null = null;
  private dedupHash: BigUint64Array | null = null;
  private keyed = 0;
  readonly path: DictBuilder<number>;
  readonly rawPath: DictBuilder<string | null>;
  readonly ua: DictBuilder<number | null>;
  readonly accept: DictBuilder<string | null>;
  readonly method: DictBuilder<string | null>;
  readonly status: DictBuilder<number | null>;
  readonly referrer: DictBuilder<string | null>;
  readonly rule: DictBuilder<string | null>;
  readonly rulesVersion: DictBuilder<string>;
  readonly source: DictBuilder<string>;

  constructor(readonly n: number) {
    this.ts = new Float64Array(n);
    this.visitor = new Float64Array(n);
    this.flags = new Uint8Array(n);
    this.path = new DictBuilder<number>(n, 'pathId', idCheck(false));
    this.rawPath = new DictBuilder<string | null>(n, 'rawPath', textCheck(true));
    this.ua = new DictBuilder<number | null>(n, 'uaId', idCheck(true));
    this.accept = new DictBuilder<string | null>(n, 'accept', textCheck(true));
    this.method = new DictBuilder<string | null>(n, 'method', textCheck(true));
    this.status = new DictBuilder<number | null>(n, 'status', idCheck(true));
    this.referrer = new DictBuilder<string | null>(n, 'referrer', textCheck(true));
    this.rule = new DictBuilder<string | null>(n, 'rule', textCheck(true));
    this.rulesVersion = new DictBuilder<string>(n, 'rulesVersion', textCheck(false));
    this.source = new DictBuilder<string>(n, 'source', textCheck(false));
  }

  /** Event k's dedup hash (a checked unsigned 64-bit value); events never given one have none. */
  dedup(k: number, h: bigint): void {
    if (this.dedupHash === null) {
      this.dedupPresent = new Uint8Array(this.n);
      this.dedupHash = new BigUint64Array(this.n);
    }
    (this.dedupPresent as Uint8Array)[k] = 1;
    this.dedupHash[k] = h;
    this.keyed++;
  }

  finish(): Uint8Array {
    const { n, ts, visitor, flags, keyed } = this;
    const cols: [number, Uint8Array][] = [];
    const column = (id: number, write: (w: ByteWriter) => void, capacity = n * 2) => {
      const w = new ByteWriter(capacity + 16);
      write(w);
      cols.push([id, w.finish()]);
    };
    column(C_TS, (w) => {
      let prev = 0;
      for (let k = 0; k < n; k++) {
        const t = ts[k] as number;
        w.varint(t - prev);
        prev = t;
      }
    });
    column(C_PATH, (w) => this.path.write(w));
    column(C_RAW_PATH, (w) => this.rawPath.write(w));
    column(C_VISITOR, (w) => {
      for (let k = 0; k < n; k++) w.varint(visitor[k] as number);
    });
    column(C_UA, (w) => this.ua.write(w));
    column(C_ACCEPT, (w) => this.accept.write(w));
    column(C_METHOD, (w) => this.method.write(w));
    column(C_STATUS, (w) => this.status.write(w));
    column(C_REFERRER, (w) => this.referrer.write(w));
    column(C_FLAGS, (w) => w.bytes(flags), n);
    column(C_RULE, (w) => this.rule.write(w));
    column(C_RULES_VERSION, (w) => this.rulesVersion.write(w));
    column(C_SOURCE, (w) => this.source.write(w));
    column(
      C_DEDUP,
      (w) => {
        w.varint(keyed);
        const present = this.dedupPresent;
        const hash = this.dedupHash;
        if (keyed === 0 || present === null || hash === null) return;
        if (keyed < n) {
          const bitmap = new Uint8Array((n + 7) >> 3);
          for (let k = 0; k < n; k++) if (present[k] === 1) bitmap[k >> 3] = (bitmap[k >> 3] as number) | (1 << (k & 7));
          w.bytes(bitmap);
        }
        const hashes = new Uint8Array(keyed * DEDUP_HASH_BYTES);
        const view = new DataView(hashes.buffer);
        let j = 0;
        for (let k = 0; k < n; k++) {
          if (present[k] !== 1) continue;
          view.setBigUint64(j * DEDUP_HASH_BYTES, hash[k] as bigint, false);
          j++;
        }
        w.bytes(hashes);
      },
      keyed * DEDUP_HASH_BYTES + n / 8,
    );

    const body = new ByteWriter(cols.reduce((a, [, b]) => a + b.length, 64));
    body.u8(cols.length);
    for (const [id, bytes] of cols) {
      body.u8(id);
      body.varint(bytes.length);
    }
    for (const [, bytes] of cols) {
      if (body.length + bytes.length > MAX_BODY_BYTES) throw new SegmentTooLargeError(`the events need more than ${MAX_BODY_BYTES} bytes: split them`);
      body.bytes(bytes);
    }
    return body.finish();
  }
}

function encodeBody(events: readonly SegmentEvent[]): Uint8Array {
  const n = events.length;
  const order = sortedOrder(events);
  // One pass gathers and checks every field into columns (in stored order); the columns are written after.
  const b = new BodyBuilder(n);
  for (let k = 0; k < n; k++) {
    const i = order[k] as number;
    const e = events[i] as SegmentEvent;
    b.ts[k] = e.ts;
    b.visitor[k] = checkId(e.visitor, i, 'visitor', false, MAX_VISITOR) as number;
    b.path.add(k, e.pathId, i);
    b.rawPath.add(k, e.rawPath, i);
    b.ua.add(k, e.uaId, i);
    b.accept.add(k, e.accept, i);
    b.method.add(k, e.method, i);
    b.status.add(k, e.status, i);
    b.referrer.add(k, e.referrer, i);
    b.rule.add(k, e.rule, i);
    b.rulesVersion.add(k, e.rulesVersion, i);
    b.source.add(k, e.source, i);
    const cls = CLASSES.indexOf(e.cls);
    if (cls < 0) bad(i, 'cls', 'must be human, ai or crawler');
    const category = CATEGORIES.indexOf(e.category);
    if (category < 0) bad(i, 'category', 'must be search, training, other or null');
    if (typeof e.qualifying !== 'boolean') bad(i, 'qualifying', 'must be a boolean');
    b.flags[k] = cls | (category << 2) | (e.qualifying ? FLAG_QUALIFYING : 0);
    const h = e.dedup;
    if (h !== null) {
      if (typeof h !== 'bigint' || h < 0n || h >= 1n << 64n) bad(i, 'dedup', 'must be an unsigned 64-bit bigint or null');
      b.dedup(k, h);
    }
  }
  return b.finish();
}

function checkedLevel(options: EncodeOptions): number | 'none' {
  const level = options.compression ?? DEFAULT_LEVEL;
  if (level !== 'none' && !(Number.isInteger(level) && level >= 1 && level <= MAX_LEVEL))
    throw new SegmentInputError(`compression must be 'none' or a zstd level from 1 to ${MAX_LEVEL}`);
  return level;
}

/** A segment of n events around its body: header, payload compressed at `level`, checksum. */
function frame(body: Uint8Array, n: number, level: number | 'none'): Uint8Array {
  const payload = level === 'none' ? body : zstdCompress(body, level);
  const out = new Uint8Array(HEADER_BYTES + payload.length);
  out.set(MAGIC, 0);
  out[4] = SEGMENT_FORMAT_VERSION;
  out[5] = level === 'none' ? COMPRESSION_NONE : COMPRESSION_ZSTD;
  const view = new DataView(out.buffer);
  view.setUint32(8, n, true);
  view.setUint32(12, body.length, true);
  view.setUint32(16, payload.length, true);
  out.set(payload, HEADER_BYTES);
  view.setUint32(20, checksum(out), true);
  return out;
}

/** Encodes one (project, day)'s events (any order; stored sorted by ts, stably) into a segment. */
export function encodeSegment(events: readonly SegmentEvent[], options: EncodeOptions = {}): Uint8Array {
  if (events.length > MAX_SEGMENT_EVENTS) throw new SegmentTooLargeError(`${events.length} events: a segment holds at most ${MAX_SEGMENT_EVENTS}`);
  const level = checkedLevel(options);
  return frame(encodeBody(events), events.length, level);
}

function checksum(segment: Uint8Array): number {
  return zlib.crc32(segment.subarray(HEADER_BYTES), zlib.crc32(segment.subarray(0, 20)));
}

// ---------------------------------------------------------------------------------------------------------
// Decoding

/** Reads and checks a segment's header and checksum (without decompressing anything). */
export function readSegmentHeader(bytes: Uint8Array): SegmentHeader {
  if (!(bytes instanceof Uint8Array)) throw new SegmentFormatError('header: not a byte array');
  if (bytes.length < HEADER_BYTES) throw new SegmentFormatError(`header: ${bytes.length} bytes, a segment has at least ${HEADER_BYTES}`);
  for (let k = 0; k < MAGIC.length; k++) if (bytes[k] !== MAGIC[k]) throw new SegmentFormatError('header: not a segment (wrong magic bytes)');
  const version = bytes[4] as number;
  if (version !== SEGMENT_FORMAT_VERSION) throw new SegmentFormatError(`header: format version ${version} (this build reads ${SEGMENT_FORMAT_VERSION})`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const payloadBytes = view.getUint32(16, true);
  if (payloadBytes !== bytes.length - HEADER_BYTES)
    throw new SegmentFormatError(`header: payload of ${payloadBytes} bytes declared, ${bytes.length - HEADER_BYTES} present (truncated or padded)`);
  if (view.getUint32(20, true) !== checksum(bytes)) throw new SegmentFormatError('header: checksum mismatch (corrupt bytes)');
  const compression = bytes[5];
  if (compression !== COMPRESSION_NONE && compression !== COMPRESSION_ZSTD) throw new SegmentFormatError(`header: unknown compression ${compression}`);
  if (view.getUint16(6, true) !== 0) throw new SegmentFormatError('header: reserved bytes are not zero');
  const events = view.getUint32(8, true);
  if (events > MAX_SEGMENT_EVENTS) throw new SegmentFormatError(`header: ${events} events, a segment holds at most ${MAX_SEGMENT_EVENTS}`);
  const bodyBytes = view.getUint32(12, true);
  if (bodyBytes > MAX_BODY_BYTES) throw new SegmentFormatError(`header: body of ${bodyBytes} bytes, at most ${MAX_BODY_BYTES}`);
  if (compression === COMPRESSION_NONE && bodyBytes !== payloadBytes) throw new SegmentFormatError('header: uncompressed payload and body lengths differ');
  return { version, compression: compression === COMPRESSION_NONE ? 'none' : 'zstd', events, bodyBytes, payloadBytes };
}

function readDict<T>(r: ByteReader, n: number, nullable: boolean, value: (r: ByteReader, tag: number) => T): DictColumn<T | null> {
  const k = r.bounded(Math.min(n, r.remaining), 'dictionary size');
  if (n > 0 && k === 0) r.fail('empty dictionary for a non-empty segment');
  const values: (T | null)[] = new Array(k);
  for (let j = 0; j < k; j++) {
    const tag = r.varint();
    if (tag === 0) {
      if (!nullable) r.fail('null in a column that has no nulls');
      values[j] = null;
    } else values[j] = value(r, tag - 1);
  }
  const width = indexWidth(k);
  const index = width === 0 ? new Uint8Array(n) : width === 1 ? new Uint8Array(n) : width === 2 ? new Uint16Array(n) : new Uint32Array(n);
  if (width > 0) {
    r.need(n * width);
    const b = r.buf;
    let o = r.pos;
    for (let i = 0; i < n; i++) {
      let x = 0;
      for (let s = 0; s < width; s++) x += (b[o + s] as number) * 2 ** (8 * s);
      o += width;
      if (x >= k) r.fail(`index ${x} of event ${i} outside a dictionary of ${k}`);
      index[i] = x;
    }
    r.pos = o;
  }
  return { values, index };
}

const readInt = (max: number) => (r: ByteReader, v: number) => {
  if (v > max) r.fail(`value ${v} exceeds ${max}`);
  return v;
};

function readText(r: ByteReader, length: number): string {
  const bytes = r.take(length);
  try {
    return utf8Strict.decode(bytes);
  } catch {
    return r.fail('a string is not valid UTF-8');
  }
}

function decodeBody(body: Uint8Array, n: number): Segment {
  const r = new ByteReader(body, 'column directory');
  const count = r.u8();
  if (count !== COLUMN_COUNT) r.fail(`${count} columns, format ${SEGMENT_FORMAT_VERSION} has ${COLUMN_COUNT}`);
  const slices = new Array<Uint8Array | undefined>(COLUMN_COUNT + 1);
  const lengths: [number, number][] = [];
  let total = 0;
  for (let c = 0; c < count; c++) {
    const id = r.u8();
    if (id < 1 || id > COLUMN_COUNT) r.fail(`unknown column id ${id}`);
    const len = r.bounded(body.length, 'column length');
    if (lengths.some(([other]) => other === id)) r.fail(`column ${COLUMN_NAMES[id]} appears twice`);
    lengths.push([id, len]);
    total += len;
  }
  if (total !== r.remaining) r.fail(`columns add up to ${total} bytes, ${r.remaining} present`);
  for (const [id, len] of lengths) slices[id] = r.take(len);
  // Each event takes at least a byte in these columns: n is bounded by the body before anything of size n is made.
  for (const id of [C_TS, C_VISITOR, C_FLAGS])
    if ((slices[id] as Uint8Array).length < n) r.fail(`column ${COLUMN_NAMES[id]} has ${(slices[id] as Uint8Array).length} bytes for ${n} events`);

  const column = <T>(id: number, read: (r: ByteReader) => T): T => {
    const cr = new ByteReader(slices[id] as Uint8Array, `column ${COLUMN_NAMES[id]}`);
    const out = read(cr);
    if (cr.remaining !== 0) cr.fail(`${cr.remaining} bytes left over`);
    return out;
  };
  const ids = (r: ByteReader, nullable: boolean) => readDict(r, n, nullable, readInt(MAX_ID));
  const texts = (r: ByteReader, nullable: boolean) => readDict(r, n, nullable, readText);

  const ts = column(C_TS, (r) => {
    const out = new Float64Array(n);
    let t = 0;
    for (let i = 0; i < n; i++) {
      t += r.varint();
      if (t > MAX_TS) r.fail(`time of event ${i} beyond ${MAX_TS}`);
      out[i] = t;
    }
    return out;
  });
  const visitor = column(C_VISITOR, (r) => {
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = r.bounded(MAX_VISITOR, 'visitor');
    return out;
  });
  const flags = column(C_FLAGS, (r) => {
    const out = r.take(n).slice();
    for (let i = 0; i < n; i++) {
      const f = out[i] as number;
      if ((f & 3) === 3 || f > 0x1f) r.fail(`flags ${f} of event ${i}`);
    }
    return out;
  });
  const dedup = column(C_DEDUP, (r) => {
    const m = r.bounded(n, 'keyed events');
    if (m === 0) return null;
    const present = new Uint8Array(n);
    if (m === n) present.fill(1);
    else {
      const bitmap = r.take((n + 7) >> 3);
      let set = 0;
      for (let i = 0; i < n; i++) {
        const bit = ((bitmap[i >> 3] as number) >> (i & 7)) & 1;
        present[i] = bit;
        set += bit;
      }
      if (set !== m) r.fail(`presence bitmap has ${set} events, ${m} declared`);
      if ((n & 7) !== 0 && (bitmap[bitmap.length - 1] as number) >> (n & 7) !== 0) r.fail('presence bitmap has bits past the last event');
    }
    const raw = r.take(m * DEDUP_HASH_BYTES);
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    const hash = new BigUint64Array(n);
    let k = 0;
    for (let i = 0; i < n; i++) if (present[i] === 1) hash[i] = view.getBigUint64(DEDUP_HASH_BYTES * k++, false);
    return { present, hash };
  });
  return {
    n,
    ts,
    pathId: column(C_PATH, (r) => ids(r, false)) as DictColumn<number>,
    rawPath: column(C_RAW_PATH, (r) => texts(r, true)),
    visitor,
    uaId: column(C_UA, (r) => ids(r, true)),
    accept: column(C_ACCEPT, (r) => texts(r, true)),
    method: column(C_METHOD, (r) => texts(r, true)),
    status: column(C_STATUS, (r) => ids(r, true)),
    referrer: column(C_REFERRER, (r) => texts(r, true)),
    flags,
    rule: column(C_RULE, (r) => texts(r, true)),
    rulesVersion: column(C_RULES_VERSION, (r) => texts(r, false)) as DictColumn<string>,
    source: column(C_SOURCE, (r) => texts(r, false)) as DictColumn<string>,
    dedup,
  };
}

/** Decodes a segment; any corrupt, truncated or hostile input throws a SegmentFormatError. */
export function decodeSegment(bytes: Uint8Array): Segment {
  const h = readSegmentHeader(bytes);
  const payload = bytes.subarray(HEADER_BYTES);
  const body = h.compression === 'none' ? payload : zstdDecompress(payload, h.bodyBytes);
  if (body.length !== h.bodyBytes) throw new SegmentFormatError(`payload: ${body.length} bytes, the header says ${h.bodyBytes}`);
  return decodeBody(body, h.events);
}

// ---------------------------------------------------------------------------------------------------------
// Events, days, merging

/** Event i's value in a dict column. */
const valueAt = <T>(c: DictColumn<T>, i: number): T => c.values[c.index[i] as number] as T;

/** Event i of a decoded segment. */
export function eventAt(s: Segment, i: number): SegmentEvent {
  const f = s.flags[i] as number;
  return {
    ts: s.ts[i] as number,
    pathId: valueAt(s.pathId, i),
    rawPath: valueAt(s.rawPath, i),
    visitor: s.visitor[i] as number,
    uaId: valueAt(s.uaId, i),
    accept: valueAt(s.accept, i),
    method: valueAt(s.method, i),
    status: valueAt(s.status, i),
    referrer: valueAt(s.referrer, i),
    cls: classOf(f),
    category: categoryOf(f),
    rule: valueAt(s.rule, i),
    rulesVersion: valueAt(s.rulesVersion, i),
    qualifying: isQualifying(f),
    source: valueAt(s.source, i),
    dedup: s.dedup !== null && s.dedup.present[i] === 1 ? (s.dedup.hash[i] as bigint) : null,
  };
}

/** A decoded segment's events, in stored order. */
export function segmentEvents(s: Segment): SegmentEvent[] {
  const out = new Array<SegmentEvent>(s.n);
  for (let i = 0; i < s.n; i++) out[i] = eventAt(s, i);
  return out;
}

/** A day's events: the concatenation of its segments' events, in the order the segments are given. */
export function readDay(segments: readonly Uint8Array[]): SegmentEvent[] {
  const out: SegmentEvent[] = [];
  for (const bytes of segments) for (const e of segmentEvents(decodeSegment(bytes))) out.push(e);
  return out;
}

/**
 * The stored order of a merge: the positions (into the concatenation of `segs`) sorted by (ts, position), a
 * stable sort. Each decoded segment is already sorted by ts (its deltas are never negative), so this merges
 * adjacent runs pairwise, the left run first on a tie: O(n log k) over typed arrays, no comparator calls.
 */
function mergedOrder(segs: readonly Segment[], starts: readonly number[], n: number): Uint32Array {
  const ts = new Float64Array(n);
  segs.forEach((s, si) => {
    ts.set(s.ts, starts[si] as number);
  });
  /** The runs still to merge: run j is bounds[j]..bounds[j + 1]. */
  let bounds = [...starts, n];
  let a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  let b = new Uint32Array(n);
  while (bounds.length > 2) {
    const next = [0];
    for (let j = 0; j + 1 < bounds.length; j += 2) {
      const lo = bounds[j] as number;
      const mid = bounds[j + 1] as number;
      const hi = j + 2 < bounds.length ? (bounds[j + 2] as number) : mid;
      let p = lo;
      let q = mid;
      let o = lo;
      while (p < mid && q < hi) b[o++] = (ts[a[q] as number] as number) < (ts[a[p] as number] as number) ? (a[q++] as number) : (a[p++] as number);
      while (p < mid) b[o++] = a[p++] as number;
      while (q < hi) b[o++] = a[q++] as number;
      next.push(hi);
    }
    [a, b] = [b, a];
    bounds = next;
  }
  return a;
}

/**
 * The body of events order[from..to) of a merge, read from the decoded segments' columns (no event objects:
 * a day of 274k events merged as objects held ~70–116 MB of the merge thread's heap at the 100M benchmark's
 * ingest peak). `segOf[g]` is the segment of position g, `starts[s]` the first position of segment s.
 */
function mergedBody(segs: readonly Segment[], segOf: Uint32Array, starts: readonly number[], order: Uint32Array, from: number, to: number): Uint8Array {
  const b = new BodyBuilder(to - from);
  for (let k = 0; k < to - from; k++) {
    const g = order[from + k] as number;
    const si = segOf[g] as number;
    const s = segs[si] as Segment;
    const i = g - (starts[si] as number);
    b.ts[k] = s.ts[i] as number;
    b.visitor[k] = s.visitor[i] as number;
    b.flags[k] = s.flags[i] as number;
    b.path.add(k, valueAt(s.pathId, i), g);
    b.rawPath.add(k, valueAt(s.rawPath, i), g);
    b.ua.add(k, valueAt(s.uaId, i), g);
    b.accept.add(k, valueAt(s.accept, i), g);
    b.method.add(k, valueAt(s.method, i), g);
    b.status.add(k, valueAt(s.status, i), g);
    b.referrer.add(k, valueAt(s.referrer, i), g);
    b.rule.add(k, valueAt(s.rule, i), g);
    b.rulesVersion.add(k, valueAt(s.rulesVersion, i), g);
    b.source.add(k, valueAt(s.source, i), g);
    if (s.dedup !== null && s.dedup.present[i] === 1) b.dedup(k, s.dedup.hash[i] as bigint);
  }
  return b.finish();
}

/**
 * Compaction: merges a day's segments into as few as hold them (one unless the day has more than
 * `maxEvents` events or a body would pass MAX_BODY_BYTES; none for a day without events). The result holds the concatenation of their
 * events, sorted stably by ts, so for one output segment merge(a, b) = encode(events(a) ++ events(b)), byte for
 * byte: the columns are copied in that order into the same builder encodeSegment fills (decoded values were
 * checked by the decoder, so the encoder's checks pass).
 */
export function mergeSegments(segments: readonly Uint8Array[], options: EncodeOptions & { maxEvents?: number } = {}): Uint8Array[] {
  const maxEvents = options.maxEvents ?? MAX_SEGMENT_EVENTS;
  if (!(Number.isInteger(maxEvents) && maxEvents >= 1 && maxEvents <= MAX_SEGMENT_EVENTS))
    throw new SegmentInputError(`maxEvents must be an integer from 1 to ${MAX_SEGMENT_EVENTS}`);
  const level = checkedLevel(options);
  const segs = segments.map(decodeSegment);
  const n = segs.reduce((a, s) => a + s.n, 0);
  const starts: number[] = [];
  const segOf = new Uint32Array(n);
  let at = 0;
  segs.forEach((s, si) => {
    starts.push(at);
    segOf.fill(si, at, at + s.n);
    at += s.n;
  });
  const order = mergedOrder(segs, starts, n);
  const out: Uint8Array[] = [];
  const encode = (from: number, to: number): void => {
    try {
      out.push(frame(mergedBody(segs, segOf, starts, order, from, to), to - from, level));
    } catch (err) {
      if (!(err instanceof SegmentTooLargeError) || to - from < 2) throw err;
      const mid = from + Math.floor((to - from) / 2);
      encode(from, mid);
      encode(mid, to);
    }
  };
  for (let from = 0; from < n; from += maxEvents) encode(from, Math.min(n, from + maxEvents));
  return out;
}

/** Each column's uncompressed bytes in a segment, by name (for measurements). */
export function segmentColumns(bytes: Uint8Array): Record<string, Uint8Array> {
  const h = readSegmentHeader(bytes);
  const payload = bytes.subarray(HEADER_BYTES);
  const body = h.compression === 'none' ? payload : zstdDecompress(payload, h.bodyBytes);
  const r = new ByteReader(body, 'column directory');
  const count = r.u8();
  const dir: [number, number][] = [];
  for (let c = 0; c < count; c++) dir.push([r.u8(), r.varint()]);
  const out: Record<string, Uint8Array> = {};
  for (const [id, len] of dir) out[COLUMN_NAMES[id] ?? `column ${id}`] = r.take(len);
  return out;
}
