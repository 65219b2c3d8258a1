// The analytics store on ClickHouse (AnalyticsStore, ../store/analytics-store.ts), through an executor
// (executor.ts): the official client against a server in production, chdb in tests — the same SQL text.
// The schema and the invariant that keeps every answer exact are in migrations.ts.
//
// - append: dedup keys checked against the project's stored keys and within the batch (first wins) under the
//   project's lock in this process, the visitors numbered through the SQL database (visitor-numbers.ts: numbers
//   committed before the insert), then one synchronous insert (fsynced, migrations.ts) that resolves once
//   ClickHouse has the rows; a failed insert is retried with the same insert_deduplication_token, so a retry
//   after a timeout or a restart adds nothing if the first attempt landed; an append with dedup keys is inserted
//   alone under a token made from its content, so the same batch sent again by any process is stored once.
// - reads: one query each, distinct counts of visitor numbers (uniqExact, or counts of distinct (path, visitor) pairs) and count()
//   over `events` rows of the project and range; a result and its totals come from one read of `events` in
//   one query (GROUPING SETS, or one row per pair plus one per visitor), i.e. one set of the table's parts. Rows are ordered and
//   paged here with the shared rules (export/rows.ts, export/answers.ts), so ordering is UTF-16 as in JS.
// - walks: the offset-0 page's result is kept per (walkId, kind, project, range) for snapshotMs after its last
//   use; later pages of the walk are served from it (per process, as the SQL store does).
// - reclassify: the distinct classification inputs of the project's events are classified again here; the
//   changed ones go to a temporary Join table and one mutation rewrites the events that have them
//   (mutations_sync = 2: resolves when done). A mutation rewrites each part and swaps it in atomically and
//   touches only parts that existed when it started: events appended meanwhile were classified by the
//   current rules already and are never lost.
//
// Values only travel as query parameters ({name:Type}) or inserted rows; the only names built into SQL text
// are the store's own (its database, a random table name).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { classify } from '../classify/classify.ts';
import { referrerHost } from '../classify/facets.ts';
import { isStaticAsset } from '../classify/normalize.ts';
import { isQualifyingParts, isQualifyingView } from '../classify/qualify.ts';
import { type AgentRow, crawlerCategoryOf, listPage, MAX_BUCKETS, type ReferrerRow, SeriesTooLongError } from '../export/answers.ts';
import { type ExportResult, type PathRow, pageOf, sortRows } from '../export/rows.ts';
import { bucketCount, bucketLabel, bucketsOf } from '../export/series.ts';
import {
  dedupKeyOf,
  NO_STATUS,
  R_ACCEPT,
  R_CATEGORY,
  R_CLASS,
  R_METHOD,
  R_PATH,
  R_RAW_PATH,
  R_REFERRER,
  R_RULE,
  R_UA,
  R_VKEY,
  textOf,
} from '../ingest/write-batch.ts';
import { Lru } from '../lru.ts';
import type { AnalyticsStore, ExportQuery, Page, RangeQuery, ReclassifyResult, SeriesResult } from '../store/analytics-store.ts';
import { INPUT_KEY, name, reclassifyDdl } from './cluster-ddl.ts';
import type { ClickHouseExecutor } from './executor.ts';
import { migrateClickHouse, STATE_TABLES, STATES_SELECT, type StateTable } from './migrations.ts';
import { ClickHouseStartError, checkClickHouseServer } from './server-check.ts';
import type { VisitorNumbering } from './visitor-numbers.ts';

export interface ClickHouseStoreDeps {
  ch: ClickHouseExecutor;
  /**
   * Dense per-project visitor numbers, from the SQL database that holds the projects (visitor-numbers.ts): what
   * `events` stores in place of the visitor key. Every process of a deployment numbers through the same database.
   */
  numbering: VisitorNumbering;
  now: () => number;
  /** A walk's snapshot lives this long after its last page request. */
  snapshotMs?: number;
  /** Walk results kept in memory. */
  resultEntries?: number;
  /** Further attempts of a failed insert (same dedup token). */
  insertRetries?: number;
  /** How long health() waits for an answer. */
  healthTimeoutMs?: number;
  /**
   * The cluster's name when `events` is a Distributed table over shard-local `events_local` tables
   * (docs/scaling.md): reclassification then rewrites the local tables ON CLUSTER (cluster-ddl.ts reclassifyDdl).
   */
  cluster?: string;
}

