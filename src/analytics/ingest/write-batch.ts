// A batch of prepared events as the writer receives it: columns in typed arrays, and every text field
// dictionary-encoded in one string table per batch.
//
// Why not an array of per-event tuples: a batch of 1,000 events carries a few hundred distinct strings
// (paths, visitors, user agents, class names), not 10,000. Encoded once here, in the thread that prepares
// the events, the hand-off to the SQLite writer's worker thread copies the typed arrays as blocks of memory and each
// distinct string once (structured clone copies a repeated string every time it appears), and the writer
// looks up each distinct path, visitor and user agent once per batch rather than once per event.
import crypto from 'node:crypto';
import { dedupDigest, dedupKeyDay } from '../segments/dedup.ts';
import { digestDedupKeyAt, LINE_KEY_MAX_BYTES, lineKeyBytes } from './line-key.ts';

/**
 * One prepared event (what prepare.ts derives from a valid event): a flat tuple, packed into a WriteBatch with
 * the rest of its batch. `cls` is human | ai | crawler, `qualifying` 1 or 0.
 */
export type WriteEvent = [
  ts: number,
  day: number,
  rawPath: string,
  path: string,
  vkey: string,
  userAgent: string | null,
  accept: string | null,
  method: string | null,
  status: number | null,
  referrer: string | null,
  cls: EventClass,
  category: string | null,
  rule: string | null,
  qualifying: 0 | 1,
  dedupKey: string | null,
];

/** Where a batch came from (stored with each event). */
export type IngestSource = 'api' | 'collect' | 'import';

/** Events' classes as stored (`class` column). */
export type EventClass = 'human' | 'ai' | 'crawler';

/** Text fields, by their offset in an event's slice of `refs` (REF_WIDTH entries per event). */
export const R_RAW_PATH = 0;
export const R_PATH = 1;
export const R_VKEY = 2;
export const R_UA = 3;
export const R_ACCEPT = 4;
export const R_METHOD = 5;
export const R_REFERRER = 6;
export const R_CLASS = 7;
export const R_CATEGORY = 8;
export const R_RULE = 9;
export const R_DEDUP = 10;
export const REF_WIDTH = 11;

/** `refs` entry of an absent (null) text field. */
export const NO_STRING = -1;
/** `status` of an event without one. */
export const NO_STATUS = -1;

export interface WriteBatch {
  n: number;
  /** Distinct strings of the batch; `refs` point into it. */
  strings: string[];
  /** Per event: its text fields as indexes into `strings` (NO_STRING = null), REF_WIDTH per event. */
  refs: Int32Array;
  ts: Float64Array;
  day: Int32Array;
  /** HTTP status, NO_STATUS when absent. */
  status: Int32Array;
  /** 1 = a qualifying view. */
  qualifying: Uint8Array;
  /**
   * Dictionary ids already known for the strings, by string index, in each role (> 0 = the id; 0 = unknown;
   * -1 = not used so): set by DictionaryMirror.fill in the preparing thread, so the writer skips them.
   */
  known?: { paths: Float64Array; visitors: Float64Array; userAgents: Float64Array };
  /** Import keys given by their lines' digests (see LineKeys); an event with one has no R_DEDUP string. */
  lineKeys?: LineKeys;
  /**
   * `strings` joined on U+0000 while the batch crosses threads, in pieces of at most JOIN_PIECE_CHARS characters (a
   * longer string alone), `strings` then empty (joinStrings, splitStrings).
   */
  joined?: string[];
}

/**
 * Characters in one piece of WriteBatch.joined at most. Why pieces: V8 makes a string over 128 KiB a large object,
 * on pages of its own mapped for it and unmapped when it dies, and a batch's strings joined in one were ~300 KiB,
 * made again in each of the three threads they cross. A piece this size (64 KiB even in two-byte characters) is an
 * ordinary young object. Import of bench:import's 1M-line log: CPU 13.45 → 12.8 s, peak RSS 284 → 271 MB
 * (bench/README.md, Decisions, "a batch's strings joined in pieces").
 */
export const JOIN_PIECE_CHARS = 32_768;

/**
 * Joins a batch's strings (`joined`, `strings` emptied) for its way from an import thread to the writer; a batch with
 * a string holding U+0000 is left as it is (none does: prepare.ts refuses such events). Why: structured clone copies
 * an array of strings one string at a time, and an import's batches cross two threads (import thread, main thread,
 * writer): a 5,000-event batch carries about 7,600 strings, which the main thread took in and sent on without
 * reading one (its postMessage and the garbage of those strings were half of that thread, `npm run bench:import --
 * --profile`). A few pieces are copied as a few blocks.
 */
