// Per-event derivation for ingest: validate → normalise → classify → qualify → visitor key. No I/O.
//
// Ingest traffic repeats itself: a few hundred user agents, a few thousand paths, each visitor several
// times a day. The pure functions are memoised here under exactly the inputs they depend on, in bounded
// caches (GenerationCache), so a 1,000-event batch costs a few lookups per event instead of regexes,
// percent-decoding and an HMAC each:
// - path info by raw path/URL: normalizePath, isMarkdownPath (raw) and isStaticAsset (normalised);
// - classification by user agent, Accept and whether the path is a Markdown one — classifyParts depends on
//   nothing else;
// - visitor keys by (project secret + rotation generation, rotation period, ip, user agent): for a given
//   secret and period the HMAC is a function of (ip, user agent). A change of a project's secret or rotation
//   setting starts a new generation, so no key computed under the old settings is ever reused.
// Long inputs (rare, often abuse) bypass the caches, so their memory stays bounded.
import { textProblem } from '../../lib/text.ts';
import { type Classification, classifyParts } from '../classify/classify.ts';
import { hashedVisitorKey, rotationPeriod, type VisitorIdRotation, visitorKey } from '../classify/identity.ts';
import { isMarkdownPath, isStaticAsset, normalizePath } from '../classify/normalize.ts';
import { isQualifyingParts } from '../classify/qualify.ts';
import { utcDay } from '../dates.ts';
import { GenerationCache } from '../lru.ts';
import type { RawEvent } from './event.ts';
import { EVENT_LIMITS, type IngestEvent, validateIngestEvent } from './event.ts';
import type { BatchBuilder, RefSlot, WriteEvent } from './write-batch.ts';

/** How far in the future a timestamp may be (clock skew between edge servers and us). */
export const MAX_FUTURE_MS = 24 * 3_600_000;

const TEXT_FIELDS = ['path', 'url', 'timestamp', 'userAgent', 'ip', 'visitorId', 'accept', 'method', 'referrer'] as const;

export interface PrepareProject {
  id: string;
  visitorSecret: string;
  rotation: VisitorIdRotation;
}

export interface PrepareCacheSizes {
  paths?: number;
  classes?: number;
  visitors?: number;
}

/** A raw path's normalisation; its RefSlot is the raw path's index in the batch being built (prepareParsedInto). */
interface PathInfo extends RefSlot {
  path: string | null;
  markdown: boolean;
  asset: boolean;
  /** The normalised path is the raw one. */
  same: boolean;
}

/** A visitor's key; its RefSlot is the key's index in the batch being built (prepareParsedInto). */
interface VisitorEntry extends RefSlot {
  key: string;
}

/** Inputs longer than this are computed without caching. */
const CACHE_MAX_PATH = 512;
const CACHE_MAX_UA = 512;
const CACHE_MAX_ACCEPT = 256;

function pathInfoOf(raw: string): PathInfo {
  const path = normalizePath(raw);
  return { path, markdown: isMarkdownPath(raw), asset: path !== null && isStaticAsset(path), same: path === raw, batch: 0, ref: 0 };
}

