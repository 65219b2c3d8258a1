// The stored form of raw events (migration 0007): user agents through a per-project dictionary, the raw path
// only when it differs from the normalised one — and everything that reads raw events (reclassify, the
// views export, import deduplication) still exact, for new rows and for rows stored before 0007.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { classify } from '../../src/analytics/classify/classify.ts';
import { normalizePath } from '../../src/analytics/classify/normalize.ts';
import { isQualifyingView } from '../../src/analytics/classify/qualify.ts';
import { createEventPreparer } from '../../src/analytics/ingest/prepare.ts';
import { packEvents, type WriteEvent } from '../../src/analytics/ingest/write-batch.ts';
import { createGroupWriter } from '../../src/analytics/ingest/writer/ingest-writer.ts';
import { analyticsStore as store } from '../../src/analytics/store/store.ts';
import { type Database, migrate } from '../../src/db/index.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';
import { services } from './services.ts';
import { type LegacyRow, rewindToEventRows, rewriteStoredEvents, storedRows } from './stored-events.ts';

const UA_FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
const UA_CLAUDE = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)';
const UA_GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const UA_CURL = 'curl/8.5.0';

/** Events covering the stored forms: raw path equal / not equal to the normalised one, every UA form. */
const EVENTS = [
  { path: '/docs/a', timestamp: '2026-05-01T10:00:00Z', userAgent: UA_FIREFOX, visitorId: 'v1' },
  { path: '/docs/a/?utm=x', timestamp: '2026-05-01T10:01:00Z', userAgent: UA_FIREFOX, visitorId: 'v1' },
  { url: 'https://docs.example.com/docs/b.md', timestamp: '2026-05-01T10:02:00Z', userAgent: UA_CURL, visitorId: 'v2' },
  { path: '/docs/c', timestamp: '2026-05-01T10:03:00Z', userAgent: UA_CLAUDE, visitorId: 'v3' },
  { path: '/docs/c', timestamp: '2026-05-01T10:04:00Z', userAgent: UA_GOOGLEBOT, visitorId: 'v4' },
  { path: '/docs/d', timestamp: '2026-05-01T10:05:00Z', visitorId: 'v5' },
  { path: '/docs/e', timestamp: '2026-05-01T10:06:00Z', userAgent: '', visitorId: 'v6' },
  { path: '/docs/e', timestamp: '2026-05-01T10:07:00Z', userAgent: UA_CURL, accept: 'text/markdown, text/html;q=0.5', visitorId: 'v7' },
  { path: '/img/logo.png', timestamp: '2026-05-01T10:08:00Z', userAgent: UA_FIREFOX, visitorId: 'v1' },
];

interface Stored {
  raw: string;
  ua: string | null;
  cls: string;
  rule: string | null;
  qualifying: number;
}

async function storedEvents(db: Database, projectId: string): Promise<Stored[]> {
  const ord = (await store.selectProjectOrd(db.kysely, projectId)) as number;
  const pathOf = new Map((await db.kysely.selectFrom('analytics_paths').select(['id', 'path']).execute()).map((r) => [Number(r.id), r.path]));
  const uaOf = new Map((await db.kysely.selectFrom('analytics_user_agents').select(['id', 'user_agent']).execute()).map((r) => [Number(r.id), r.user_agent]));
  return (await storedRows(db, ord)).map((r) => ({
    raw: r.raw_path === '' ? (pathOf.get(r.path_id) as string) : r.raw_path,
    ua: r.ua_id === null ? null : (uaOf.get(r.ua_id) as string),
    cls: r.class,
    rule: r.rule,
    qualifying: r.qualifying,
  }));
}

function expected(e: { path?: string; url?: string; userAgent?: string; accept?: string }): Stored {
  const raw = (e.path ?? e.url) as string;
  const c = classify({ userAgent: e.userAgent ?? null, path: raw, accept: e.accept ?? null });
  const path = normalizePath(raw) as string;
  return { raw, ua: e.userAgent ?? null, cls: c.class, rule: c.rule, qualifying: isQualifyingView({ path, class: c.class }) ? 1 : 0 };
}

