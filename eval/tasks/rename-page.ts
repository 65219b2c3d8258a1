// Rename or move a page: every link and the navigation follow it.
import type { EvalTask } from '../lib/types.ts';
import { calls, check, done, edit, move, search } from './steps.ts';

export const renamePageTasks: EvalTask[] = [
  {
    name: 'mintlify/rename-errors-page',
    kind: 'rename-page',
    fixture: 'mintlify',
    turns: [
      {
        prompt: 'Rename the Errors guide from guides/errors.mdx to guides/error-handling.mdx. Update the navigation and every link to it.',
        reference: [
          calls(search('guides/errors')),
          calls(
            move('guides/errors.mdx', 'guides/error-handling.mdx'),
            edit('docs.json', '"guides/errors"', '"guides/error-handling"'),
            edit('quickstart.mdx', '(/guides/errors)', '(/guides/error-handling)'),
            edit('guides/authentication.mdx', '(/guides/errors#status-codes)', '(/guides/error-handling#status-codes)'),
            edit('guides/pagination.mdx', '(/guides/errors#rate-limits)', '(/guides/error-handling#rate-limits)'),
          ),
          calls(check()),
          done(
            'Rename the Errors guide to error-handling',
            'Moves guides/errors.mdx to guides/error-handling.mdx and updates docs.json and the links in the quickstart, authentication and pagination pages.',
          ),
        ],
      },
    ],
    expect: {
      files: {
        'guides/errors.mdx': { exists: false },
        'guides/error-handling.mdx': { exists: true, contains: ['## Rate limits'] },
        'quickstart.mdx': { contains: ['/guides/error-handling'], notContains: ['/guides/errors'] },
        'guides/authentication.mdx': { contains: ['/guides/error-handling#status-codes'], notContains: ['/guides/errors'] },
        'guides/pagination.mdx': { contains: ['/guides/error-handling#rate-limits'], notContains: ['/guides/errors'] },
      },
      nav: { includes: ['guides/error-handling'], excludes: ['guides/errors'] },
      checks: { alsoCheck: ['quickstart.mdx', 'guides/authentication.mdx', 'guides/pagination.mdx'] },
      changed: {
        allowed: ['guides/errors.mdx', 'guides/error-handling.mdx', 'docs.json', 'quickstart.mdx', 'guides/authentication.mdx', 'guides/pagination.mdx'],
      },
    },
  },
];