export function joinStrings(b: WriteBatch): void {
  const { strings } = b;
  if (strings.length === 0 || b.joined !== undefined) return;
  for (const s of strings) if (s.includes('\u0000')) return;
  const pieces: string[] = [];
  let from = 0;
  let chars = 0;
  for (let i = 0; i < strings.length; i++) {
    const len = (strings[i] as string).length + 1;
    if (i > from && chars + len > JOIN_PIECE_CHARS) {
      pieces.push(strings.slice(from, i).join('\u0000'));
      from = i;
      chars = 0;
    }
    chars += len;
  }
  pieces.push(strings.slice(from).join('\u0000'));
  b.joined = pieces;
  b.strings = [];
}

/** The batch's strings back from `joined` (joinStrings), where the writer takes it in; a batch without is left as it is. */
export function splitStrings(b: WriteBatch): WriteBatch {
  const pieces = b.joined;
  if (pieces === undefined) return b;
  const strings = (pieces[0] as string).split('\u0000');
  for (let k = 1; k < pieces.length; k++) for (const s of (pieces[k] as string).split('\u0000')) strings.push(s);
  b.strings = strings;
  b.joined = undefined;
  return b;
}

/**
 * The import dedup keys of a batch's log lines, as the lines' sha256 digests rather than key strings: the key of
 * event i (when occ[i] ≥ 0) is line-key.ts digestDedupKeyAt(digests[32i, 32i + 32), occ[i], ms[i]), the same
 * characters import.ts made before (dedupKeyOf). Why: a key is unique per line, so as a string it was a Map entry
 * of its own in packEvents, a string for structured clone to copy and one for the writer to parse again; as
 * bytes the batch carries 44 bytes per event in three typed arrays (npm run bench:import -- --profile).
 */
export interface LineKeys {
  digests: Uint8Array;
  /** Per event: the line's occurrence in its file (0 for its first copy), -1 for an event without a line key. */
  occ: Int32Array;
  /** Per event: the time the key names (epoch ms), NaN for none. */
  ms: Float64Array;
}

/** Strings and their ids, by position (two flat arrays: cheaper to copy between threads than pairs). */
export interface LearnedIds {
  keys: string[];
  ids: number[];
}

/**
 * The writer's answer to `known`, sent after the commit: the dictionary ids it resolved for strings a batch
 * carried no id for (DictionaryMirror.learn takes them in).
 */
export interface Learned {
  paths: LearnedIds;
  visitors: LearnedIds;
  userAgents: LearnedIds;
}

/**
 * User agents cached per project (a site sees a few thousand distinct ones in a day): by the writer and by the
 * preparing thread's mirror of its ids alike.
 */
export const USER_AGENT_CACHE = 20_000;

/** Encodes prepared events (WriteEvent tuples) into a WriteBatch. */
const EMPTY_I32 = new Int32Array(0);
const EMPTY_F64 = new Float64Array(0);
const EMPTY_U8 = new Uint8Array(0);

export function packEvents(events: readonly WriteEvent[]): WriteBatch {
  const builder = new BatchBuilder(events.length, true);
  for (const e of events) builder.add(e);
  return (
    builder.take() ?? {
      n: 0,
      strings: [],
      refs: new Int32Array(0),
      ts: new Float64Array(0),
      day: new Int32Array(0),
      status: new Int32Array(0),
      qualifying: new Uint8Array(0),
    }
  );
}

/**
 * A string's index in the batch being built, kept on an object that stands for the string in the caller's caches
 * (prepare.ts: a path's PathInfo, a visitor's key): `batch` is the BatchBuilder batch (`batchId`) it was given in,
 * `ref` its index there. BatchBuilder.addParsed reads a string's index from it, no Map lookup.
 */
export interface RefSlot {
  batch: number;
  ref: number;
}

/** Batch ids (BatchBuilder.batchId), unique in the process: a RefSlot of another batch never matches. */
let nextBatchId = 1;

