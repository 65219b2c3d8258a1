// A small, deterministic mix of documentation traffic sent through the real ingest endpoint: people (with
// referrers), AI assistants fetching for a user, and crawlers, spread over the days before `now`. The
// dashboard's browser tests and the screenshot script (scripts/screenshots.ts) use it; what the API
// answers for it is what the dashboard must show.
import { prng } from '../analytics/dataset.ts';

const PEOPLE = [
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
];
const AI = [
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)',
];
const CRAWLERS = [
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
];
const PAGES = ['/docs/', '/docs/install', '/docs/quick-start', '/docs/api/jobs', '/docs/api/analytics', '/docs/tracker', '/docs/faq', '/blog/launch'];
const REFERRERS = ['https://www.google.com/', 'https://github.com/acme/docs', 'https://news.ycombinator.com/item?id=1', null, null];

export interface TrafficEvent {
  path: string;
  timestamp: string;
  ip: string;
  userAgent: string;
  referrer?: string;
  status: number;
  method: string;
}

/** Events on each of the `days` UTC days ending with the day of `now` (none later than `now`). */
export function trafficEvents(now: number, days: number, seed = 1): TrafficEvent[] {
  const rnd = prng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const events: TrafficEvent[] = [];
  const today = Math.floor(now / 86_400_000) * 86_400_000;
  for (let d = days - 1; d >= 0; d--) {
    const dayStart = today - d * 86_400_000;
    const span = Math.max(1, Math.min(86_400_000, now - dayStart));
    const at = () => new Date(dayStart + Math.floor(rnd() * span)).toISOString();
    const people = 3 + Math.floor(rnd() * 6) + (days - d) / 4;
    for (let i = 0; i < people; i++) {
      const ip = `198.51.100.${1 + Math.floor(rnd() * 200)}`;
      const referrer = pick(REFERRERS);
      events.push({ path: pick(PAGES), timestamp: at(), ip, userAgent: pick(PEOPLE), ...(referrer ? { referrer } : {}), status: 200, method: 'GET' });
    }
    for (let i = 0; i < 1 + Math.floor(rnd() * 4); i++) {
      events.push({ path: pick(PAGES), timestamp: at(), ip: `203.0.113.${1 + Math.floor(rnd() * 40)}`, userAgent: pick(AI), status: 200, method: 'GET' });
    }
    for (let i = 0; i < 2 + Math.floor(rnd() * 8); i++) {
      events.push({ path: pick(PAGES), timestamp: at(), ip: `192.0.2.${1 + Math.floor(rnd() * 20)}`, userAgent: pick(CRAWLERS), status: 200, method: 'GET' });
    }
  }
  return events;
}

/** Sends events through POST /v1/analytics/{projectId}/events (1,000 per request); throws unless all are accepted. */
export async function ingestTraffic(baseUrl: string, projectId: string, adminKey: string, events: TrafficEvent[]): Promise<void> {
  for (let i = 0; i < events.length; i += 1000) {
    const batch = events.slice(i, i + 1000);
    const res = await fetch(`${baseUrl}/v1/analytics/${projectId}/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events: batch }),
    });
    const body = (await res.json()) as { accepted?: number; rejected?: unknown[] };
    if (res.status !== 202 || body.accepted !== batch.length) throw new Error(`ingest answered ${res.status}: ${JSON.stringify(body).slice(0, 500)}`);
  }
}
