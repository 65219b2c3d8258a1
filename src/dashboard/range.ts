// The analytics page's date range, read from and written to the URL's query string, so that a reload or a
// shared link shows the same days. Days are UTC; the API's `dateTo` is exclusive, the page's `to` inclusive.

export type Preset = '7d' | '30d' | '90d' | 'month';
export const PRESETS: { id: Preset; label: string }[] = [
  { id: '7d', label: '7 days' },
  { id: '30d', label: '30 days' },
  { id: '90d', label: '90 days' },
  { id: 'month', label: 'This month' },
];
export const DEFAULT_PRESET: Preset = '30d';

export interface DateRange {
  /** The preset, or 'custom' for explicit from/to. */
  kind: Preset | 'custom';
  /** First day, YYYY-MM-DD (UTC). */
  from: string;
  /** Last day, inclusive, YYYY-MM-DD (UTC). */
  to: string;
  /** Why the query string was not used as given (a bad custom range falls back to the default). */
  problem?: string;
}

const DAY_MS = 86_400_000;
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

export const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

function dayMs(day: string): number | null {
  if (!DATE_RE.test(day)) return null;
  const ms = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(ms) || isoDay(ms) !== day ? null : ms;
}

/** The day after `day` (the API's exclusive `dateTo` for an inclusive last day). */
export const nextDay = (day: string): string => isoDay((dayMs(day) as number) + DAY_MS);

function presetRange(preset: Preset, now: number): DateRange {
  const today = isoDay(now);
  if (preset === 'month') return { kind: preset, from: `${today.slice(0, 8)}01`, to: today };
  const days = Number.parseInt(preset, 10);
  return { kind: preset, from: isoDay(now - (days - 1) * DAY_MS), to: today };
}

/** The range a query string names: `range=7d|30d|90d|month`, or `from`/`to` days; else the default. */
export function parseRange(q: Record<string, string | undefined>, now: number): DateRange {
  if (q.from !== undefined || q.to !== undefined) {
    const from = dayMs(q.from ?? '');
    const to = dayMs(q.to ?? '');
    if (from !== null && to !== null && from <= to) return { kind: 'custom', from: q.from as string, to: q.to as string };
    const problem = from === null || to === null ? 'from and to must be days written YYYY-MM-DD' : 'the first day (from) must not be after the last day (to)';
    return { ...presetRange(DEFAULT_PRESET, now), problem };
  }
  const preset = PRESETS.find((p) => p.id === q.range)?.id;
  return presetRange(preset ?? DEFAULT_PRESET, now);
}

/** The query string of a range (without other parameters). */
export function rangeQuery(r: Pick<DateRange, 'kind' | 'from' | 'to'>): string {
  return r.kind === 'custom' ? `from=${r.from}&to=${r.to}` : `range=${r.kind}`;
}

/** The API's parameters for a range: dateFrom inclusive, dateTo exclusive. */
export function apiRange(r: DateRange): { dateFrom: string; dateTo: string } {
  return { dateFrom: r.from, dateTo: nextDay(r.to) };
}