const MIN_DAY = -2_147_483_648;
const MAX_DAY = 2_147_483_647;
/** Rows per INSERT at most (ClickHouse wants thousands to a few hundred thousand rows per insert). */
const INSERT_ROWS = 100_000;
/** Dedup keys looked up per query at most. */
const KEY_CHUNK = 5_000;

const bounds = (q: RangeQuery, projectId: string) => ({ p: projectId, from: q.fromDay ?? MIN_DAY, to: q.toDay ?? MAX_DAY });
const emptyRange = (q: RangeQuery) => q.fromDay !== null && q.toDay !== null && q.fromDay >= q.toDay;
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const EMPTY: ExportResult = { totals: { human: 0, ai: 0, total: 0 }, rows: [] };

type CountRow = { g: number | string; path: string; human: string | number; ai: string | number; total: string | number };

/** No answer from the server at all (refused, unresolved, reset, timed out), as opposed to an answer that is an error. */
function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  // Node's socket errors (ECONNREFUSED, ENOTFOUND, ECONNRESET, EHOSTUNREACH, …); the server's own are numbers.
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return true;
  return /timeout/i.test((err as Error | null)?.message ?? '');
}

/** Opens the store: checks the server's version and functions, applies the migrations. */
export async function openClickHouseAnalyticsStore(deps: ClickHouseStoreDeps) {
  try {
    await checkClickHouseServer(deps.ch);
  } catch (err) {
    if (err instanceof ClickHouseStartError) throw err;
    const what = isConnectionError(err) ? 'is not reachable' : 'failed the start-up check';
    throw new ClickHouseStartError(`ClickHouse at ${deps.ch.describe} ${what}: ${(err as Error).message}`, { cause: err });
  }
  await migrateClickHouse(deps.ch, undefined, { numbering: deps.numbering });
  return createClickHouseAnalyticsStore(deps);
}

