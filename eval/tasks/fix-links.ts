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
];
