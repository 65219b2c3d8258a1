// THE user-agent rules of traffic classification (SPEC 4.2): one ordered data list, nothing else.
//
// How classify() uses it (see classify.ts):
//   1. The FIRST entry whose `pattern` (a case-insensitive regular expression) matches the user agent wins.
//      Order is precedence: user-triggered AI agents come before the same vendor's crawlers
//      (ChatGPT-User before GPTBot, Claude-Code before Claude-User before ClaudeBot, Meta-ExternalFetcher
//      before Meta-ExternalAgent …), named crawlers before generic HTTP clients.
//   2. A matched `class: 'ai'` entry → ai. A matched crawler entry → crawler with its category, EXCEPT a
//      `generic: true` entry (an HTTP library or headless browser that any script or agent uses) whose
//      request is a Markdown fetch (path ends .md/.mdx, or Accept prefers text/markdown) → ai.
//      Named crawlers (`generic` absent) stay crawlers even when they fetch Markdown.
//   3. No entry matched: a Markdown fetch → ai ('markdown-fetch'); an empty user agent → crawler/other
//      ('empty-user-agent'); a bot according to the `isbot` package → crawler/other ('isbot');
//      anything else → human.
//
// Every entry carries at least one sample user agent; test/analytics/classify.test.ts asserts each sample
// classifies to its own entry (so a new entry that is shadowed by an earlier one fails the test).
// `source` says where the token comes from. Samples are full strings where the operator publishes one
// (or it is widely logged); where only the product token is documented, the sample is that token in the
// form the operator documents.
//
// Deliberately absent:
//   - Google-Extended and Applebot-Extended: robots.txt control tokens only; they never appear in a
//     User-Agent header (Google-Extended content is fetched by Googlebot, Applebot-Extended by Applebot).
//   - OpenAI Operator / ChatGPT agent and GitHub Copilot / Amazon Q in the IDE: they send an ordinary
//     browser or HTTP-library user agent (ChatGPT agent identifies itself only with a signed
//     `Signature-Agent: "https://chatgpt.com"` header, which the event shape does not carry). Their
//     Markdown fetches are still counted as ai by rule 3 / generic clients.
//
// To add a rule: add an entry at the right precedence position with a unique `name`, a pattern that
// matches the product token (escape regex characters; prefer word boundaries), `class`, `category`
// (null for ai), `source`, and one or more real `samples`; run `npx vitest run test/analytics/classify.test.ts`.
// RULES_VERSION changes automatically; run `inkwell analytics reclassify --project ID` to re-derive stored classes.

export interface UserAgentRule {
  /** Unique, stable name; stored with each event as the matched rule. */
  name: string;
  class: 'ai' | 'crawler';
  /** Crawler category; null for ai. */
  category: 'search' | 'training' | 'other' | null;
  /** Case-insensitive regular expression source, tested against the whole user agent. */
  pattern: string;
  /** A generic client (HTTP library, headless browser): its Markdown fetches count as ai. */
  generic?: boolean;
  /** Where the token / purpose is documented. */
  source: string;
  samples: string[];
}

