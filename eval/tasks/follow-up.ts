// Two turns on the same branch: the second builds on what the first pushed.
import type { EvalTask } from '../lib/types.ts';
import { calls, check, done, edit, read, write } from './steps.ts';

const LOGGING = `# Logging

Orbit SDK logs connection changes and failed publishes. Set the level with the \`logLevel\` option:

\`\`\`ts
const orbit = new Orbit({ key: process.env.ORBIT_KEY, logLevel: 'debug' });
\`\`\`

## Levels

| Level | What is logged |
| --- | --- |
| \`debug\` | Every event sent and received. |
| \`info\` | Connections and reconnections. |
| \`warn\` | Retried publishes. |
| \`error\` | Publishes that failed for good. |
`;

const RATE_LIMITS = `---
title: Rate limits
description: How many requests a key may make, and what happens over the limit.
---

Each API key may make 100 requests per second. Requests over the limit get a \`429 Too Many Requests\`
answer and change nothing.

## Staying under the limit

- Page through lists with a large \`limit\` instead of many small pages (see [Pagination](/guides/pagination)).
- Spread batch jobs over time.
`;

const WATCH_DIFF = `\`\`\`diff
--- a/tern/cli.py
+++ b/tern/cli.py
@@ def build_parser() -> argparse.ArgumentParser:
     run.add_argument("--dry-run", action="store_true", help="Print what would run")
+    run.add_argument("--watch", action="store_true", help="Run again whenever an input changes")
\`\`\``;

export const followUpTasks: EvalTask[] = [
  {
    name: 'docusaurus/follow-up-logging-env',
    kind: 'follow-up',
    fixture: 'docusaurus',
    turns: [
      {
        prompt:
          'Add a guide docs/guides/logging.md on logging: the `logLevel` client option takes debug, info, warn or error (debug logs every event, info connections, warn retried publishes, error failed publishes). Add it to the Guides category of the sidebar.',
        reference: [
          calls(read('sidebars.js'), read('docs/guides/configuration.md')),
          calls(
            write('docs/guides/logging.md', LOGGING),
            edit(
              'sidebars.js',
              "items: ['guides/configuration', 'guides/deploying'],",
              "items: ['guides/configuration', 'guides/deploying', 'guides/logging'],",
            ),
          ),
          done('Add a logging guide', 'docs/guides/logging.md documents the `logLevel` option and its levels; it is in the Guides category of the sidebar.'),
        ],
      },
      {
        prompt: 'Thanks. Also document that the ORBIT_LOG_LEVEL environment variable overrides `logLevel`, and that the default level is `warn`.',
        reference: [
          calls(read('docs/guides/logging.md')),
          calls(
            edit(
              'docs/guides/logging.md',
              '## Levels\n',
              'The default level is `warn`. The `ORBIT_LOG_LEVEL` environment variable overrides `logLevel`, so you can turn on debug logs without a deploy:\n\n```bash\nORBIT_LOG_LEVEL=debug node server.js\n```\n\n## Levels\n',
            ),
          ),
          done(
            'Add a logging guide',
            'docs/guides/logging.md documents `logLevel`, its default (`warn`) and the `ORBIT_LOG_LEVEL` override; it is in the Guides sidebar.',
          ),
        ],
      },
    ],
    expect: {
      files: {
        'docs/guides/logging.md': { exists: true, contains: ['ORBIT_LOG_LEVEL', 'logLevel'], matches: ['/default[^\\n]*`?warn`?/i', '^# '] },
      },
      nav: { includes: ['guides/logging'] },
      checks: {},
      changed: { allowed: ['docs/guides/logging.md', 'sidebars.js'] },
    },
  },
  {
    name: 'mintlify/follow-up-rate-limits',
    kind: 'follow-up',
    fixture: 'mintlify',
    turns: [
      {
        prompt:
          'Add a page guides/rate-limits.mdx: each API key may make 100 requests per second, and requests over the limit get a 429 and change nothing. Add it to the Guides group.',
        reference: [
          calls(read('docs.json'), read('guides/errors.mdx')),
          calls(write('guides/rate-limits.mdx', RATE_LIMITS), edit('docs.json', '"guides/errors"]', '"guides/errors", "guides/rate-limits"]')),
          done('Add a rate limits page', 'guides/rate-limits.mdx explains the per-key limit and the 429 answer; it is in the Guides group.'),
        ],
      },
      {
        prompt:
          'Good. Also show an example 429 response with its Retry-After header on that page, and link to the page from the Rate limits section of guides/errors.mdx.',
        reference: [
          calls(read('guides/rate-limits.mdx')),
          calls(
            edit(
              'guides/rate-limits.mdx',
              '## Staying under the limit\n',
              '## Retrying\n\nA `429` answer says how many seconds to wait in its `Retry-After` header:\n\n```http\nHTTP/1.1 429 Too Many Requests\nRetry-After: 2\n```\n\n## Staying under the limit\n',
            ),
            edit(
              'guides/errors.mdx',
              'Over that, the API answers `429`; wait and retry.',
              'Over that, the API answers `429`; wait and retry. See [Rate limits](/guides/rate-limits).',
            ),
          ),
          calls(check()),
          done(
            'Add a rate limits page',
            'guides/rate-limits.mdx explains the per-key limit, the 429 answer and its `Retry-After` header; guides/errors.mdx links to it.',
          ),
        ],
      },
    ],
    expect: {
      files: {
        'guides/rate-limits.mdx': { exists: true, contains: ['Retry-After', '429'], matches: ['/100 requests/'] },
        'guides/errors.mdx': { contains: ['/guides/rate-limits'], matches: ['/## Rate limits[\\s\\S]*\\/guides\\/rate-limits/'] },
      },
      nav: { includes: ['guides/rate-limits'] },
      checks: {},
      changed: { allowed: ['guides/rate-limits.mdx', 'docs.json', 'guides/errors.mdx'] },
    },
  },
  {
    name: 'mkdocs/follow-up-changelog',
    kind: 'follow-up',
    fixture: 'mkdocs',
    turns: [
      {
        prompt: `Document the option this change adds to \`tern run\`.\n\n${WATCH_DIFF}`,
        reference: [
          calls(read('docs/reference/cli.md')),
          calls(
            edit(
              'docs/reference/cli.md',
              '| `--dry-run` | Print what would run without running it. |\n',
              '| `--dry-run` | Print what would run without running it. |\n| `--watch` | Keep running, and run the tasks again whenever one of their inputs changes. |\n',
            ),
          ),
          done('Document tern run --watch', 'Adds `--watch` to the options of `tern run` in docs/reference/cli.md.'),
        ],
      },
      {
        prompt: 'Please also add an entry for it under Unreleased in the changelog.',
        reference: [
          calls(read('docs/changelog.md')),
          calls(
            edit('docs/changelog.md', '## Unreleased\n', '## Unreleased\n\n- `tern run --watch` runs the tasks again whenever one of their inputs changes.\n'),
          ),
          done('Document tern run --watch', 'Adds `--watch` to docs/reference/cli.md and a changelog entry under Unreleased.'),
        ],
      },
    ],
    expect: {
      files: {
        'docs/reference/cli.md': { contains: ['--watch'] },
        'docs/changelog.md': { matches: ['/## Unreleased\\s+[-*] [^\\n]*--watch[\\s\\S]*## 0\\.9\\.0/'] },
      },
      checks: {},
      changed: { allowed: ['docs/reference/cli.md', 'docs/changelog.md'] },
    },
  },
];