/** The store over a migrated database (openClickHouseAnalyticsStore checks and migrates first). */
export function createClickHouseAnalyticsStore(deps: ClickHouseStoreDeps) {
  const { ch } = deps;
  if (deps.cluster !== undefined) name(deps.cluster);
  const snapshotMs = deps.snapshotMs ?? 600_000;
  const walks = new Lru<string, { result: ExportResult; usedAt: number }>(Math.max(16, deps.resultEntries ?? 64));
  const locks = new Map<string, Promise<unknown>>();

  /** Runs `f` after the project's earlier appends and reclassifications in this process. */
  function withLock<T>(projectId: string, f: () => Promise<T>): Promise<T> {
    const prev = locks.get(projectId) ?? Promise.resolve();
    const run = prev.then(f);
    const tail = run.catch(() => undefined);
    locks.set(projectId, tail);
    void tail.then(() => {
      if (locks.get(projectId) === tail) locks.delete(projectId);
    });
    return run;
  }

  async function insertRows(table: string, rows: Record<string, unknown>[], token: string = randomUUID()): Promise<void> {
    for (let at = 0, chunk = 0; at < rows.length; at += INSERT_ROWS, chunk++) {
      const part = rows.slice(at, at + INSERT_ROWS);
      const settings = { insert_deduplication_token: `${token}:${chunk}`, deduplicate_blocks_in_dependent_materialized_views: 1 };
      for (let attempt = 0; ; attempt++) {
        try {
          await ch.insert(table, part, settings);
          break;
        } catch (err) {
          if (attempt >= (deps.insertRetries ?? 2)) throw err;
        }
      }
    }
  }

  // Group insert: the rows of appends that arrive while an insert is running go to ClickHouse together in the
  // next one (any projects), and each append resolves when the insert holding its rows has returned. An insert
  // costs a part and an fsync whatever its size, so this is what keeps small concurrent batches from paying one
  // each (bench:scale --backends clickhouse; docs/benchmarks.md). Dedup stays exact: the keys of rows waiting
  // or being inserted are in `inFlightKeys` until the insert has returned (then the table has them), and an
  // append checks both under its project's lock.
  //
  // An append with dedup keys is inserted alone, under a token made from its rows' content: re-sent after a failure between its events and its keys — by this process or by
  // another, with the same events — it carries the same token, so ClickHouse drops the events it already has and
  // (24.7+: a deduplicated block still goes through the materialised views) fills the missing keys; and two
  // processes appending the same keyed batch at once store it once. docs/clickhouse.md says what this covers.
  let waiting: { rows: Record<string, unknown>[]; token?: string; done: (err?: unknown) => void }[] = [];
  let flushing: Promise<void> | null = null;
  const inFlightKeys = new Map<string, Set<string>>();
  const inFlight = new Map<string, Set<Promise<void>>>();

  async function flushLoop(): Promise<void> {
    while (waiting.length > 0) {
      // Whole appends, up to INSERT_ROWS rows (at least one append), so that an insert's failure fails only
      // appends none of whose rows another insert wrote; a keyed append (it has its own token) goes alone.
      const first = waiting[0] as (typeof waiting)[number];
      let take = 1;
      if (first.token === undefined)
        for (let rows = first.rows.length; take < waiting.length; take++) {
          const next = waiting[take] as (typeof waiting)[number];
          if (next.token !== undefined || rows + next.rows.length > INSERT_ROWS) break;
          rows += next.rows.length;
        }
      const group = waiting.slice(0, take);
      waiting = waiting.slice(take);
      try {
        await insertRows(
          'events',
          group.flatMap((g) => g.rows),
          group[0]?.token,
        );
        for (const g of group) g.done();
      } catch (err) {
        for (const g of group) g.done(err);
      }
    }
    flushing = null;
  }

  /** Queues rows for the next group insert; resolves when it has returned. */
  function enqueue(projectId: string, rows: Record<string, unknown>[], keys: Set<string>): Promise<void> {
    let held = inFlightKeys.get(projectId);
    if (!held) {
      held = new Set();
      inFlightKeys.set(projectId, held);
    }
    for (const k of keys) held.add(k);
    const token = keys.size > 0 ? contentToken(rows) : undefined;
    const written = new Promise<void>((resolve, reject) => {
      waiting.push({ rows, ...(token ? { token } : {}), done: (err) => (err === undefined ? resolve() : reject(err)) });
    });
    flushing ??= flushLoop();
    const tracked = written.finally(() => {
      const h = inFlightKeys.get(projectId);
      for (const k of keys) h?.delete(k);
      if (h?.size === 0) inFlightKeys.delete(projectId);
      const set = inFlight.get(projectId);
      set?.delete(tracked);
      if (set?.size === 0) inFlight.delete(projectId);
    });
    let set = inFlight.get(projectId);
    if (!set) {
      set = new Set();
      inFlight.set(projectId, set);
    }
    set.add(tracked);
    return tracked;
  }

  /** The dedup token of a keyed append: a hash of its rows (the same events give the same token). */
  function contentToken(rows: Record<string, unknown>[]): string {
    const h = createHash('sha256');
    for (const r of rows) h.update(JSON.stringify(r)).update('\n');
    return `keyed:${h.digest('hex')}`;
  }

  /** Waits until the project's queued rows are written (or failed). */
  async function drained(projectId: string): Promise<void> {
    await Promise.allSettled([...(inFlight.get(projectId) ?? [])]);
  }

  async function storedKeys(projectId: string, keys: string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (let at = 0; at < keys.length; at += KEY_CHUNK) {
      const rows = await ch.query<{ k: string }>('SELECT DISTINCT key AS k FROM dedup_keys WHERE project = {p:String} AND key IN {keys:Array(String)}', {
        p: projectId,
        keys: keys.slice(at, at + KEY_CHUNK),
      });
      for (const r of rows) out.add(r.k);
    }
    return out;
  }

  async function append(projectId: string, source: string, b: Parameters<AnalyticsStore['append']>[2]): Promise<number> {
    const queued = await withLock(projectId, async () => {
      // Each event's key once: for an import's line key (write-batch.ts LineKeys) it is a string built here.
      const keys = Array.from({ length: b.n }, (_, i) => dedupKeyOf(b, i));
      const batchKeys = new Set<string>();
      for (const k of keys) if (k !== null) batchKeys.add(k);
      const stored = batchKeys.size > 0 ? await storedKeys(projectId, [...batchKeys]) : new Set<string>();
      const seen = new Set<string>();
      const rows: Record<string, unknown>[] = [];
      const staticPath = new Map<string, boolean>();
      for (let i = 0; i < b.n; i++) {
        const key = keys[i] as string | null;
        if (key !== null) {
          if (stored.has(key) || seen.has(key) || inFlightKeys.get(projectId)?.has(key)) continue;
          seen.add(key);
        }
        const path = textOf(b, i, R_PATH) as string;
        const method = textOf(b, i, R_METHOD);
        const st = b.status[i] as number;
        const status = st === NO_STATUS ? null : st;
        const referrer = textOf(b, i, R_REFERRER);
        const staticAsset = () => {
          let s = staticPath.get(path);
          if (s === undefined) {
            s = isStaticAsset(path);
            staticPath.set(path, s);
          }
          return s;
        };
        rows.push({
          project: projectId,
          day: b.day[i],
          ts: Math.trunc(b.ts[i] as number),
          path,
          raw_path: textOf(b, i, R_RAW_PATH),
          // The key for now; its number below.
          visitor: textOf(b, i, R_VKEY),
          user_agent: textOf(b, i, R_UA),
          accept: textOf(b, i, R_ACCEPT),
          method,
          status,
          referrer,
          ref_host: referrerHost(referrer),
          cls: textOf(b, i, R_CLASS),
          category: textOf(b, i, R_CATEGORY),
          rule: textOf(b, i, R_RULE),
          qualifying: b.qualifying[i] === 1 ? 1 : 0,
          view_shape: isQualifyingParts(method, status, 'human', staticAsset) ? 1 : 0,
          source,
          dedup_key: key,
        });
      }
      // Numbered (and committed in SQL) before the insert: a crash in between leaves unused numbers, and the same
      // batch sent again gets the same numbers, hence the same content token (visitor-numbers.ts).
      if (rows.length > 0) {
        const numbers = await deps.numbering.numbers(
          projectId,
          rows.map((r) => r.visitor as string),
        );
        for (const r of rows) r.visitor = numbers.get(r.visitor as string) as number;
      }
      // (Queued under the lock: the next append of the project sees these keys in flight.)
      return { n: rows.length, written: rows.length > 0 ? enqueue(projectId, rows, seen) : Promise.resolve() };
    });
    await queued.written;
    return queued.n;
  }

  function resultOf(rows: CountRow[]): ExportResult {
    let totals = EMPTY.totals;
    const out: PathRow[] = [];
    for (const r of rows) {
      const c = { human: Number(r.human), ai: Number(r.ai), total: Number(r.total) };
      if (Number(r.g) === 1) totals = c;
      else out.push({ path: r.path, ...c });
    }
    return { totals, rows: sortRows(out) };
  }

  /**
   * Whether this database has a table of visitor states (`visitor_states`, `visitor_days`): migrations 7 and 8 make
   * them on a single node, the operator on a cluster (cluster-ddl.ts), where their Distributed tables are made last,
   * once the states are whole.
   */
  const tablesMade = new Map<StateTable, Promise<boolean>>();
  const hasStates = (table: StateTable) => {
    let made = tablesMade.get(table);
    if (!made) {
      made = ch
        .query<{ n: string }>('SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = {t:String}', { t: table })
        .then((r) => Number(r[0]?.n ?? 0) > 0);
      tablesMade.set(table, made);
    }
    return made;
  };

  /** The project's state rebuilds: how many ever started, and how many have not finished. */
  async function rebuilds(projectId: string): Promise<{ started: number; open: number }> {
    const [r] = await ch.query<{ started: string; open: string }>(
      `SELECT count() AS started, countIf(d = 0) AS open
       FROM (SELECT id, max(done) AS d FROM visitor_state_rebuilds WHERE project = {p:String} GROUP BY id)`,
      { p: projectId },
    );
    return { started: Number(r?.started ?? 0), open: Number(r?.open ?? 0) };
  }

  /**
   * `read` of the project's states in `table`, or null (the caller reads the raw events) where the table is not
   * there or a rebuild of the project's states (reclassification) was under way: checked before and after the read,
   * so a rebuild that started or was running meanwhile sends the caller to the raw events.
   */
  async function fromStates<T>(table: StateTable, projectId: string, read: () => Promise<T>): Promise<T | null> {
    if (!(await hasStates(table))) return null;
    const before = await rebuilds(projectId);
    if (before.open !== 0) return null;
    const result = await read();
    const after = await rebuilds(projectId);
    return after.started === before.started && after.open === 0 ? result : null;
  }

  async function visitorsResult(q: ExportQuery): Promise<ExportResult> {
    // From the per-(day, path) states: per path, the union of its days' bitmaps of human and of other visitors; their
    // union for `total`; the totals row (g = 1) the unions over every path: the same sets as the query below counts.
    const rows = await fromStates('visitor_states', q.projectId, () =>
      ch.query<CountRow>(
        `SELECT grouping(path) AS g, path, bitmapCardinality(groupBitmapOrState(humans) AS h) AS human,
           bitmapCardinality(groupBitmapOrState(others) AS o) AS ai, bitmapCardinality(bitmapOr(h, o)) AS total
         FROM visitor_states WHERE project = {p:String} AND day >= {from:Int32} AND day < {to:Int32}
         GROUP BY GROUPING SETS ((path), ())`,
        bounds(q, q.projectId),
      ),
    );
    return rows ? resultOf(rows) : visitorsFromEvents(q);
  }

  async function visitorsFromEvents(q: ExportQuery): Promise<ExportResult> {
    // Each (path, visitor) pair once with its classes as bits (1 human, 2 ai); per visitor, its pairs and the OR
    // of their bits; then every pair counted under its path and every visitor once under the totals row (g = 1).
    // Invariant: a path's human / ai / total are the visitors with a pair on that path having bit 1 / bit 2 / any,
    // and the totals the visitors having them on any path — the three distinct counts, from one read of `events`
    // (one set of parts: totals and rows agree). Measured against uniqExactIf per path with GROUPING SETS on
    // bench:scale's 1M-event, 365-day dataset through chdb: 917 against 1,047 ms (365 days) and 122 against
    // 131 ms (30 days), medians of 7 rotating rounds, machine loaded.
    const rows = await ch.query<CountRow>(
      `SELECT e.1 AS g, e.2 AS path, countIf(bitAnd(e.3, 1) != 0) AS human, countIf(bitAnd(e.3, 2) != 0) AS ai, count() AS total
       FROM (
         SELECT arrayJoin(arrayPushBack(arrayMap(x -> (0, x.1, x.2), pf), (1, '', vf))) AS e
         FROM (
           SELECT visitor, groupArray((path, f)) AS pf, groupBitOr(f) AS vf
           FROM (
             SELECT visitor, path, groupBitOr(if(cls = 'human', 1, 2)) AS f FROM events
             WHERE project = {p:String} AND qualifying = 1 AND day >= {from:Int32} AND day < {to:Int32}
             GROUP BY visitor, path)
           GROUP BY visitor))
       GROUP BY g, path`,
      bounds(q, q.projectId),
    );
    return resultOf(rows);
  }

  async function viewsResult(q: ExportQuery): Promise<ExportResult> {
    const rows = await ch.query<CountRow>(
      `SELECT grouping(path) AS g, path, countIf(cls = 'human') AS human, countIf(cls != 'human') AS ai, count() AS total
       FROM events WHERE project = {p:String} AND qualifying = 1 AND day >= {from:Int32} AND day < {to:Int32}
       GROUP BY GROUPING SETS ((path), ())`,
      bounds(q, q.projectId),
    );
    return resultOf(rows);
  }

  async function walkPage(kind: string, q: ExportQuery, compute: (q: ExportQuery) => Promise<ExportResult>): Promise<Page> {
    if (emptyRange(q)) return pageOf(EMPTY, q.offset, q.limit);
    const key = JSON.stringify([q.walkId, kind, q.projectId, q.fromDay, q.toDay]);
    const now = deps.now();
    const pinned = q.offset > 0 ? walks.get(key) : undefined;
    if (pinned && now - pinned.usedAt <= snapshotMs) {
      pinned.usedAt = now;
      return pageOf(pinned.result, q.offset, q.limit);
    }
    const result = await compute(q);
    walks.set(key, { result, usedAt: now });
    return pageOf(result, q.offset, q.limit);
  }

  async function series(projectId: string, q: RangeQuery & { interval: 'day' | 'week' | 'month' }): Promise<SeriesResult> {
    const empty: SeriesResult = { interval: q.interval, series: [], totals: { human: 0, ai: 0, total: 0, crawlerRequests: 0 } };
    if (q.fromDay !== null && q.toDay !== null && bucketCount(q.fromDay, q.toDay, q.interval, MAX_BUCKETS) > MAX_BUCKETS)
      throw new SeriesTooLongError(q.interval);
    let range: { fromDay: number; toDay: number } | null;
    if (q.fromDay !== null && q.toDay !== null) range = q.fromDay < q.toDay ? { fromDay: q.fromDay, toDay: q.toDay } : null;
    else {
      const [r] = await ch.query<{ lo: number; hi: number; n: string }>(
        'SELECT min(day) AS lo, max(day) AS hi, count() AS n FROM data_days WHERE project = {p:String} AND day >= {from:Int32} AND day < {to:Int32}',
        bounds(q, projectId),
      );
      range = !r || Number(r.n) === 0 ? null : { fromDay: q.fromDay ?? Number(r.lo), toDay: q.toDay ?? Number(r.hi) + 1 };
    }
    if (range === null) return empty;
    if (bucketCount(range.fromDay, range.toDay, q.interval, MAX_BUCKETS) > MAX_BUCKETS) throw new SeriesTooLongError(q.interval);
    // A bucket is named by its first day, clipped to the range (export/series.ts): ISO weeks start on Monday
    // ((day + 3) mod 7 = 0; day 0 was a Thursday), months on the 1st (UTC).
    const bucket = `greatest(multiIf({interval:String} = 'day', day, {interval:String} = 'week', day - (((day + 3) % 7) + 7) % 7,
           toInt32(toStartOfMonth(toDate(greatest(day, 0))))), {from:Int32}) AS b`;
    const params = { p: projectId, from: range.fromDay, to: range.toDay, interval: q.interval };
    type Row = { g: number | string; b: number; human: string; ai: string; total: string; crawler: string };
    // From the per-day states: a bucket's (and the range's, g = 1) union of its days' bitmaps, beside its crawler
    // requests counted from the raw rows (a count is not a state a retried or rebuilt row may repeat). The same sets
    // and rows as the raw query below.
    const rows =
      (await fromStates('visitor_days', projectId, async () => {
        const [visitors, crawlers] = await Promise.all([
          ch.query<Omit<Row, 'crawler'>>(
            `SELECT grouping(b) AS g, ${bucket}, bitmapCardinality(groupBitmapOrState(humans) AS h) AS human,
               bitmapCardinality(groupBitmapOrState(others) AS o) AS ai, bitmapCardinality(bitmapOr(h, o)) AS total
             FROM visitor_days WHERE project = {p:String} AND day >= {from:Int32} AND day < {to:Int32}
             GROUP BY GROUPING SETS ((b), ())`,
            params,
          ),
          ch.query<{ g: number | string; b: number; crawler: string }>(
            `SELECT grouping(b) AS g, ${bucket}, count() AS crawler
             FROM events WHERE project = {p:String} AND day >= {from:Int32} AND day < {to:Int32} AND cls = 'crawler' AND rule IS NOT NULL
             GROUP BY GROUPING SETS ((b), ())`,
            params,
          ),
        ]);
        const key = (r: { g: number | string; b: number }) => (Number(r.g) === 1 ? 'all' : String(Number(r.b)));
        const merged = new Map<string, Row>(visitors.map((r) => [key(r), { ...r, crawler: '0' }]));
        for (const c of crawlers) {
          const r = merged.get(key(c));
          if (r) r.crawler = c.crawler;
          else merged.set(key(c), { g: c.g, b: c.b, human: '0', ai: '0', total: '0', crawler: c.crawler });
        }
        return [...merged.values()];
      })) ??
      (await ch.query<Row>(
        `SELECT grouping(b) AS g, ${bucket},
           uniqExactIf(visitor, qualifying = 1 AND cls = 'human') AS human, uniqExactIf(visitor, qualifying = 1 AND cls != 'human') AS ai,
           uniqExactIf(visitor, qualifying = 1) AS total, countIf(cls = 'crawler' AND rule IS NOT NULL) AS crawler
         FROM events
         WHERE project = {p:String} AND day >= {from:Int32} AND day < {to:Int32} AND (qualifying = 1 OR (cls = 'crawler' AND rule IS NOT NULL))
         GROUP BY GROUPING SETS ((b), ())`,
        params,
      ));
    const byStart = new Map<number, (typeof rows)[number]>();
    let totals = empty.totals;
    for (const r of rows) {
      const c = { human: Number(r.human), ai: Number(r.ai), total: Number(r.total), crawlerRequests: Number(r.crawler) };
      if (Number(r.g) === 1) totals = c;
      else byStart.set(Number(r.b), r);
    }
    const points = bucketsOf(range.fromDay, range.toDay, q.interval).map((bucket) => {
      const r = byStart.get(bucket.start);
      return {
        date: bucketLabel(bucket),
        human: r ? Number(r.human) : 0,
        ai: r ? Number(r.ai) : 0,
        total: r ? Number(r.total) : 0,
        crawlerRequests: r ? Number(r.crawler) : 0,
      };
    });
    return { interval: q.interval, series: points, totals };
  }

  async function agents(projectId: string, q: RangeQuery & { offset: number; limit: number }) {
    // An agent's class: its earliest (day, ts) event's (migration 6 dropped the insertion order).
    const rows = emptyRange(q)
      ? []
      : await ch.query<{ name: string; first_cls: string; visitors: string; views: string; requests: string }>(
          `SELECT rule AS name, argMin(cls, (day, ts)) AS first_cls, uniqExact(visitor) AS visitors, countIf(view_shape = 1) AS views, count() AS requests
           FROM events WHERE project = {p:String} AND day >= {from:Int32} AND day < {to:Int32} AND cls IN ('ai', 'crawler') AND rule IS NOT NULL
           GROUP BY rule`,
          bounds(q, projectId),
        );
    const out = rows
      .map(
        (r): AgentRow => ({
          agent: r.name,
          class: r.first_cls === 'ai' ? 'ai' : 'crawler',
          category: r.first_cls === 'ai' ? null : crawlerCategoryOf(r.name),
          visitors: Number(r.visitors),
          views: Number(r.views),
          requests: Number(r.requests),
        }),
      )
      .sort((a, b) => b.visitors - a.visitors || b.requests - a.requests || byName(a.agent, b.agent));
    return listPage(out, q.offset, q.limit);
  }

  async function referrers(projectId: string, q: RangeQuery & { offset: number; limit: number }) {
    const rows = emptyRange(q)
      ? []
      : await ch.query<{ name: string; visitors: string; views: string }>(
          `SELECT ref_host AS name, uniqExact(visitor) AS visitors, count() AS views
           FROM events WHERE project = {p:String} AND day >= {from:Int32} AND day < {to:Int32} AND qualifying = 1 AND ref_host IS NOT NULL
           GROUP BY ref_host`,
          bounds(q, projectId),
        );
    const out = rows
      .map((r): ReferrerRow => ({ host: r.name, visitors: Number(r.visitors), views: Number(r.views) }))
      .sort((a, b) => b.visitors - a.visitors || b.views - a.views || byName(a.host, b.host));
    return listPage(out, q.offset, q.limit);
  }

  type InputRow = {
    k: string;
    in_ua: string | null;
    in_raw_path: string;
    in_accept: string | null;
    in_method: string | null;
    in_status: number | null;
    in_path: string;
    cls: string;
    category: string | null;
    rule: string | null;
    qualifying: number;
    n: string;
  };

  function reclassify(projectId: string, onProgress?: (done: number, total: number) => void): Promise<ReclassifyResult> {
    return withLock(projectId, async () => {
      await drained(projectId);
      const groups = await ch.query<InputRow>(
        `SELECT ${INPUT_KEY} AS k, any(user_agent) AS in_ua, any(raw_path) AS in_raw_path, any(accept) AS in_accept, any(method) AS in_method,
           any(status) AS in_status, any(path) AS in_path, cls, category, rule, qualifying, count() AS n
         FROM events WHERE project = {p:String} GROUP BY k, cls, category, rule, qualifying`,
        { p: projectId },
      );
      let scanned = 0;
      for (const g of groups) scanned += Number(g.n);
      onProgress?.(0, scanned);
      let changed = 0;
      const mapping = new Map<string, { k: string; cls: string; category: string | null; rule: string | null; qualifying: number }>();
      for (const g of groups) {
        const c = classify({ userAgent: g.in_ua, path: g.in_raw_path, accept: g.in_accept });
        const status = g.in_status === null ? null : Number(g.in_status);
        const qualifying = isQualifyingView({ method: g.in_method, status, path: g.in_path, class: c.class }) ? 1 : 0;
        if (c.class !== g.cls || c.category !== g.category || c.rule !== g.rule || qualifying !== Number(g.qualifying)) {
          changed += Number(g.n);
          mapping.set(g.k, { k: g.k, cls: c.class, category: c.category, rule: c.rule, qualifying });
        }
      }
      if (mapping.size > 0) await rewrite(projectId, [...mapping.values()]);
      onProgress?.(scanned, scanned);
      return { scanned, changed };
    });
  }

  /**
   * Rewrites the classes of the project's events whose input key is in `mapping` (one mutation, of the shard-local
   * tables ON CLUSTER on a cluster: cluster-ddl.ts reclassifyDdl), then records days that gained data.
   */
  async function rewrite(projectId: string, mapping: Record<string, unknown>[]): Promise<void> {
    const ddl = reclassifyDdl({
      database: ch.database,
      table: `reclass_${randomBytes(8).toString('hex')}`,
      ...(deps.cluster ? { cluster: deps.cluster } : {}),
    });
    // The new classes' distinct values, numbered: one UPDATE of the mutation each.
    const targets = new Map<string, number>();
    const rows = mapping.map((m) => {
      const target = JSON.stringify([m.cls, m.category, m.rule, m.qualifying]);
      let n = targets.get(target);
      if (n === undefined) {
        n = targets.size;
        targets.set(target, n);
      }
      return { p: projectId, n, ...m };
    });
    // The project's visitor states follow the events: marked as being rebuilt before the events change (reads then
    // take the raw events), deleted and made again from the rewritten events after, then marked done (with any
    // rebuild a crash left open). Appends meanwhile add states for their own events, which the new states repeat:
    // a union counts a number once. A failed rewrite leaves the mark open: reads stay on the raw events.
    const states: StateTable[] = [];
    for (const table of STATE_TABLES) if (await hasStates(table)) states.push(table);
    if (states.length > 0) await ch.insert('visitor_state_rebuilds', [{ project: projectId, id: randomUUID(), done: 0 }]);
    try {
      await ch.command(ddl.createRows);
      await ch.insert(ddl.rowsTable, rows);
      for (const sql of ddl.prepare) await ch.command(sql);
      try {
        await ch.command(ddl.mutate(targets.size), {}, ddl.mutateSettings);
      } catch (err) {
        // A failed mutation would be retried by the server forever: stop it.
        await ch.command(ddl.kill).catch(() => undefined);
        throw err;
      }
      await ch.command(
        `INSERT INTO data_days SELECT DISTINCT project, day FROM events
         WHERE project = {p:String} AND (qualifying = 1 OR (cls IN ('ai', 'crawler') AND rule IS NOT NULL))`,
        { p: projectId },
      );
      if (states.length > 0) {
        // The project named through the rows table, as the events' mutation does: no query parameter in a mutation
        // (on a cluster, of the shard-local states ON CLUSTER). The new states go through the table of the reads: on
        // a cluster, its Distributed table puts them on the project's shard.
        for (const table of states) {
          await ch.command(ddl.clearStates(table), {}, ddl.mutateSettings);
          await ch.command(`INSERT INTO ${table} ${STATES_SELECT[table]('project = {p:String}')}`, { p: projectId });
        }
        const open = await ch.query<{ id: string }>('SELECT id FROM visitor_state_rebuilds WHERE project = {p:String} GROUP BY id HAVING max(done) = 0', {
          p: projectId,
        });
        await ch.insert(
          'visitor_state_rebuilds',
          open.map((r) => ({ project: projectId, id: r.id, done: 1 })),
        );
      }
    } finally {
      for (const sql of ddl.drop) await ch.command(sql).catch(() => undefined);
    }
  }

  async function health(): Promise<{ ok: true } | { ok: false; reason: string }> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        ch.query('SELECT 1 AS ok'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${deps.healthTimeoutMs ?? 5000} ms`)), deps.healthTimeoutMs ?? 5000);
        }),
      ]);
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: `ClickHouse at ${ch.describe} is not reachable: ${(err as Error).message}` };
    } finally {
      clearTimeout(timer);
    }
  }

  const store = {
    append: (projectId, source, batch) => append(projectId, source, batch),
    visitors: (q) => walkPage('visitors', q, visitorsResult),
    views: (q) => walkPage('views', q, viewsResult),
    series,
    agents,
    referrers,
    reclassify,
    // No summaries or compaction of its own: ClickHouse merges parts itself (system.parts has their figures).
    counters: () => ({}),
    health,
    async warmUp() {},
    startBackground() {},
    // Walk snapshots are not caches: forgetting one would change the next page of its walk.
    clearCaches() {},
    async close() {
      await Promise.all([...locks.values()]);
      await flushing;
      await ch.close();
    },
  } satisfies AnalyticsStore;
  return store;
}

export type ClickHouseAnalyticsStore = ReturnType<typeof createClickHouseAnalyticsStore>;