/**
 * A WriteBatch built one prepared event at a time (packEvents is one `add` per event, then `take`). The import
 * prepares each line as it is read and adds it here at once, so what a batch holds until it is handed on is its
 * packed columns and distinct strings, not a parsed event and a tuple per line: those die young, where before
 * thousands of them lived through the scavenges of the main thread's small young generation (the CLI runs with
 * --max-semi-space-size=8) until their batch was prepared (npm run bench:import -- --profile: garbage collection
 * was a fifth of the main thread).
 */
export class BatchBuilder {
  n = 0;
  /** The batch being built (RefSlot.batch); a new one after each take(). */
  private batchId = nextBatchId++;
  private strings: string[] = [];
  private index = new Map<string, number>();
  // Empty until the first event (shared: nothing is ever written to an empty array; grow replaces them).
  private refs = EMPTY_I32;
  private ts = EMPTY_F64;
  private day = EMPTY_I32;
  private status = EMPTY_I32;
  private qualifying = EMPTY_U8;
  private lineKeys: LineKeys | null = null;
  /** Events the arrays are first made for (they double when full). */
  private readonly initial: number;

  /**
   * `initial`: the events the arrays are first made for (at least 16), or exactly that many with `exact` (packEvents,
   * which knows its count: a one-event request then allocates arrays of one event, which take() hands on as they
   * are, instead of arrays of 16 copied into arrays of one).
   */
  constructor(initial = 1024, exact = false) {
    this.initial = exact ? Math.max(initial, 1) : Math.max(initial, 16);
  }

  /**
   * Per field (R_*), the string of the event before and its index. Invariant: within one batch a string has one
   * index, so an equal string reuses it without the Map. Why: most fields repeat from one event to the next
   * (method, class, category, rule, often the user agent) and `ref` was 2.2 of the main thread's 22.9 µs per
   * imported line (`npm run bench:import -- --profile`, 1M lines), eleven Map lookups per event.
   */
  private lastStr: (string | null)[] = new Array<string | null>(REF_WIDTH).fill(null);
  private lastRef = new Int32Array(REF_WIDTH).fill(NO_STRING);

  private refAt(field: number, s: string | null): number {
    if (s === null) return NO_STRING;
    if (s === this.lastStr[field]) return this.lastRef[field] as number;
    const i = this.ref(s);
    this.lastStr[field] = s;
    this.lastRef[field] = i;
    return i;
  }

