// Fix broken links and anchors; the checks run on the page the request names even if the agent leaves it alone.
import type { EvalTask } from '../lib/types.ts';
import { calls, check, done, edit, read } from './steps.ts';

const PAGINATION_BROKEN = `---
title: Pagination
description: Page through lists with cursors.
---

List endpoints return at most \`limit\` items (default 20, at most 100) and a \`next_cursor\`.
Every request needs an API key: see [Authentication](/guides/authenticaton).

## Cursors

Pass \`next_cursor\` as \`cursor\` to get the next page. When \`next_cursor\` is \`null\`, you have reached the end.

## Rate limits while paging

Paging quickly through a large list counts against your rate limit like any request:
see [Errors](/guides/errors#rate-limit).
`;

const CACHING_BROKEN = `# Caching

Tern hashes a task's \`inputs\`, its command and its environment. When the hash matches a stored result, the
task is skipped and its \`outputs\` are restored from the cache folder.

## Where results are stored

Results are stored under \`cache_dir\` (see [Configuration](configuration.md#cache-folder)).
Tasks that declare no \`inputs\` are never cached: see [Tasks](../tasks.md).

## Clearing the cache

\`\`\`console
$ tern cache clear
\`\`\`
`;

const INTRO_BROKEN = `---
sidebar_position: 1
---

# Introduction

Orbit SDK sends realtime events from your backend to browsers and mobile apps over WebSockets.

- [Install it](/docs/install), then [configure a client](./guides/configuration.md).
- When you are ready, [deploy](./guides/deploy.md).
`;

export const fixLinksTasks: EvalTask[] = [
  {
    name: 'mintlify/fix-broken-links',
    kind: 'fix-links',
    fixture: 'mintlify',
    files: { 'guides/pagination.mdx': PAGINATION_BROKEN },
    turns: [
      {
        prompt: 'The link checker reports broken links on the Pagination page (guides/pagination.mdx). Please fix them.',
        reference: [
          calls(read('guides/pagination.mdx'), check()),
          calls(read('guides/errors.mdx')),
          calls(
            edit('guides/pagination.mdx', '(/guides/authenticaton)', '(/guides/authentication)'),
            edit('guides/pagination.mdx', '(/guides/errors#rate-limit)', '(/guides/errors#rate-limits)'),
          ),
          done(
            'Fix broken links on the Pagination page',
            'Fixes the typo in the Authentication link and points the Errors link at the `#rate-limits` heading.',
          ),
        ],
      },
    ],
    expect: {
      files: {
        'guides/pagination.mdx': {
          contains: ['/guides/errors#rate-limits', '/guides/authentication'],
          notContains: ['authenticaton', '#rate-limit)'],
        },
      },
      checks: { alsoCheck: ['guides/pagination.mdx'] },
      changed: { allowed: ['guides/pagination.mdx'] },
    },
  },
  {
    name: 'mkdocs/fix-links-caching',
    kind: 'fix-links',
    fixture: 'mkdocs',
    files: { 'docs/guide/caching.md': CACHING_BROKEN },
    turns: [
      {
        prompt: 'mkdocs build --strict warns about two links in docs/guide/caching.md since we reorganised the guide. Fix them.',
        reference: [
          calls(read('docs/guide/caching.md'), read('docs/guide/configuration.md')),
          calls(
            edit('docs/guide/caching.md', '(configuration.md#cache-folder)', '(configuration.md#cache-directory)'),
            edit('docs/guide/caching.md', '(../tasks.md)', '(tasks.md)'),
          ),
          calls(check()),
          done(
            'Fix two links on the caching page',
            'The Configuration link points at `#cache-directory` and the Tasks link at `tasks.md` in the same directory.',
          ),
        ],
      },
    ],
    expect: {
      files: {
        'docs/guide/caching.md': {
          contains: ['configuration.md#cache-directory'],
          notContains: ['#cache-folder', '../tasks.md'],
          matches: ['\\]\\(tasks\\.md\\)'],
        },
      },
      checks: { alsoCheck: ['docs/guide/caching.md'] },
      changed: { allowed: ['docs/guide/caching.md'] },
    },
  },
  {
    name: 'docusaurus/fix-links-intro',
    kind: 'fix-links',
    fixture: 'docusaurus',
    files: { 'docs/intro.md': INTRO_BROKEN },
    turns: [
      {
        prompt: 'The Docusaurus build fails with onBrokenLinks: throw on docs/intro.md. Fix the broken links.',
        reference: [
          calls(read('docs/intro.md'), check()),
          calls(edit('docs/intro.md', '(/docs/install)', '(./installation.md)'), edit('docs/intro.md', '(./guides/deploy.md)', '(./guides/deploying.md)')),
          calls(check()),
          done('Fix broken links in the introduction', 'Points the install link at installation.md and the deploy link at guides/deploying.md.'),
        ],
      },
    ],
    expect: {
      files: { 'docs/intro.md': { notContains: ['/docs/install)', 'deploy.md'], matches: ['\\((\\./|/docs/)?installation(\\.md)?\\)', 'guides/deploying'] } },
      checks: { alsoCheck: ['docs/intro.md'] },
      changed: { allowed: ['docs/intro.md'] },
    },
  },
];