describeEachDialect('analytics raw event storage', (dialect) => {
  let t: TestDb;
  beforeEach(async () => {
    t = await openTestDb(dialect);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('keeps every raw field: user agents through the dictionary, the raw path only when it differs', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    expect(await svc.ingest.ingest(p.id, EVENTS, { source: 'api' })).toEqual({ accepted: EVENTS.length, inserted: EVENTS.length, rejected: [] });
    await svc.close();

    // What reclassification and audits read back is exactly what was sent.
    expect(await storedEvents(t.db, p.id)).toEqual(EVENTS.map(expected));
    // Stored form: no user agent text in the rows, one dictionary entry per distinct user agent ('' included).
    const rows = await storedRows(t.db);
    const text = JSON.stringify(rows, (_, v) => (typeof v === 'bigint' ? v.toString() : v));
    expect([UA_FIREFOX, UA_CLAUDE, UA_GOOGLEBOT, UA_CURL].some((ua) => text.includes(ua))).toBe(false);
    expect(rows.map((r) => r.ua_id === null)).toEqual(EVENTS.map((e) => e.userAgent === undefined));
    expect(rows.map((r) => r.raw_path)).toEqual(EVENTS.map((e) => ((e.path ?? e.url) === normalizePath((e.path ?? e.url) as string) ? '' : (e.path ?? e.url))));
    const dict = await t.db.kysely.selectFrom('analytics_user_agents').select('user_agent').orderBy('user_agent').execute();
    expect(dict.map((d) => d.user_agent)).toEqual(['', UA_CURL, UA_FIREFOX, UA_GOOGLEBOT, UA_CLAUDE].sort());

    // A second service (another process) reuses the dictionary entries instead of adding new ones.
    const again = services(t.reopen());
    await again.svc.ingest.ingest(p.id, EVENTS, { source: 'api' });
    await again.svc.close();
    const n = await t.db.kysely
      .selectFrom('analytics_user_agents')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(5);
  });

  it('reclassify reads dictionary user agents, "" raw paths and rows stored before migration 0007 alike', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    await svc.ingest.ingest(p.id, EVENTS, { source: 'api' });
    const ord = (await store.selectProjectOrd(t.db.kysely, p.id)) as number;
    // Rows in the pre-0007 form: user agent text in the row, no ua_id, the raw path always stored.
    const legacy = [
      { raw: '/docs/legacy.md', ua: UA_FIREFOX },
      { raw: '/docs/legacy', ua: UA_GOOGLEBOT },
      { raw: '/docs/legacy', ua: null },
    ];
    const somePath = await t.db.kysely.selectFrom('analytics_paths').select('id').where('path', '=', '/docs/a').executeTakeFirstOrThrow();
    const legacyRows: LegacyRow[] = legacy.map((l, i) => ({
      project_ord: ord,
      ts: Date.UTC(2026, 4, 2) + i,
      day: Math.floor(Date.UTC(2026, 4, 2) / 86_400_000),
      path_id: Number(somePath.id),
      raw_path: l.raw,
      visitor_ord: 1,
      user_agent: l.ua,
      ua_id: null,
      accept: null,
      method: 'GET',
      status: 200,
      referrer: null,
      class: 'human',
      category: null,
      rule: null,
      rules_version: 'old',
      qualifying: 1,
      source: 'api',
      dedup_key: null,
    }));
    // Stored before migration 0016 beside the rows of the events above; migrating moves them all into segments.
    const current = (await storedRows(t.db)).map(({ seq: _s, dedup: _d, ...r }) => ({ ...r, user_agent: null, dedup_key: null }));
    await rewindToEventRows(t.db, [...current, ...legacyRows]);
    expect(await migrate(t.db)).toEqual(['0016_analytics_segments']);
    const viewsBefore = await svc.store.views({ projectId: p.id, walkId: 'w', fromDay: null, toDay: null, offset: 0, limit: 250 });

    // Every stored class goes wrong; reclassify must restore exactly what classify() says for the stored inputs.
    await rewriteStoredEvents(t.db, (e) => ({ ...e, cls: 'crawler', category: 'other', rule: 'broken', qualifying: false }));
    const result = await svc.store.reclassify(p.id);
    expect(result.scanned).toBe(EVENTS.length + legacy.length);
    const stored = await storedEvents(t.db, p.id);
    const want = [
      ...EVENTS.map(expected),
      ...legacy.map((l) => {
        const c = classify({ userAgent: l.ua, path: l.raw });
        return { raw: l.raw, ua: l.ua, cls: c.class, rule: c.rule, qualifying: isQualifyingView({ path: '/docs/a', class: c.class }) ? 1 : 0 };
      }),
    ];
    expect(stored).toEqual(want);
    // The legacy Markdown fetch by a browser UA is an AI read; the Googlebot one a crawler.
    expect(stored.slice(-3).map((s) => s.cls)).toEqual(['ai', 'crawler', 'human']);
    const viewsAfter = await svc.store.views({ projectId: p.id, walkId: 'w2', fromDay: null, toDay: null, offset: 0, limit: 250 });
    expect(viewsAfter.totals.total).toBe(want.filter((w) => w.qualifying === 1).length);
    expect(viewsAfter.totals.total).not.toBe(viewsBefore.totals.total);
    await svc.close();
  });

  it('a visitor another process added is found by its ordinal and never added twice', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    const ev = (visitorId: string, minute: number) => ({
      path: '/docs/a',
      timestamp: `2026-05-01T10:${String(minute).padStart(2, '0')}:00Z`,
      userAgent: UA_FIREFOX,
      visitorId,
    });
    await svc.ingest.ingest(p.id, [ev('one', 0)], { source: 'api' });
    const ord = (await store.selectProjectOrd(t.db.kysely, p.id)) as number;
    // "Another process" adds visitor two (a large ordinal, as a dictionary moved by migration 0019 may have).
    await store.insertVisitors(t.db.kysely, ord, 5_000_000, ['v:two']);
    await svc.ingest.ingest(p.id, [ev('two', 1), ev('three', 2), ev('one', 3)], { source: 'api' });
    await svc.close();
    const other = services(t.reopen());
    await other.svc.ingest.ingest(p.id, [ev('three', 4), ev('two', 5), ev('four', 6)], { source: 'api' });
    await other.svc.close();

    const visitors = await store.selectVisitorsAfter(t.db.kysely, ord, 0);
    expect(visitors.map((v) => v.visitor_key).sort()).toEqual(['v:four', 'v:one', 'v:three', 'v:two']);
    const ordOf = new Map(visitors.map((v) => [v.visitor_key, Number(v.ord)]));
    expect(ordOf.get('v:two')).toBe(5_000_000);
    // New visitors take the ordinals after the project's largest.
    expect([ordOf.get('v:one'), ordOf.get('v:three'), ordOf.get('v:four')]).toEqual([1, 5_000_001, 5_000_002]);
    const events = await storedRows(t.db);
    expect(events.map((e) => Number(e.visitor_ord))).toEqual(['v:one', 'v:two', 'v:three', 'v:one', 'v:three', 'v:two', 'v:four'].map((k) => ordOf.get(k)));
  });

  it('import stays idempotent with the dictionary form: a second import of the same lines adds nothing', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    const keys = EVENTS.map((_, i) => `k${i}`);
    expect((await svc.ingest.ingest(p.id, EVENTS, { source: 'import', dedupKeys: keys })).inserted).toBe(EVENTS.length);
    expect((await svc.ingest.ingest(p.id, EVENTS, { source: 'import', dedupKeys: keys })).inserted).toBe(0);
    await svc.close();
    const fresh = services(t.reopen());
    expect((await fresh.svc.ingest.ingest(p.id, EVENTS, { source: 'import', dedupKeys: keys })).inserted).toBe(0);
    await fresh.svc.close();
    expect((await storedRows(t.db)).length).toBe(EVENTS.length);
  });

  it('a writer without the exact visitor cache (as an import runs) gives every event the ordinal a cached writer gives it', async () => {
    const { projects } = services(t.db);
    const [cached, uncached] = await Promise.all(['cached', 'uncached'].map((name) => projects.createProject({ name, repository: 'r' })));
    const writers = [createGroupWriter(t.db), createGroupWriter(t.db, { visitorCache: false })];
    const prep = createEventPreparer();
    // Visitors repeat within a batch, across batches and across writes after their commit (found in the index).
    for (let round = 0; round < 5; round++) {
      for (const [k, p] of [cached, uncached].entries()) {
        const project = { id: p?.id as string, visitorSecret: 's', rotation: 'none' as const };
        const gen = prep.beginBatch(project);
        const events = Array.from(
          { length: 30 },
          (_, i) =>
            prep.prepare(
              { path: `/p/${i % 4}`, timestamp: `2026-05-01T10:0${round}:${String(i).padStart(2, '0')}Z`, visitorId: `v${(round * 11 + i * 7) % 40}` },
              project,
              gen,
              Date.now(),
              null,
            ) as WriteEvent,
        );
        expect(await writers[k]?.write(project.id, 'api', packEvents(events))).toBe(events.length);
      }
    }
    await Promise.all(writers.map((w) => w.close()));
    const stored = async (id: string) => {
      const ord = (await store.selectProjectOrd(t.db.kysely, id)) as number;
      const keyOf = new Map((await store.selectVisitorsAfter(t.db.kysely, ord, 0)).map((v) => [Number(v.ord), v.visitor_key]));
      return { keys: keyOf.size, events: (await storedRows(t.db, ord)).map((e) => [Number(e.visitor_ord), keyOf.get(Number(e.visitor_ord))]) };
    };
    const a = await stored(cached?.id as string);
    expect(a.keys).toBe(40);
    expect(await stored(uncached?.id as string)).toEqual(a);
  });

  it('per-project state bounded to almost nothing: every write drops the other projects, and ordinals stay right', async () => {
    const { projects } = services(t.db);
    const ps = await Promise.all(['a', 'b', 'c'].map((name) => projects.createProject({ name, repository: 'r' })));
    // 1 byte: each write keeps only its own project's caches and index; the next write of another project
    // loads its index again from the dictionary.
    const writer = createGroupWriter(t.db, { projectStateBytes: 1 });
    const prep = createEventPreparer();
    const want = new Map<string, Set<string>>(ps.map((p) => [p.id, new Set()]));
    for (let round = 0; round < 6; round++) {
      for (const [k, p] of ps.entries()) {
        const project = { id: p.id, visitorSecret: 's', rotation: 'none' as const };
        const gen = prep.beginBatch(project);
        const ids = Array.from({ length: 20 }, (_, i) => `v${(round * 7 + i * (k + 1)) % 50}`);
        for (const id of ids) want.get(p.id)?.add(`v:${id}`);
        const events = ids.map(
          (visitorId, i) =>
            prep.prepare(
              { path: `/p/${i % 3}`, timestamp: `2026-05-0${1 + (round % 3)}T10:00:0${i % 10}Z`, visitorId },
              project,
              gen,
              Date.now(),
              null,
            ) as WriteEvent,
        );
        expect(await writer.write(p.id, 'api', packEvents(events))).toBe(events.length);
      }
    }
    await writer.close();
    for (const p of ps) {
      const ord = (await store.selectProjectOrd(t.db.kysely, p.id)) as number;
      const visitors = await store.selectVisitorsAfter(t.db.kysely, ord, 0);
      // Each key once, ordinals dense from 1.
      expect(visitors.map((v) => v.visitor_key).sort()).toEqual([...(want.get(p.id) ?? [])].sort());
      expect(visitors.map((v) => Number(v.ord)).sort((x, y) => x - y)).toEqual(visitors.map((_, i) => i + 1));
    }
  });
});