export const USER_AGENT_RULES: readonly UserAgentRule[] = [
  // ─── ai: assistants, answer engines and coding agents fetching for a person ───────────────────────
  {
    name: 'ChatGPT-User',
    class: 'ai',
    category: null,
    pattern: '\\bChatGPT-User\\b',
    source: 'https://platform.openai.com/docs/bots',
    samples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot'],
  },
  {
    name: 'Claude-Code',
    class: 'ai',
    category: null,
    pattern: '\\bclaude-code\\b',
    source: 'Claude Code WebFetch (anthropics/claude-code#38568): Claude-User with a claude-code product comment',
    samples: ['Claude-User (claude-code/2.1.83; +https://support.anthropic.com/)'],
  },
  {
    name: 'Claude-User',
    class: 'ai',
    category: null,
    pattern: '\\bClaude-User\\b',
    source: 'https://support.anthropic.com/en/articles/8896518',
    samples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)'],
  },
  {
    name: 'Perplexity-User',
    class: 'ai',
    category: null,
    pattern: '\\bPerplexity-User\\b',
    source: 'https://docs.perplexity.ai/guides/bots',
    samples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)'],
  },
  {
    name: 'MistralAI-User',
    class: 'ai',
    category: null,
    pattern: '\\bMistralAI-User\\b',
    source: 'https://docs.mistral.ai/robots',
    samples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; MistralAI-User/1.0; +https://docs.mistral.ai/robots)'],
  },
  {
    name: 'DuckAssistBot',
    class: 'ai',
    category: null,
    pattern: '\\bDuckAssistBot\\b',
    source: 'https://duckduckgo.com/duckduckgo-help-pages/results/duckassistbot/',
    samples: ['DuckAssistBot/1.2; (+http://duckduckgo.com/duckassistbot.html)'],
  },
  {
    name: 'Gemini-Deep-Research',
    class: 'ai',
    category: null,
    pattern: '\\bGemini-Deep-Research\\b',
    source: 'https://developers.google.com/search/docs/crawling-indexing/google-user-triggered-fetchers',
    samples: [
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Gemini-Deep-Research; +https://gemini.google/overview/deep-research/) Chrome/135.0.0.0 Safari/537.36',
    ],
  },
  {
    name: 'Google-Agent',
    class: 'ai',
    category: null,
    pattern: '\\bGoogle-?Agent\\b',
    source: 'https://developers.google.com/search/docs/crawling-indexing/google-common-crawlers#google-agent (Project Mariner, Gemini API URL context)',
    samples: [
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Google-Agent; +https://developers.google.com/search/docs/crawling-indexing/google-user-triggered-fetchers) Chrome/135.0.0.0 Safari/537.36',
      'GoogleAgent-Mariner',
      'GoogleAgent-URLContext',
    ],
  },
  {
    name: 'Google-NotebookLM',
    class: 'ai',
    category: null,
    pattern: '\\bGoogle-NotebookLM\\b',
    source: 'https://developers.google.com/search/docs/crawling-indexing/google-user-triggered-fetchers',
    samples: ['Google-NotebookLM'],
  },
  {
    name: 'Gemini-CLI',
    class: 'ai',
    category: null,
    pattern: '\\bGoogle-Gemini-CLI\\b|\\bGeminiCLI/',
    source: 'knownagents.com/agents/google-gemini-cli (AI coding agent)',
    samples: ['Google-Gemini-CLI/0.1.0', 'GeminiCLI/0.8.2 (linux; x64)'],
  },
  {
    name: 'Meta-ExternalFetcher',
    class: 'ai',
    category: null,
    pattern: '\\bmeta-externalfetcher\\b',
    source: 'https://developers.facebook.com/docs/sharing/webmasters/web-crawlers (user-initiated fetches for Meta AI)',
    samples: ['meta-externalfetcher/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)'],
  },
  {
    name: 'Amzn-User',
    class: 'ai',
    category: null,
    pattern: '\\bAmzn-User\\b',
    source: 'https://developer.amazon.com/amazonbot (user-triggered fetches for Alexa / Amazon AI)',
    samples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amzn-User/0.1) Chrome/119.0.6045.214 Safari/537.36'],
  },
  {
    name: 'NovaAct',
    class: 'ai',
    category: null,
    pattern: '\\bNovaAct\\b',
    source: 'knownagents.com/agents/novaact (Amazon browser agent)',
    samples: ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 NovaAct'],
  },
  {
    name: 'cohere-ai',
    class: 'ai',
    category: null,
    pattern: '\\bcohere-ai\\b',
    source: 'ai.robots.txt: retrieves data for responses to user-initiated prompts',
    samples: ['cohere-ai'],
  },
  {
    name: 'kagi-fetcher',
    class: 'ai',
    category: null,
    pattern: '\\bkagi-fetcher\\b',
    source: 'knownagents.com/agents/kagi-fetcher (Kagi Assistant)',
    samples: ['kagi-fetcher/1.0'],
  },
  {
    name: 'Kimi-User',
    class: 'ai',
    category: null,
    pattern: '\\bKimi-User\\b',
    source: 'knownagents.com/agents/kimi-user (Moonshot AI assistant)',
    samples: ['Mozilla/5.0 (compatible; Kimi-User/1.0)'],
  },
  {
    name: 'TongyiBot',
    class: 'ai',
    category: null,
    pattern: '\\bTongyiBot\\b',
    source: 'knownagents.com/agents/tongyibot (Alibaba Qwen assistant fetches)',
    samples: ['Mozilla/5.0 (compatible; TongyiBot/1.0)'],
  },
  {
    name: 'YiyanBot',
    class: 'ai',
    category: null,
    pattern: '\\bYiyanBot\\b',
    source: 'knownagents.com/agents/yiyanbot (Baidu ERNIE assistant fetches)',
    samples: ['Mozilla/5.0 (compatible; YiyanBot/1.0)'],
  },
  {
    name: 'PhindBot',
    class: 'ai',
    category: null,
    pattern: '\\bPhindBot\\b',
    source: 'knownagents.com/agents/phindbot (developer answer engine)',
    samples: ['Mozilla/5.0 (compatible; PhindBot/1.0; +https://www.phind.com)'],
  },
  {
    name: 'Manus-User',
    class: 'ai',
    category: null,
    pattern: '\\bManus-User\\b',
    source: 'knownagents.com/agents/manus-user (browser agent)',
    samples: ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/132.0.0.0 Safari/537.36 (compatible; Manus-User/1.0)'],
  },
  {
    name: 'Devin',
    class: 'ai',
    category: null,
    pattern: '\\bDevin\\b',
    source: 'knownagents.com/agents/devin (Cognition coding agent)',
    samples: ['Devin/1.0'],
  },
  {
    name: 'Cursor',
    class: 'ai',
    category: null,
    pattern: '\\bCursor/\\d',
    source: 'knownagents.com/agents/cursor (AI code editor; its fetches and built-in browser carry Cursor/<version>)',
    samples: [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Cursor/1.4.5 Chrome/132.0.6834.210 Electron/34.5.8 Safari/537.36',
    ],
  },
  {
    name: 'Windsurf',
    class: 'ai',
    category: null,
    pattern: '\\b(?:Windsurf|Codeium)\\b',
    source: 'Windsurf (formerly Codeium) AI code editor; token as in its Electron user agent',
    samples: [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Windsurf/1.12.2 Chrome/132.0.6834.210 Electron/34.3.2 Safari/537.36',
    ],
  },
  {
    name: 'Cline',
    class: 'ai',
    category: null,
    pattern: '\\bCline/\\d',
    source: 'Cline (VS Code coding agent) web fetch tool',
    samples: ['Cline/3.17.0'],
  },
  {
    name: 'aider',
    class: 'ai',
    category: null,
    pattern: '\\bAider/\\d',
    source: 'aider (terminal coding agent): scrape.py sets "Aider/<version> +https://aider.chat"',
    samples: ['Aider/0.86.1 +https://aider.chat'],
  },
  {
    name: 'opencode',
    class: 'ai',
    category: null,
    pattern: '^opencode/',
    source: 'knownagents.com/agents/opencode (terminal coding agent; opencode/<channel>/<version>/<client>)',
    samples: ['opencode/latest/1.1.36/cli'],
  },
  {
    name: 'Trae',
    class: 'ai',
    category: null,
    pattern: '\\bTrae/\\d',
    source: 'knownagents.com/agents/trae (ByteDance AI code editor)',
    samples: [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Trae/1.100.3 Chrome/132.0.6834.210 Electron/34.5.1 Safari/537.36',
    ],
  },

  // ─── crawler / search: indexing for search and answer engines ─────────────────────────────────────
  {
    name: 'OAI-SearchBot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bOAI-SearchBot\\b',
    source: 'https://platform.openai.com/docs/bots',
    samples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot'],
  },
  {
    name: 'Claude-SearchBot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bClaude-SearchBot\\b',
    source: 'https://support.anthropic.com/en/articles/8896518',
    samples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-SearchBot/1.0; +Claude-SearchBot@anthropic.com)'],
  },
  {
    name: 'PerplexityBot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bPerplexityBot\\b',
    source: 'https://docs.perplexity.ai/guides/bots',
    samples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)'],
  },
  {
    name: 'Googlebot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bGooglebot\\b|\\bGoogle-InspectionTool\\b|\\bStorebot-Google\\b',
    source: 'https://developers.google.com/search/docs/crawling-indexing/google-common-crawlers',
    samples: [
      'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/141.0.7390.122 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      'Googlebot-Image/1.0',
      'Mozilla/5.0 (compatible; Google-InspectionTool/1.0;)',
    ],
  },
  {
    name: 'Google-CloudVertexBot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bGoogle-CloudVertexBot\\b',
    source: "https://developers.google.com/search/docs/crawling-indexing/google-common-crawlers (crawls on the site owner's request for Vertex AI Agents)",
    samples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Google-CloudVertexBot; +https://cloud.google.com/enterprise-search)'],
  },
  {
    name: 'Bingbot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bbingbot\\b|\\bMicrosoftPreview\\b',
    source: 'https://www.bing.com/webmasters/help/which-crawlers-does-bing-use-8c184ec0',
    samples: [
      'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36',
    ],
  },
  {
    name: 'Applebot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bApplebot\\b',
    source: 'https://support.apple.com/en-us/119829',
    samples: [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)',
    ],
  },
  {
    name: 'DuckDuckBot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bDuckDuckBot\\b',
    source: 'https://duckduckgo.com/duckduckgo-help-pages/results/duckduckbot/',
    samples: ['DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)'],
  },
  {
    name: 'YandexBot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bYandex(?:Bot|MobileBot|Images|Additional|AdditionalBot|Video|Metrika)\\b',
    source: 'https://yandex.com/support/webmaster/robot-workings/check-yandex-robots.html',
    samples: ['Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)', 'Mozilla/5.0 (compatible; YandexAdditional/3.0; +http://yandex.com/bots)'],
  },
  {
    name: 'Baiduspider',
    class: 'crawler',
    category: 'search',
    pattern: '\\bBaiduspider\\b',
    source: 'https://www.baidu.com/search/spider.html',
    samples: ['Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)'],
  },
  {
    name: 'Yahoo-Slurp',
    class: 'crawler',
    category: 'search',
    pattern: '\\bYahoo! Slurp\\b',
    source: 'https://help.yahoo.com/kb/SLN22600.html',
    samples: ['Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)'],
  },
  {
    name: 'SeznamBot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bSeznamBot\\b',
    source: 'https://o-seznam.cz/napoveda/vyhledavani/en/seznambot-crawler/',
    samples: ['Mozilla/5.0 (compatible; SeznamBot/4.0; +https://o-seznam.cz/napoveda/vyhledavani/en/seznambot-crawler/)'],
  },
  {
    name: 'Naver-Yeti',
    class: 'crawler',
    category: 'search',
    pattern: '\\bYeti/\\d',
    source: 'https://naver.me/spd',
    samples: ['Mozilla/5.0 (compatible; Yeti/1.1; +https://naver.me/spd)'],
  },
  {
    name: 'Sogou',
    class: 'crawler',
    category: 'search',
    pattern: '\\bSogou web spider\\b',
    source: 'http://www.sogou.com/docs/help/webmasters.htm#07',
    samples: ['Sogou web spider/4.0(+http://www.sogou.com/docs/help/webmasters.htm#07)'],
  },
  {
    name: 'PetalBot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bPetalBot\\b',
    source: 'https://webmaster.petalsearch.com/site/petalbot',
    samples: [
      'Mozilla/5.0 (Linux; Android 7.0;) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)',
    ],
  },
  {
    name: 'MojeekBot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bMojeekBot\\b',
    source: 'https://www.mojeek.com/bot.html',
    samples: ['Mozilla/5.0 (compatible; MojeekBot/0.11; +https://www.mojeek.com/bot.html)'],
  },
  {
    name: 'Qwantbot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bQwantbot\\b',
    source: 'https://help.qwant.com/bot/',
    samples: ['Mozilla/5.0 (compatible; Qwantbot/1.0; +https://help.qwant.com/bot/)'],
  },
  {
    name: 'Bravebot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bBravebot\\b',
    source: 'https://safe.search.brave.com/help/brave-search-crawler',
    samples: ['Mozilla/5.0 (compatible; Bravebot/1.0; +https://safe.search.brave.com/help/brave-search-crawler)'],
  },
  {
    name: 'YouBot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bYouBot\\b',
    source: 'https://about.you.com/youbot/',
    samples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; YouBot (+http://www.you.com))'],
  },
  {
    name: 'Meta-WebIndexer',
    class: 'crawler',
    category: 'search',
    pattern: '\\bmeta-webindexer\\b',
    source: 'https://developers.facebook.com/docs/sharing/webmasters/web-crawlers (Meta AI search index)',
    samples: ['meta-webindexer/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)'],
  },
  {
    name: 'Amzn-SearchBot',
    class: 'crawler',
    category: 'search',
    pattern: '\\bAmzn-SearchBot\\b|\\bamazon-QBusiness\\b',
    source: 'https://developer.amazon.com/amazonbot; amazon-QBusiness indexes sites for Amazon Q Business',
    samples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amzn-SearchBot/0.1) Chrome/119.0.6045.214 Safari/537.36', 'amazon-QBusiness'],
  },

  // ─── crawler / training: collecting data to train models ──────────────────────────────────────────
  {
    name: 'GPTBot',
    class: 'crawler',
    category: 'training',
    pattern: '\\bGPTBot\\b',
    source: 'https://platform.openai.com/docs/bots',
    samples: ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.1; +https://openai.com/gptbot'],
  },
  {
    name: 'ClaudeBot',
    class: 'crawler',
    category: 'training',
    pattern: '\\bClaudeBot\\b|\\banthropic-ai\\b|\\bClaude-Web\\b',
    source: 'https://support.anthropic.com/en/articles/8896518 (anthropic-ai and Claude-Web are older Anthropic tokens)',
    samples: [
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)',
      'anthropic-ai',
      'Claude-Web/1.0 (web crawler; +claude-web@anthropic.com)',
    ],
  },
  {
    name: 'CCBot',
    class: 'crawler',
    category: 'training',
    pattern: '\\bCCBot\\b',
    source: 'https://commoncrawl.org/ccbot',
    samples: ['CCBot/2.0 (https://commoncrawl.org/faq/)'],
  },
  {
    name: 'Bytespider',
    class: 'crawler',
    category: 'training',
    pattern: '\\bBytespider\\b|\\bTikTokSpider\\b',
    source: 'ai.robots.txt (ByteDance LLM training)',
    samples: [
      'Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)',
    ],
  },
  {
    name: 'Meta-ExternalAgent',
    class: 'crawler',
    category: 'training',
    pattern: '\\bmeta-externalagent\\b|\\bFacebookBot\\b',
    source: 'https://developers.facebook.com/docs/sharing/webmasters/web-crawlers',
    samples: [
      'meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)',
      'Mozilla/5.0 (compatible; FacebookBot/1.0; +https://developers.facebook.com/docs/sharing/webmasters/facebookbot/)',
    ],
  },
  {
    name: 'Amazonbot',
    class: 'crawler',
    category: 'training',
    pattern: '\\bAmazonbot\\b',
    source: 'https://developer.amazon.com/amazonbot (improves products, may train Amazon AI models)',
    samples: [
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36',
    ],
  },
  {
    name: 'cohere-training-data-crawler',
    class: 'crawler',
    category: 'training',
    pattern: '\\bcohere-training-data-crawler\\b',
    source: 'ai.robots.txt (Cohere training data)',
    samples: ['cohere-training-data-crawler'],
  },
  {
    name: 'Diffbot',
    class: 'crawler',
    category: 'training',
    pattern: '\\bDiffbot\\b',
    source: 'https://www.diffbot.com (AI data provider)',
    samples: [
      'Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/49.0.2623.75 Safari/537.36 Diffbot/0.1 (+http://www.diffbot.com)',
    ],
  },
  {
    name: 'AI2Bot',
    class: 'crawler',
    category: 'training',
    pattern: '\\bAi2Bot\\b',
    source: 'https://allenai.org/crawler',
    samples: ['Mozilla/5.0 (compatible) AI2Bot (+https://www.allenai.org/crawler)', 'Mozilla/5.0 (compatible) Ai2Bot-Dolma (+https://www.allenai.org/crawler)'],
  },
  {
    name: 'omgili',
    class: 'crawler',
    category: 'training',
    pattern: '\\bomgili(?:bot)?\\b|\\bwebzio-extended\\b',
    source: 'https://webz.io/blog/web-data/what-is-the-omgili-bot-and-why-is-it-crawling-your-website/',
    samples: ['omgili/0.5 +http://omgili.com'],
  },
  {
    name: 'DeepSeekBot',
    class: 'crawler',
    category: 'training',
    pattern: '\\bDeepSeekBot\\b',
    source: 'ai.robots.txt (DeepSeek model training)',
    samples: ['Mozilla/5.0 (compatible; DeepSeekBot/1.0)'],
  },
  {
    name: 'PanguBot',
    class: 'crawler',
    category: 'training',
    pattern: '\\bPanguBot\\b',
    source: 'ai.robots.txt (Huawei PanGu training data)',
    samples: ['Mozilla/5.0 (compatible; PanguBot;+https://www.huaweicloud.com/)'],
  },
  {
    name: 'Timpibot',
    class: 'crawler',
    category: 'training',
    pattern: '\\bTimpibot\\b',
    source: 'ai.robots.txt (https://timpi.io)',
    samples: ['Timpibot/0.8 (+http://www.timpi.io)'],
  },
  {
    name: 'ImagesiftBot',
    class: 'crawler',
    category: 'training',
    pattern: '\\bImagesiftBot\\b|\\bimg2dataset\\b',
    source: 'ai.robots.txt (image datasets)',
    samples: ['Mozilla/5.0 (compatible; ImagesiftBot; +imagesift.com)', 'Mozilla/5.0 (compatible; img2dataset; +https://github.com/rom1504/img2dataset)'],
  },

  // ─── crawler / other: previews, SEO tools, monitors, archives, scrapers ───────────────────────────
  {
    name: 'Google-other',
    class: 'crawler',
    category: 'other',
    pattern: '\\bGoogleOther\\b|\\bAdsBot-Google\\b|\\bMediapartners-Google\\b|\\bFeedFetcher-Google\\b|\\bGoogle-Read-Aloud\\b|\\bGoogle-Site-Verification\\b',
    source: 'https://developers.google.com/search/docs/crawling-indexing/overview-google-crawlers',
    samples: [
      'Mozilla/5.0 (compatible; GoogleOther)',
      'AdsBot-Google (+http://www.google.com/adsbot.html)',
      'Mediapartners-Google',
      'FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)',
    ],
  },
  {
    name: 'link-preview',
    class: 'crawler',
    category: 'other',
    pattern:
      '\\bfacebookexternalhit\\b|\\bTwitterbot\\b|\\bSlackbot\\b|\\bDiscordbot\\b|\\bLinkedInBot\\b|\\bWhatsApp/|\\bTelegramBot\\b|\\bSkypeUriPreview\\b|\\bredditbot\\b|\\bPinterestbot\\b|\\bBingPreview\\b',
    source: 'link previews of social networks and chat apps',
    samples: [
      'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
      'Twitterbot/1.0',
      'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
      'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
      'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
      'WhatsApp/2.23.20.0',
      'TelegramBot (like TwitterBot)',
    ],
  },
  {
    name: 'seo-tools',
    class: 'crawler',
    category: 'other',
    pattern:
      '\\bAhrefsBot\\b|\\bAhrefsSiteAudit\\b|\\bSemrushBot|\\bSiteAuditBot\\b|\\bMJ12bot\\b|\\bDotBot\\b|\\bScreaming Frog SEO Spider\\b|\\bBLEXBot\\b|\\bDataForSeoBot\\b|\\bserpstatbot\\b|\\bMegaIndex\\b|\\bbarkrowler\\b',
    source: 'SEO crawlers',
    samples: [
      'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)',
      'Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)',
      'Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)',
      'Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot; help@moz.com)',
      'Screaming Frog SEO Spider/19.4',
    ],
  },
  {
    name: 'monitors',
    class: 'crawler',
    category: 'other',
    pattern:
      '\\bUptimeRobot\\b|\\bPingdom\\b|\\bStatusCake\\b|\\bSite24x7\\b|\\bBetter ?Uptime Bot\\b|\\bUptime-Kuma\\b|\\bChecklyHQ\\b|\\bdatadog\\b|\\bNewRelicPinger\\b|\\bChrome-Lighthouse\\b',
    source: 'uptime monitors and synthetic checks',
    samples: [
      'Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)',
      'Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)',
      'Uptime-Kuma/1.23.11',
      'Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse',
    ],
  },
  {
    name: 'archivers',
    class: 'crawler',
    category: 'other',
    pattern: '\\barchive\\.org_bot\\b|\\bia_archiver\\b|\\bheritrix\\b',
    source: 'web archives',
    samples: ['Mozilla/5.0 (compatible; archive.org_bot +http://archive.org/details/archive.org_bot)'],
  },
  {
    name: 'scrapers',
    class: 'crawler',
    category: 'other',
    pattern: '\\bScrapy\\b|\\bFirecrawlAgent\\b|\\bCrawl4AI\\b|\\bApifyBot\\b',
    source: 'scraping frameworks and scraping services',
    samples: ['Scrapy/2.11.0 (+https://scrapy.org)', 'Mozilla/5.0 (compatible; FirecrawlAgent/1.0)'],
  },
  {
    name: 'PhantomJS',
    class: 'crawler',
    category: 'other',
    pattern: '\\bPhantomJS\\b',
    source: 'headless browser (discontinued)',
    samples: ['Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1'],
  },

  // ─── generic clients: crawler/other, but their Markdown fetches are ai ────────────────────────────
  // A script with an HTTP library or a headless browser is counted as a bot. When it asks for Markdown
  // (a .md/.mdx path, or Accept preferring text/markdown) it is almost always an AI agent's fetch tool
  // (many agents use axios, node's fetch, httpx or a headless Chrome), so that request counts as ai.
  {
    name: 'headless-browser',
    class: 'crawler',
    category: 'other',
    generic: true,
    pattern: '\\bHeadlessChrome\\b|\\bLightpanda\\b|\\bPlaywright\\b|\\bPuppeteer\\b',
    source: 'headless browsers used by scrapers, tests and browser agents',
    samples: ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.28 Safari/537.36'],
  },
  {
    name: 'curl',
    class: 'crawler',
    category: 'other',
    generic: true,
    pattern: '^curl/',
    source: 'command-line HTTP client',
    samples: ['curl/8.5.0'],
  },
  {
    name: 'wget',
    class: 'crawler',
    category: 'other',
    generic: true,
    pattern: '^Wget/',
    source: 'command-line HTTP client',
    samples: ['Wget/1.21.4'],
  },
  {
    name: 'python-http',
    class: 'crawler',
    category: 'other',
    generic: true,
    pattern: '\\bpython-requests/|\\bpython-httpx/|\\baiohttp/|\\bPython-urllib/|\\burllib3/',
    source: 'Python HTTP libraries',
    samples: ['python-requests/2.31.0', 'python-httpx/0.27.0', 'Python/3.11 aiohttp/3.9.1', 'Python-urllib/3.11'],
  },
  {
    name: 'node-http',
    class: 'crawler',
    category: 'other',
    generic: true,
    pattern: '^node$|^undici$|\\bnode-fetch/|^axios/|^got \\(|\\bDeno/|^Bun/',
    source: 'JavaScript runtimes and HTTP libraries (Node.js fetch sends "node")',
    samples: ['node', 'undici', 'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)', 'axios/1.8.4', 'Deno/1.40.0', 'Bun/1.0.25'],
  },
  {
    name: 'other-http-library',
    class: 'crawler',
    category: 'other',
    generic: true,
    pattern:
      '^Go-http-client/|^okhttp/|^Java/|\\bJava-http-client/|^Apache-HttpClient/|^libwww-perl/|^Ruby$|^Faraday v|^Dart/|^reqwest/|^RestSharp/|^PostmanRuntime/|^insomnia/|^HTTPie/',
    source: 'HTTP libraries of other languages and API tools',
    samples: [
      'Go-http-client/1.1',
      'okhttp/4.12.0',
      'Java-http-client/17.0.2',
      'Apache-HttpClient/4.5.13 (Java/11.0.19)',
      'libwww-perl/6.72',
      'PostmanRuntime/7.36.0',
    ],
  },
];
