// HTTP helpers for the analytics tests: send events, walk every page of an export (validating each page
// against the hosted schema).
import { expect } from 'vitest';
import type { TestApp } from '../helpers/app.ts';
import { type Expected, hostedSchemas, type WireEvent } from './dataset.ts';

const schemas = hostedSchemas();

export async function sendEvents(t: TestApp, key: string, projectId: string, events: WireEvent[], batch = 500): Promise<void> {
  for (let i = 0; i < events.length; i += batch) {
    const chunk = events.slice(i, i + batch);
    const res = await t.request('POST', `/v1/analytics/${projectId}/events`, { key, body: { events: chunk } });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ accepted: chunk.length, rejected: [] });
  }
}

export async function walk(
  t: TestApp,
  key: string,
  projectId: string,
  kind: 'visitors' | 'views',
  query: Record<string, string>,
  limit: number,
  between?: () => Promise<void>,
): Promise<Expected> {
  const rows: Expected['rows'] = [];
  let totals: Expected['totals'] | undefined;
  for (let offset = 0; ; offset += limit) {
    const qs = new URLSearchParams({ ...query, limit: String(limit), offset: String(offset) });
    const res = await t.request('GET', `/v1/analytics/${projectId}/${kind}?${qs}`, { key });
    expect(res.status, res.text).toBe(200);
    expect(schemas[kind](res.body)).toBeNull();
    totals ??= res.body.totals;
    expect(res.body.totals).toEqual(totals);
    const page = res.body[kind] as Expected['rows'];
    expect(page.length).toBeLessThanOrEqual(limit);
    rows.push(...page);
    if (!res.body.hasMore) break;
    expect(page.length).toBe(limit);
    await between?.();
  }
  return { totals: totals as Expected['totals'], rows };
}