/** The memoising preparer (see above). A factory, long only as a module is: its bounded caches and the short functions over them. */
export function createEventPreparer(sizes: PrepareCacheSizes = {}) {
  const paths = new GenerationCache<string, PathInfo>(sizes.paths ?? 100_000);
  /** user agent → Accept → [classification of a non-Markdown path, of a Markdown path]. */
  const classes = new GenerationCache<string, Map<string, [Classification | undefined, Classification | undefined]>>(sizes.classes ?? 8_000);
  /**
   * Visitor keys by generation → rotation period → user agent → ip (nested rather than one key string: no string
   * is built and hashed per event, and an entry holds its ip and key only). Bounded by `visitorMax` (ip, key)
   * entries: past it, all are dropped. 100,000, not more: 250,000 spared an import of bench:import's 1M-line log
   * 280,000 of its 480,000 HMACs (200,000 distinct pairs), but its peak RSS reached 300 MB at 2M lines
   * (`npm run bench:import -- --lines 2M --rounds 1`), the import's bound.
   */
  const visitors = new Map<number, Map<string, Map<string, Map<string, VisitorEntry>>>>();
  const visitorMax = sizes.visitors ?? 100_000;
  let visitorEntries = 0;
  /**
   * The user-agent level of `visitors` for the last (generation, period) asked for, null when none (an import's
   * lines come day after day): two lookups per event fewer.
   */
  let lastByUa: Map<string, Map<string, VisitorEntry>> | null = null;
  let lastByUaGen = -1;
  let lastByUaPeriod = '';
  /** Per project: its secret and rotation setting, and the generation number they get in visitor keys. */
  const generations = new Map<string, { secret: string; rotation: VisitorIdRotation; gen: number }>();
  let nextGen = 0;
  /** Rotation period per (rotation, day): monthly periods cost a Date otherwise. */
  const periods = new Map<string, string>();

  function pathInfo(raw: string): PathInfo {
    if (raw.length > CACHE_MAX_PATH) return pathInfoOf(raw);
    let info = paths.get(raw);
    if (info === undefined) {
      info = pathInfoOf(raw);
      paths.set(raw, info);
    }
    return info;
  }

  function classification(ua: string | null, accept: string | null, markdownPath: boolean): Classification {
    if ((ua !== null && ua.length > CACHE_MAX_UA) || (accept !== null && accept.length > CACHE_MAX_ACCEPT)) return classifyParts(ua, accept, markdownPath);
    // Two levels (user agent, then Accept) rather than one concatenated key: no string is built per event.
    // NUL never occurs in a field here (events carrying one are refused first): it stands for "absent".
    const uaKey = ua ?? '\u0000';
    let byAccept = classes.get(uaKey);
    if (byAccept === undefined) {
      byAccept = new Map();
      classes.set(uaKey, byAccept);
    }
    const acceptKey = accept ?? '\u0000';
    let pair = byAccept.get(acceptKey);
    if (pair === undefined) {
      if (byAccept.size >= 64) byAccept.clear();
      pair = [undefined, undefined];
      byAccept.set(acceptKey, pair);
    }
    const slot = markdownPath ? 1 : 0;
    let c = pair[slot];
    if (c === undefined) {
      c = Object.freeze(classifyParts(ua, accept, markdownPath));
      pair[slot] = c;
    }
    return c;
  }

  function generation(project: PrepareProject): number {
    const g = generations.get(project.id);
    if (g && g.secret === project.visitorSecret && g.rotation === project.rotation) return g.gen;
    if (generations.size >= 10_000) generations.clear();
    const gen = nextGen++;
    generations.set(project.id, { secret: project.visitorSecret, rotation: project.rotation, gen });
    return gen;
  }

  /** The last period asked for (an import's lines come day after day): no key string, no lookup. */
  let lastRotation: VisitorIdRotation | null = null;
  let lastDay = Number.NaN;
  let lastPeriod = '';

  function period(rotation: VisitorIdRotation, ts: number, day: number): string {
    if (rotation === 'none') return '';
    if (rotation === lastRotation && day === lastDay) return lastPeriod;
    const p = periodOf(rotation, ts, day);
    lastRotation = rotation;
    lastDay = day;
    lastPeriod = p;
    return p;
  }

  function periodOf(rotation: VisitorIdRotation, ts: number, day: number): string {
    const k = `${rotation}${day}`;
    let p = periods.get(k);
    if (p === undefined) {
      p = rotationPeriod(rotation, ts);
      if (periods.size >= 4096) periods.clear();
      periods.set(k, p);
    }
    return p;
  }

  function visitor(project: PrepareProject, gen: number, ev: IngestEvent, ts: number, day: number): VisitorEntry {
    const id = ev.visitorId;
    if (id !== undefined) {
      const trimmed = id.trim();
      if (trimmed !== '') return { key: `v:${trimmed}`, batch: 0, ref: 0 };
    }
    const ip = ev.ip ?? '';
    const ua = ev.userAgent ?? '';
    if (ua.length > CACHE_MAX_UA) return { key: keyOf(project, ip, ua, ts), batch: 0, ref: 0 };
    if (visitorEntries >= visitorMax) {
      visitors.clear();
      visitorEntries = 0;
      lastByUa = null;
    }
    const per = period(project.rotation, ts, day);
    let byUa = lastByUa;
    if (byUa === null || gen !== lastByUaGen || per !== lastByUaPeriod) {
      let byPeriod = visitors.get(gen);
      if (byPeriod === undefined) {
        byPeriod = new Map();
        visitors.set(gen, byPeriod);
      }
      byUa = byPeriod.get(per) ?? null;
      if (byUa === null) {
        byUa = new Map();
        byPeriod.set(per, byUa);
      }
      lastByUa = byUa;
      lastByUaGen = gen;
      lastByUaPeriod = per;
    }
    let byIp = byUa.get(ua);
    if (byIp === undefined) {
      byIp = new Map();
      byUa.set(ua, byIp);
    }
    let v = byIp.get(ip);
    if (v === undefined) {
      v = { key: hashedVisitorKey(project.visitorSecret, per, ip, ua), batch: 0, ref: 0 };
      byIp.set(ip, v);
      visitorEntries++;
    }
    return v;
  }

  let lastInfo: PathInfo | null = null;
  const normalize = (raw: string): string | null => {
    lastInfo = pathInfo(raw);
    return lastInfo.path;
  };

  const preparer = {
    /**
     * Validates one event and derives what storing it needs (the writer's tuple); returns the error (naming
     * the field) for a rejected one. `gen` comes from beginBatch for the same project.
     */
    prepare(raw: unknown, project: PrepareProject, gen: number, now: number, dedupKey: string | null): WriteEvent | string {
      lastInfo = null;
      const v = validateIngestEvent(raw, now, normalize);
      if (!v.ok) return v.error;
      const ev = v.event;
      // PostgreSQL text cannot hold U+0000, and a lone surrogate is stored as U+FFFD (so the visitor or
      // path read back is not the one looked up): refuse both for every dialect alike (src/lib/text.ts).
      for (const field of TEXT_FIELDS) {
        const value = ev[field];
        const problem = typeof value === 'string' ? textProblem(value) : null;
        if (problem) return `${field} ${problem}`;
      }
      const ts = v.timestampMs;
      if (ts > now + MAX_FUTURE_MS) return 'timestamp is more than 24 hours in the future';
      if (ts < 0) return 'timestamp must not be before 1970-01-01';
      const rawPath = (ev.path ?? ev.url) as string;
      return derive(ev, rawPath, v.path, (lastInfo as PathInfo | null) ?? pathInfo(rawPath), ts, project, gen, dedupKey);
    },

    /**
     * prepare for an event of the import's byte parser (logparse.ts parseCombinedBytes) whose time is `ms`:
     * exactly prepare's result, without the generic checks the parser already guarantees. Invariant: such an event
     * has only the keys path, timestamp (new Date(ms).toISOString(), or absent: the parser's `iso` false, and then
     * made here for an event handed to prepare, withTimestamp), method (ASCII letters), status (100–599), ip,
     * referrer and userAgent, all strings of ASCII bytes (so no lone surrogate, and length = characters). When its
     * fields are within EVENT_LIMITS, hold no NUL and ms is from 1970 to MAX_FUTURE_MS ahead, the schema, the
     * timestamp re-parse and the text checks all pass, so only the path normalisation (needed for the result)
     * remains; any other event goes through prepare, errors and all. Checked on arbitrary and hostile lines
     * against prepare (test/analytics/prepare.test.ts). Why: the generic validation was most of the import's
     * "prepare" stage, a third of its main thread (npm run bench:import -- --profile).
     */
    prepareParsed(ev: RawEvent, ms: number, project: PrepareProject, gen: number, now: number, dedupKey: string | null): WriteEvent | string {
      const rawPath = ev.path;
      if (rawPath === undefined || !shortcutFits(ev, rawPath, ms, now)) return preparer.prepare(withTimestamp(ev, ms), project, gen, now, dedupKey);
      const info = pathInfo(rawPath);
      if (info.path === null) return preparer.prepare(withTimestamp(ev, ms), project, gen, now, dedupKey);
      return derive(ev as IngestEvent, rawPath, info.path, info, ms, project, gen, dedupKey);
    },

    /**
     * prepareParsed, the event then added to `builder` (BatchBuilder.addParsed, with its line key: `digest`,
     * `occurrence`, `keyMs`): null, or the reason it was refused (nothing added). Invariant: the batch holds what
     * `builder.add(prepareParsed(…), digest, occurrence, keyMs)` would put in it (checked against it in
     * test/analytics/prepare.test.ts). Why: no WriteEvent per line, and the raw path's and the visitor key's
     * indexes in the batch come from their cache entries (RefSlot) instead of the batch's Map.
     */
    prepareParsedInto(
      builder: BatchBuilder,
      ev: RawEvent,
      ms: number,
      project: PrepareProject,
      gen: number,
      now: number,
      digest: Uint8Array | string,
      occurrence: number,
      keyMs: number,
    ): string | null {
      const rawPath = ev.path;
      let info: PathInfo | null = null;
      if (rawPath !== undefined && shortcutFits(ev, rawPath, ms, now)) info = pathInfo(rawPath);
      if (info === null || info.path === null) {
        const r = preparer.prepare(withTimestamp(ev, ms), project, gen, now, null);
        if (typeof r === 'string') return r;
        builder.add(r, digest, occurrence, keyMs);
        return null;
      }
      const e = ev as IngestEvent;
      const ua = e.userAgent ?? null;
      const accept = e.accept ?? null;
      const method = e.method ?? null;
      const status = e.status ?? null;
      const cls = classification(ua, accept, info.markdown);
      const qualifying = isQualifyingParts(method, status, cls.class, info.asset);
      const day = utcDay(ms);
      const v = visitor(project, gen, e, ms, day);
      builder.addParsed(
        ms,
        day,
        rawPath as string,
        info,
        info.same,
        info.path,
        v.key,
        v,
        ua,
        accept,
        method,
        status,
        e.referrer ?? null,
        cls.class,
        cls.category,
        cls.rule,
        qualifying ? 1 : 0,
        digest,
        occurrence,
        keyMs,
      );
      return null;
    },

    /** The visitor-key generation of a project for this batch (call once per batch). */
    beginBatch(project: PrepareProject): number {
      return generation(project);
    },

    clear(): void {
      paths.clear();
      classes.clear();
      visitors.clear();
      visitorEntries = 0;
      lastByUa = null;
      generations.clear();
      periods.clear();
      lastRotation = null;
    },
  };
  return preparer;

  /** What storing a valid event needs (the writer's tuple). */
  function derive(
    ev: IngestEvent,
    rawPath: string,
    path: string,
    info: PathInfo,
    ts: number,
    project: PrepareProject,
    gen: number,
    dedupKey: string | null,
  ): WriteEvent {
    const cls = classification(ev.userAgent ?? null, ev.accept ?? null, info.markdown);
    const qualifying = isQualifyingParts(ev.method, ev.status, cls.class, info.asset);
    const day = utcDay(ts);
    const vkey = visitor(project, gen, ev, ts, day).key;
    return [
      ts,
      day,
      rawPath,
      path,
      vkey,
      ev.userAgent ?? null,
      ev.accept ?? null,
      ev.method ?? null,
      ev.status ?? null,
      ev.referrer ?? null,
      cls.class,
      cls.category,
      cls.rule,
      qualifying ? 1 : 0,
      dedupKey,
    ];
  }
}

