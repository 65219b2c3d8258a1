// Rename or move a page: every link and the navigation follow it.
import type { EvalTask } from '../lib/types.ts';
import { calls, check, done, edit, move, read, search } from './steps.ts';

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
  {
    name: 'mkdocs/move-caching-to-reference',
    kind: 'rename-page',
    fixture: 'mkdocs',
    turns: [
      {
        prompt:
          'Caching is reference material, not a guide: move docs/guide/caching.md to docs/reference/caching.md and list it under Reference in the nav. Keep every link working.',
        reference: [
          calls(read('mkdocs.yml'), search('caching\\.md', 'docs'), read('docs/guide/caching.md')),
          calls(
            move('docs/guide/caching.md', 'docs/reference/caching.md'),
            edit('mkdocs.yml', '      - Caching: guide/caching.md\n', ''),
            edit('mkdocs.yml', '      - Command line: reference/cli.md\n', '      - Command line: reference/cli.md\n      - Caching: reference/caching.md\n'),
            edit('docs/getting-started.md', '(guide/caching.md)', '(reference/caching.md)'),
            edit('docs/guide/tasks.md', '(caching.md)', '(../reference/caching.md)'),
          ),
          calls(edit('docs/reference/caching.md', '(configuration.md#cache-directory)', '(../guide/configuration.md#cache-directory)')),
          calls(check()),
          done(
            'Move the caching page to the reference',
            'docs/guide/caching.md is now docs/reference/caching.md, under Reference in the nav; the links from getting-started.md and guide/tasks.md and its own link to the configuration page follow it.',
          ),
        ],
      },
    ],
    expect: {
      files: {
        'docs/guide/caching.md': { exists: false },
        'docs/reference/caching.md': { exists: true, contains: ['../guide/configuration.md#cache-directory', 'tern cache clear'] },
        'docs/getting-started.md': { contains: ['reference/caching.md'], notContains: ['guide/caching.md'] },
        'docs/guide/tasks.md': { contains: ['../reference/caching.md'] },
      },
      nav: { includes: ['reference/caching.md'], excludes: ['guide/caching.md'] },
      checks: { alsoCheck: ['docs/getting-started.md', 'docs/guide/tasks.md'] },
      changed: { allowed: ['docs/guide/caching.md', 'docs/reference/caching.md', 'mkdocs.yml', 'docs/getting-started.md', 'docs/guide/tasks.md'] },
    },
  },
  {
    name: 'docusaurus/rename-events-page',
    kind: 'rename-page',
    fixture: 'docusaurus',
    turns: [
      {
        prompt: 'Rename the API reference page docs/api/events.md to docs/api/event-delivery.md (its title stays "Events"). Update the sidebar and all links.',
        reference: [
          calls(search('events'), read('sidebars.js')),
          calls(
            move('docs/api/events.md', 'docs/api/event-delivery.md'),
            edit('sidebars.js', "'api/events'", "'api/event-delivery'"),
            edit('docs/api/client.md', '(./events.md)', '(./event-delivery.md)'),
          ),
          calls(check()),
          done(
            'Rename the events reference page to event-delivery',
            'Moves docs/api/events.md to docs/api/event-delivery.md and updates sidebars.js and the link from the client reference.',
          ),
        ],
      },
    ],
    expect: {
      files: {
        'docs/api/events.md': { exists: false },
        'docs/api/event-delivery.md': { exists: true, contains: ['# Events'] },
        'docs/api/client.md': { contains: ['event-delivery'], notContains: ['events.md'] },
      },
      nav: { includes: ['api/event-delivery'], excludes: ['api/events'] },
      checks: { alsoCheck: ['docs/api/client.md'] },
      changed: { allowed: ['docs/api/events.md', 'docs/api/event-delivery.md', 'sidebars.js', 'docs/api/client.md'] },
    },
  },
];