  private ref(s: string | null): number {
    if (s === null) return NO_STRING;
    let i = this.index.get(s);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(s);
      this.index.set(s, i);
    }
    return i;
  }

  /**
   * The index of `s`, which `slot` stands for, in this batch: the slot's when it was given in this batch, else a new
   * one (recorded in the slot). Not looked up in the Map: a string added through slots and also by `ref` (another
   * field, or a slot made again for it after its cache dropped the first) may then hold two indexes in one batch,
   * which the writer treats as two strings of the same text (it resolves and stores by text).
   */
  private refSlot(slot: RefSlot, s: string): number {
    if (slot.batch === this.batchId) return slot.ref;
    const i = this.strings.length;
    this.strings.push(s);
    slot.batch = this.batchId;
    slot.ref = i;
    return i;
  }

  /**
   * add() for an event of the import's shortcut (prepare.ts prepareParsedInto), its fields given one by one rather
   * than as a WriteEvent: the raw path through `rawSlot` (with `samePath`, the normalised path is the same text; else
   * `path` is looked up as add() does) and the visitor key through `vkeySlot`, the event's dedup key its line key.
   * Stores what add() stores for the same event, but that a string may hold two indexes (refSlot). Why: add()
   * looked up the raw path and the visitor key in the batch's Map for every event (BatchBuilder.add and its Map
   * were a tenth of the import thread, `npm run bench:import -- --profile`), and its tuple was garbage per line.
   */
  addParsed(
    ts: number,
    day: number,
    rawPath: string,
    rawSlot: RefSlot,
    samePath: boolean,
    path: string,
    vkey: string,
    vkeySlot: RefSlot,
    userAgent: string | null,
    accept: string | null,
    method: string | null,
    status: number | null,
    referrer: string | null,
    cls: EventClass,
    category: string | null,
    rule: string | null,
    qualifying: 0 | 1,
    digest: Uint8Array | string,
    occurrence: number,
    ms: number,
  ): void {
    if (this.n === this.ts.length) this.grow();
    const i = this.n++;
    const o = i * REF_WIDTH;
    const refs = this.refs;
    const raw = this.refSlot(rawSlot, rawPath);
    refs[o + R_RAW_PATH] = raw;
    refs[o + R_PATH] = samePath ? raw : this.ref(path);
    refs[o + R_VKEY] = this.refSlot(vkeySlot, vkey);
    refs[o + R_UA] = this.refAt(R_UA, userAgent);
    refs[o + R_ACCEPT] = this.refAt(R_ACCEPT, accept);
    refs[o + R_METHOD] = this.refAt(R_METHOD, method);
    refs[o + R_REFERRER] = this.refAt(R_REFERRER, referrer);
    refs[o + R_CLASS] = this.refAt(R_CLASS, cls);
    refs[o + R_CATEGORY] = this.refAt(R_CATEGORY, category);
    refs[o + R_RULE] = this.refAt(R_RULE, rule);
    refs[o + R_DEDUP] = NO_STRING;
    this.ts[i] = ts;
    this.day[i] = day;
    this.status[i] = status ?? NO_STATUS;
    this.qualifying[i] = qualifying;
    this.lineKey(i, digest, occurrence, ms);
  }

  /** Event i's line key (LineKeys). */
  private lineKey(i: number, digest: Uint8Array | string, occurrence: number, ms: number): void {
    if (this.lineKeys === null) {
      const c = this.ts.length;
      this.lineKeys = { digests: new Uint8Array(c * 32), occ: new Int32Array(c).fill(-1), ms: new Float64Array(c) };
    }
    const d = this.lineKeys.digests;
    if (typeof digest === 'string') for (let k = 0, at = i * 32; k < 32; k++) d[at + k] = digest.charCodeAt(k);
    else d.set(digest.subarray(0, 32), i * 32);
    this.lineKeys.occ[i] = occurrence;
    this.lineKeys.ms[i] = ms;
  }

  /**
   * Adds one event; `digest` (32 bytes, or a string of 32 latin1 characters, one per byte: crypto.hash's
   * 'latin1' output), `occurrence` and `ms` give it a line key (LineKeys) instead of its tuple's dedup key string.
   */
  add(e: WriteEvent, digest?: Uint8Array | string, occurrence?: number, ms?: number): void {
    if (this.n === this.ts.length) this.grow();
    const i = this.n++;
    const o = i * REF_WIDTH;
    const refs = this.refs;
    // (Indexed rather than destructured: this runs for every accepted event.)
    refs[o + R_RAW_PATH] = this.ref(e[2]);
    // The normalised path is most often the raw one: its index then is the raw path's, no lookup.
    refs[o + R_PATH] = e[3] === e[2] ? (refs[o + R_RAW_PATH] as number) : this.ref(e[3]);
    refs[o + R_VKEY] = this.ref(e[4]);
    refs[o + R_UA] = this.refAt(R_UA, e[5]);
    refs[o + R_ACCEPT] = this.refAt(R_ACCEPT, e[6]);
    refs[o + R_METHOD] = this.refAt(R_METHOD, e[7]);
    refs[o + R_REFERRER] = this.refAt(R_REFERRER, e[9]);
    refs[o + R_CLASS] = this.refAt(R_CLASS, e[10]);
    refs[o + R_CATEGORY] = this.refAt(R_CATEGORY, e[11]);
    refs[o + R_RULE] = this.refAt(R_RULE, e[12]);
    refs[o + R_DEDUP] = this.ref(e[14]);
    this.ts[i] = e[0];
    this.day[i] = e[1];
    this.status[i] = e[8] ?? NO_STATUS;
    this.qualifying[i] = e[13];
    if (digest !== undefined) this.lineKey(i, digest, occurrence as number, ms as number);
  }

  /** The batch of the events added (null when none), and a fresh start. */
  take(): WriteBatch | null {
    const n = this.n;
    if (n === 0) return null;
    const sized = <T extends Int32Array | Float64Array | Uint8Array>(a: T, len: number): T => (a.length === len ? a : (a.slice(0, len) as T));
    const b: WriteBatch = {
      n,
      strings: this.strings,
      refs: sized(this.refs, n * REF_WIDTH),
      ts: sized(this.ts, n),
      day: sized(this.day, n),
      status: sized(this.status, n),
      qualifying: sized(this.qualifying, n),
    };
    const lk = this.lineKeys;
    if (lk !== null) b.lineKeys = { digests: sized(lk.digests, n * 32), occ: sized(lk.occ, n), ms: sized(lk.ms, n) };
    this.n = 0;
    this.batchId = nextBatchId++;
    this.strings = [];
    this.index = new Map();
    this.lastStr.fill(null);
    this.lineKeys = null;
    this.refs = EMPTY_I32;
    this.ts = EMPTY_F64;
    this.day = EMPTY_I32;
    this.status = EMPTY_I32;
    this.qualifying = EMPTY_U8;
    return b;
  }

  private grow(): void {
    const c = this.ts.length === 0 ? this.initial : this.ts.length * 2;
    const more = <T extends Int32Array | Float64Array | Uint8Array>(a: T, len: number, fill = 0): T => {
      const b = new (a.constructor as new (n: number) => T)(len);
      if (fill !== 0) b.fill(fill);
      b.set(a);
      return b;
    };
    this.refs = more(this.refs, c * REF_WIDTH);
    this.ts = more(this.ts, c);
    this.day = more(this.day, c);
    this.status = more(this.status, c);
    this.qualifying = more(this.qualifying, c);
    if (this.lineKeys !== null) {
      const lk = this.lineKeys;
      this.lineKeys = { digests: more(lk.digests, c * 32), occ: more(lk.occ, c, -1), ms: more(lk.ms, c) };
    }
  }
}

