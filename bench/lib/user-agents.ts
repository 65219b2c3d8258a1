// Real user-agent strings per traffic class, with relative weights (data only, no I/O).
export type UaClass = 'human' | 'ai' | 'crawler';

export interface UserAgent {
  ua: string;
  class: UaClass;
  weight: number;
  /** A generic client (headless browser): a crawler, but its Markdown fetches count as ai (not a named crawler). */
  generic?: boolean;
}

export const USER_AGENTS: readonly UserAgent[] = [
  // Browsers (human).
  {
    class: 'human',
    weight: 30,
    ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  },
  {
    class: 'human',
    weight: 18,
    ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  },
  {
    class: 'human',
    weight: 12,
    ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  },
  { class: 'human', weight: 8, ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0' },
  { class: 'human', weight: 5, ua: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0' },
  {
    class: 'human',
    weight: 6,
    ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
  },
  {
    class: 'human',
    weight: 10,
    ua: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  },
  {
    class: 'human',
    weight: 8,
    ua: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Mobile Safari/537.36',
  },
  { class: 'human', weight: 3, ua: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' },

  // AI assistants, answer engines and coding agents fetching for a person (ai).
  { class: 'ai', weight: 30, ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot' },
  { class: 'ai', weight: 20, ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)' },
  {
    class: 'ai',
    weight: 12,
    ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)',
  },
  { class: 'ai', weight: 4, ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; MistralAI-User/1.0; +https://docs.mistral.ai/robots)' },
  { class: 'ai', weight: 4, ua: 'DuckAssistBot/1.2; (+http://duckduckgo.com/duckassistbot.html)' },
  { class: 'ai', weight: 8, ua: 'claude-code/1.0.72 (external, cli)' },
  {
    class: 'ai',
    weight: 10,
    ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Cursor/1.2.4 Chrome/132.0.6834.210 Electron/34.5.1 Safari/537.36',
  },
  { class: 'ai', weight: 3, ua: 'Mozilla/5.0 (compatible; Gemini-Deep-Research; +https://gemini.google/overview/deep-research/)' },
  { class: 'ai', weight: 2, ua: 'Devin/1.0 (+https://devin.ai)' },

  // Crawlers: search, training and other bots (count in neither human nor ai).
  { class: 'crawler', weight: 25, ua: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' },
  {
    class: 'crawler',
    weight: 10,
    ua: 'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  },
  { class: 'crawler', weight: 10, ua: 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)' },
  { class: 'crawler', weight: 5, ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot' },
  {
    class: 'crawler',
    weight: 5,
    ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)',
  },
  { class: 'crawler', weight: 12, ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)' },
  { class: 'crawler', weight: 10, ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)' },
  { class: 'crawler', weight: 5, ua: 'CCBot/2.0 (https://commoncrawl.org/faq/)' },
  {
    class: 'crawler',
    weight: 5,
    ua: 'Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)',
  },
  { class: 'crawler', weight: 4, ua: 'meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)' },
  { class: 'crawler', weight: 4, ua: 'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)' },
  {
    class: 'crawler',
    weight: 3,
    generic: true,
    ua: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36',
  },
  { class: 'crawler', weight: 2, ua: 'Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)' },
];
