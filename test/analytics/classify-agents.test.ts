// Classification against an independent table (fixtures/agents.ts): every named agent's real user agent gets
// the class and category its publisher documents. The rules file is never consulted for the expectation, so a
// rule that changes an agent's class, category or precedence fails here unless the table is changed too, with
// a source that supports it.
import { describe, expect, it } from 'vitest';
import { classify, matchRule } from '../../src/analytics/classify/classify.ts';
import { NAMED_AGENTS, type NamedAgent, ROBOTS_ONLY_TOKENS } from './fixtures/agents.ts';

const PAGE = '/docs/getting-started';

/**
 * Where the rules disagree with the table today (reported, not hidden): these checks are expected to fail, so
 * the suite stays green while the gap is open and turns red the day a rule closes it (then delete the line).
 * Key: `<agent name>:<page|markdown>`.
 */
const KNOWN_DISAGREEMENTS: Record<string, string> = {
  'OAI-AdsBot:markdown': 'no rule names OAI-AdsBot; isbot makes its page fetch crawler/other, but its Markdown fetch falls to markdown-fetch (ai)',
  'meta-externalads:markdown': 'no rule names meta-externalads; isbot makes its page fetch crawler/other, but its Markdown fetch falls to markdown-fetch (ai)',
};

const check = (agent: NamedAgent, what: 'page' | 'markdown') => (`${agent.name}:${what}` in KNOWN_DISAGREEMENTS ? it.fails : it);
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** What a Markdown fetch by this agent counts as: a named crawler stays itself, anything else reads for an AI. */
function markdownExpectation(a: NamedAgent): { class: string; category: string | null } {
  return a.kind === 'bot' && a.class === 'crawler' ? { class: a.class, category: a.category } : { class: 'ai', category: null };
}

describe('the agents table', () => {
  it('names each agent once, with a source, at least one user agent and a category exactly for crawlers', () => {
    const names = new Set<string>();
    for (const a of NAMED_AGENTS) {
      expect(names.has(a.name), a.name).toBe(false);
      names.add(a.name);
      expect(a.source, a.name).toMatch(/^https:\/\//);
      expect(a.userAgents.length, a.name).toBeGreaterThan(0);
      if (a.class === 'crawler') expect(['search', 'training', 'other'], a.name).toContain(a.category);
      else expect(a.category, a.name).toBeNull();
      if (a.kind === 'browser') expect(a.class, a.name).toBe('human');
    }
  });

  it('covers people, assistants and each crawler category', () => {
    const seen = new Set(NAMED_AGENTS.map((a) => `${a.class}/${a.category ?? ''}`));
    expect([...seen].sort()).toEqual(['ai/', 'crawler/other', 'crawler/search', 'crawler/training', 'human/']);
  });
});

describe.each(NAMED_AGENTS.map((a) => [a.name, a.publisher, a] as const))('%s (%s)', (_name, _publisher, agent) => {
  check(agent, 'page')(`is ${agent.class}${agent.category ? `/${agent.category}` : ''} on a page`, () => {
    for (const ua of agent.userAgents) {
      const got = classify({ userAgent: ua, path: PAGE, accept: agent.kind === 'browser' ? BROWSER_ACCEPT : null });
      expect({ class: got.class, category: got.category }, ua).toEqual({ class: agent.class, category: agent.category });
    }
  });

  const md = markdownExpectation(agent);
  check(agent, 'markdown')(`is ${md.class}${md.category ? `/${md.category}` : ''} when it fetches Markdown`, () => {
    for (const ua of agent.userAgents) {
      for (const request of [
        { path: `${PAGE}.md`, accept: null },
        { path: PAGE, accept: 'text/markdown, text/html;q=0.5' },
      ]) {
        const got = classify({ userAgent: ua, ...request });
        expect({ class: got.class, category: got.category }, `${ua} ${JSON.stringify(request)}`).toEqual(md);
      }
    }
  });
});

it('every known disagreement names an agent of the table', () => {
  for (const key of Object.keys(KNOWN_DISAGREEMENTS)) {
    const [name, what] = key.split(':');
    expect(NAMED_AGENTS.some((a) => a.name === name) && (what === 'page' || what === 'markdown'), key).toBe(true);
  }
});

describe('robots.txt-only tokens', () => {
  it.each(ROBOTS_ONLY_TOKENS.map((t) => [t.name, t] as const))('%s is fetched by a crawler of the table, and no rule is named after it', (_name, token) => {
    const fetcher = NAMED_AGENTS.find((a) => a.name === token.fetchedBy);
    expect(fetcher?.publisher).toBe(token.publisher);
    // The token never appears in a User-Agent header, so a rule for it could only match impostors.
    expect(matchRule(token.name)?.name).not.toBe(token.name);
  });
});