/** visitorKey of a visitor without an id; its input object made only here, on a cache miss (not one per event). */
function keyOf(project: PrepareProject, ip: string, ua: string, ts: number): string {
  return visitorKey({ secret: project.visitorSecret, rotation: project.rotation, visitorId: null, ip, userAgent: ua, timestampMs: ts });
}

/**
 * A byte-parsed event with its `timestamp` (new Date(ms).toISOString(), its keys in the parser's order), for prepare:
 * the import's parser leaves it out (logparse.ts CombinedBytesState.iso), since the shortcut reads `ms` alone. Why:
 * a Date and a 24-character string per line for the few lines the shortcut hands to prepare.
 */
function withTimestamp(ev: RawEvent, ms: number): RawEvent {
  if (ev.timestamp !== undefined) return ev;
  // The parser's order (path, timestamp, method, status, ip, referrer, userAgent); any other key after them.
  const { path, method, status, ...rest } = ev;
  const full: RawEvent = {};
  if (path !== undefined) full.path = path;
  full.timestamp = new Date(ms).toISOString();
  if (method !== undefined) full.method = method;
  if (status !== undefined) full.status = status;
  return Object.assign(full, rest);
}

/**
 * Whether a parsed line can take the import's shortcut (prepareParsed, prepareParsedInto): its path and fields are
 * within EVENT_LIMITS, hold no NUL, and its time is from 1970 to MAX_FUTURE_MS ahead of `now`.
 */
function shortcutFits(ev: RawEvent, rawPath: string, ms: number, now: number): boolean {
  return (
    rawPath.length > 0 &&
    rawPath.length <= EVENT_LIMITS.path &&
    ms >= 0 &&
    ms <= now + MAX_FUTURE_MS &&
    (ev.method === undefined || ev.method.length <= EVENT_LIMITS.method) &&
    fits(ev.ip, EVENT_LIMITS.ip) &&
    fits(ev.userAgent, EVENT_LIMITS.userAgent) &&
    fits(ev.referrer, EVENT_LIMITS.referrer) &&
    !rawPath.includes('\u0000')
  );
}

const fits = (value: string | undefined, max: number): boolean => value === undefined || (value.length <= max && !value.includes('\u0000'));

export type EventPreparer = ReturnType<typeof createEventPreparer>;