/** The import dedup key of event `i`: its R_DEDUP string, or the key its line digest stands for (LineKeys), or null. */
export function dedupKeyOf(b: WriteBatch, i: number): string | null {
  const lk = b.lineKeys;
  if (lk !== undefined && (lk.occ[i] as number) >= 0)
    return digestDedupKeyAt(lk.digests.subarray(i * 32, i * 32 + 32), lk.occ[i] as number, lk.ms[i] as number);
  return textOf(b, i, R_DEDUP);
}

const keyScratch = Buffer.alloc(LINE_KEY_MAX_BYTES);

/**
 * The sha256 digest of event `i`'s dedup key (its first 8 bytes are the stored hash: dedupDigest), or null
 * for an event without a key. Equal to dedupDigest(dedupKeyOf(b, i)); for a line key it
 * hashes the key's bytes as lineKeyBytes writes them, no string made.
 */
export function dedupKeyDigest(b: WriteBatch, i: number): Buffer | null {
  const lk = b.lineKeys;
  if (lk !== undefined && (lk.occ[i] as number) >= 0) {
    const n = lk.occ[i] === 0 ? lineKeyBytes(keyScratch, lk.digests, i * 32, lk.ms[i] as number) : -1;
    if (n !== -1) return crypto.hash('sha256', keyScratch.subarray(0, n), 'buffer');
  }
  const k = dedupKeyOf(b, i);
  return k === null ? null : dedupDigest(k);
}

/**
 * dedupKeyDigest as a latin1 ('binary') string, one character per byte: the same 32 bytes. Why: the writer hashes
 * every imported line's key, and a digest as a Buffer is an ArrayBuffer with its own backing store each, where a
 * short string is a young-generation allocation (crypto.hash of a 226-byte line: 1.0 µs with 'binary' output
 * against 3.2 with 'buffer', best of 8 runs of 200k on the loaded 2-core machine; the writer's hashing was 1.9 of its
 * 18.4 µs per imported line, `npm run bench:import -- --profile`, 1M lines).
 */
export function dedupKeyDigestText(b: WriteBatch, i: number): string | null {
  const lk = b.lineKeys;
  if (lk !== undefined && (lk.occ[i] as number) >= 0) {
    const n = lk.occ[i] === 0 ? lineKeyBytes(keyScratch, lk.digests, i * 32, lk.ms[i] as number) : -1;
    if (n !== -1) return crypto.hash('sha256', keyScratch.subarray(0, n), 'binary');
  }
  const k = dedupKeyOf(b, i);
  return k === null ? null : crypto.hash('sha256', k, 'binary');
}

/** The big-endian 32-bit word of a latin1 digest string (dedupKeyDigestText) at byte `at`. */
export const digestTextWord = (d: string, at: number): number =>
  ((d.charCodeAt(at) << 24) | (d.charCodeAt(at + 1) << 16) | (d.charCodeAt(at + 2) << 8) | d.charCodeAt(at + 3)) >>> 0;

const wordsView = new DataView(new ArrayBuffer(8));

/**
 * The 64-bit hash whose big-endian words are `hi` and `lo`: exactly `(BigInt(hi) << 32n) | BigInt(lo)`, as one
 * BigInt made (read from 8 bytes) instead of four. Why: the import's writer makes one per imported line.
 */
