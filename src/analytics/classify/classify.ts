// Traffic classification (SPEC 4.2). Pure: no I/O. The rules are data: see rules.ts.
import crypto from 'node:crypto';
import { isbot } from 'isbot';
import { isMarkdownPath } from './normalize.ts';
import { USER_AGENT_RULES, type UserAgentRule } from './rules.ts';

export type TrafficClass = 'human' | 'ai' | 'crawler';
export type CrawlerCategory = 'search' | 'training' | 'other';
/** rule = the matched rule name (null for human). */
export interface Classification {
  class: TrafficClass;
  category: CrawlerCategory | null;
  rule: string | null;
}

/** Rule names of the built-in fallbacks (not entries of the data file). */
export const MARKDOWN_RULE = 'markdown-fetch';
export const EMPTY_UA_RULE = 'empty-user-agent';
export const ISBOT_RULE = 'isbot';

/** Bump when the classification logic in this file changes in a way that changes results. */
const LOGIC_VERSION = 1;

/**
 * Hash of the rules data and the logic version: stored with each classified event so stored classes can be
 * recomputed (`inkwell analytics reclassify`) when it changes.
 */
export const RULES_VERSION: string = crypto
  .createHash('sha256')
  .update(JSON.stringify({ logic: LOGIC_VERSION, rules: USER_AGENT_RULES }))
  .digest('hex')
  .slice(0, 16);

const COMPILED: readonly { rule: UserAgentRule; re: RegExp }[] = USER_AGENT_RULES.map((rule) => ({ rule, re: new RegExp(rule.pattern, 'i') }));

/** Longest user agent examined; longer headers are cut (they are abuse, not browsers). */
const MAX_UA = 1024;

/** The first rule of the data file matching the user agent, or null. */
export function matchRule(userAgent: string): UserAgentRule | null {
  const ua = userAgent.length > MAX_UA ? userAgent.slice(0, MAX_UA) : userAgent;
  for (const { rule, re } of COMPILED) if (re.test(ua)) return rule;
  return null;
}

// Small memo of user agent → matched rule / isbot: an ingest batch or a reclassification repeats the same few
// hundred user agents. Cleared when full; purely a cache of a pure function.
const memo = new Map<string, { rule: UserAgentRule | null; bot: boolean }>();
const MEMO_MAX = 2000;

function lookup(ua: string): { rule: UserAgentRule | null; bot: boolean } {
  let hit = memo.get(ua);
  if (!hit) {
    const rule = matchRule(ua);
    hit = { rule, bot: rule === null ? isbot(ua.slice(0, MAX_UA)) : rule.class === 'crawler' };
    if (memo.size >= MEMO_MAX) memo.clear();
    memo.set(ua, hit);
  }
  return hit;
}

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
  index: number;
}

/** Parses an Accept header into media ranges with their q-values (invalid q → the entry is ignored). */
export function parseAccept(accept: string): MediaRange[] {
  const out: MediaRange[] = [];
  const parts = accept.slice(0, 2048).split(',');
  for (let index = 0; index < parts.length; index++) {
    const [range, ...params] = parts[index].split(';');
    const m = /^\s*([a-z0-9!#$%&'*+.^_`|~-]+)\/([a-z0-9!#$%&'*+.^_`|~-]+)\s*$/i.exec(range);
    if (!m) continue;
    let q = 1;
    let valid = true;
    for (const p of params) {
      const kv = /^\s*q\s*=\s*(.*?)\s*$/i.exec(p);
      if (kv) {
        q = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(kv[1]) ? Number(kv[1]) : Number.NaN;
        if (Number.isNaN(q)) valid = false;
      }
    }
    if (valid) out.push({ type: m[1].toLowerCase(), subtype: m[2].toLowerCase(), q, index });
  }
  return out;
}

const MARKDOWN_SUBTYPES = new Set(['markdown', 'x-markdown']);

/**
 * True when the Accept header PREFERS Markdown: content negotiation over the listed media ranges (highest q,
 * then the more specific range, then the earlier one) picks an explicitly listed text/markdown (or
 * text/x-markdown) with q > 0. `text/markdown, text/html` prefers Markdown; `text/html, text/markdown;q=0.9`,
 * `*∕*` and browser defaults do not.
 */
export function prefersMarkdown(accept: string | null | undefined): boolean {
  if (!accept || !/markdown/i.test(accept)) return false;
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return false;
  const specificity = (r: MediaRange) => (r.type === '*' ? 0 : r.subtype === '*' ? 1 : 2);
  const best = [...ranges].sort((a, b) => b.q - a.q || specificity(b) - specificity(a) || a.index - b.index)[0];
  return best.q > 0 && best.type === 'text' && MARKDOWN_SUBTYPES.has(best.subtype);
}

/**
 * Classifies one request. `userAgent` undefined/null means "not reported" (then only the Markdown rule can
 * apply; otherwise human). An empty or whitespace user agent, or "-" as web-server logs write a missing
 * header, is a request without a User-Agent header: crawler/other unless it is a Markdown fetch.
 */
export function classify(input: { userAgent?: string | null; path: string; accept?: string | null }): Classification {
  return classifyParts(input.userAgent, input.accept, isMarkdownPath(input.path));
}

/**
 * classify() with the path reduced to what it decides on: whether the requested path ends .md/.mdx
 * (isMarkdownPath). The result depends on (userAgent, accept, markdownPath) alone, so callers may memoise it
 * under that key.
 */
export function classifyParts(userAgent: string | null | undefined, accept: string | null | undefined, markdownPath: boolean): Classification {
  const markdown = markdownPath || prefersMarkdown(accept);
  const raw = userAgent;
  if (raw === undefined || raw === null) {
    return markdown ? { class: 'ai', category: null, rule: MARKDOWN_RULE } : { class: 'human', category: null, rule: null };
  }
  const ua = raw.trim();
  if (ua === '' || ua === '-') {
    return markdown ? { class: 'ai', category: null, rule: MARKDOWN_RULE } : { class: 'crawler', category: 'other', rule: EMPTY_UA_RULE };
  }
  const { rule, bot } = lookup(ua);
  if (rule) {
    if (rule.class === 'ai') return { class: 'ai', category: null, rule: rule.name };
    if (rule.generic && markdown) return { class: 'ai', category: null, rule: MARKDOWN_RULE };
    return { class: 'crawler', category: rule.category ?? 'other', rule: rule.name };
  }
  if (markdown) return { class: 'ai', category: null, rule: MARKDOWN_RULE };
  if (bot) return { class: 'crawler', category: 'other', rule: ISBOT_RULE };
  return { class: 'human', category: null, rule: null };
}