export function hashOfWords(hi: number, lo: number): bigint {
  wordsView.setUint32(0, hi);
  wordsView.setUint32(4, lo);
  return wordsView.getBigUint64(0);
}

/** The UTC day event `i`'s dedup key names (dedupKeyDay), null when it names none or has no key. */
export function dedupKeyDayOf(b: WriteBatch, i: number): number | null {
  const lk = b.lineKeys;
  if (lk !== undefined && (lk.occ[i] as number) >= 0) {
    // The prefix is ms's base-36 digits (line-key.ts timePrefix), which dedupKeyDay reads back as ms.
    const ms = lk.ms[i] as number;
    return Number.isSafeInteger(ms) && ms >= 0
      ? Math.floor(ms / 86_400_000)
      : dedupKeyDay(digestDedupKeyAt(lk.digests.subarray(i * 32, i * 32 + 32), lk.occ[i] as number, ms));
  }
  const k = textOf(b, i, R_DEDUP);
  return k === null ? null : dedupKeyDay(k);
}

/** The text field `field` of event `i` (null when absent). */
export function textOf(b: WriteBatch, i: number, field: number): string | null {
  const r = b.refs[i * REF_WIDTH + field] as number;
  return r === NO_STRING ? null : (b.strings[r] as string);
}

/**
 * A small batch as it crosses to the writer thread (toWire / fromWire): its numbers in one plain array and its
 * strings in one string. Why: structured clone copies each typed array as its own buffer, and a small typed array
 * (held in the V8 heap) must first be given one: a 1-event WriteBatch carries eight (with `known`), and cloning
 * them was most of what posting it cost (13–20 µs against 3–5 µs in this form, posting 1-event writes to a worker
 * on the shared 2-core machine; the service's request thread spent a fifth of its time in `postMessage` under
 * `npm run bench:ingest -- --page-views`). Large batches go as they are (their arrays are copied as blocks).
 * Invariant: no string of a batch contains U+0000 (prepare.ts refuses events carrying one; toWire checks and
 * sends a batch with one as it is), so the strings are joined on it and split back exactly.
 */
export interface WireBatch {
  wire: true;
  n: number;
  /** `strings` joined on U+0000. */
  text: string;
  /** refs, ts, day, status, qualifying, then (when `known`) known.paths, known.visitors, known.userAgents. */
  nums: number[];
  known: boolean;
}

/** Batches of at most this many events go in the wire form. */
export const WIRE_MAX_EVENTS = 16;

/** The form of `b` to post to the writer thread: WireBatch when small (see WireBatch), else `b` itself. */
export function toWire(b: WriteBatch): WriteBatch | WireBatch {
  if (b.n > WIRE_MAX_EVENTS || b.strings.length === 0 || b.lineKeys !== undefined) return b;
  for (const s of b.strings) if (s.includes('\u0000')) return b;
  const nums: number[] = [];
  const put = (a: ArrayLike<number>) => {
    for (let i = 0; i < a.length; i++) nums.push(a[i] as number);
  };
  put(b.refs);
  put(b.ts);
  put(b.day);
  put(b.status);
  put(b.qualifying);
  if (b.known) {
    put(b.known.paths);
    put(b.known.visitors);
    put(b.known.userAgents);
  }
  return { wire: true, n: b.n, text: b.strings.join('\u0000'), nums, known: b.known !== undefined };
}

/** The WriteBatch that toWire encoded (or `b` itself when it was sent as it is). */
export function fromWire(b: WriteBatch | WireBatch): WriteBatch {
  if (!('wire' in b)) return b;
  const { n, nums } = b;
  const strings = b.text.split('\u0000');
  let o = 0;
  const take = <T extends Int32Array | Float64Array | Uint8Array>(a: T): T => {
    for (let i = 0; i < a.length; i++) a[i] = nums[o++] as number;
    return a;
  };
  const batch: WriteBatch = {
    n,
    strings,
    refs: take(new Int32Array(n * REF_WIDTH)),
    ts: take(new Float64Array(n)),
    day: take(new Int32Array(n)),
    status: take(new Int32Array(n)),
    qualifying: take(new Uint8Array(n)),
  };
  if (b.known) {
    const k = strings.length;
    batch.known = { paths: take(new Float64Array(k)), visitors: take(new Float64Array(k)), userAgents: take(new Float64Array(k)) };
  }
  return batch;
}
