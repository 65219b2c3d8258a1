// Apply a rule of the repository's own style guide (AGENTS.md, CONTRIBUTING.md) across files.
import type { EvalTask } from '../lib/types.ts';
import { calls, check, done, edit, read, search } from './steps.ts';

export const styleRuleTasks: EvalTask[] = [
  {
    name: 'mkdocs/style-directory-not-folder',
    kind: 'style-rule',
    fixture: 'mkdocs',
    turns: [
      {
        prompt: 'Our style guide has a rule about "folder". Apply it across the docs.',
        reference: [
          calls(read('CONTRIBUTING.md'), search('[Ff]older', 'docs')),
          calls(
            edit('docs/getting-started.md', 'in the project folder:', 'in the project directory:'),
            edit(
              'docs/guide/configuration.md',
              'from the current folder or the nearest parent folder',
              'from the current directory or the nearest parent directory',
            ),
            edit('docs/guide/configuration.md', 'in the project folder.', 'in the project directory.'),
            edit('docs/guide/caching.md', 'from the cache folder.', 'from the cache directory.'),
          ),
          done(
            'Say "directory" instead of "folder" in the docs',
            "Applies the style guide's rule to getting-started.md, guide/configuration.md and guide/caching.md.",
          ),
        ],
      },
    ],
    expect: {
      files: {
        'docs/getting-started.md': { notMatches: ['/folder/i'], contains: ['directory'] },
        'docs/guide/configuration.md': { notMatches: ['/folder/i'] },
        'docs/guide/caching.md': { notMatches: ['/folder/i'] },
      },
      checks: {},
      changed: { allowed: ['docs/getting-started.md', 'docs/guide/configuration.md', 'docs/guide/caching.md'] },
    },
  },
  {
    name: 'mintlify/style-no-filler-words',
    kind: 'style-rule',
    fixture: 'mintlify',
    turns: [
      {
        prompt: 'Go through the docs and fix every violation of the AGENTS.md rule on "simply" and "easily".',
        reference: [
          calls(search('\\b([Ss]imply|[Ee]asily)\\b')),
          calls(
            edit('quickstart.mdx', 'Sign in to the dashboard and simply copy the test key', 'Sign in to the dashboard and copy the test key'),
            edit('guides/authentication.mdx', 'To rotate a key, simply create a new one', 'To rotate a key, create a new one'),
            edit('cli/overview.mdx', 'Simply run `acme auth` and paste an API key.', 'Run `acme auth` and paste an API key.'),
          ),
          done(
            'Remove "simply" from the docs',
            'Rewrites the three sentences that used "simply" (quickstart, authentication, CLI overview), as AGENTS.md asks.',
          ),
        ],
      },
    ],
    expect: {
      files: {
        'quickstart.mdx': { notMatches: ['/\\b(simply|easily)\\b/i'], contains: ['copy the test key'] },
        'guides/authentication.mdx': { notMatches: ['/\\b(simply|easily)\\b/i'], contains: ['create a new one'] },
        'cli/overview.mdx': { notMatches: ['/\\b(simply|easily)\\b/i'], contains: ['acme auth'] },
      },
      checks: {},
      changed: { allowed: ['quickstart.mdx', 'guides/authentication.mdx', 'cli/overview.mdx'] },
    },
  },
  {
    name: 'markdown/style-sentence-case-headings',
    kind: 'style-rule',
    fixture: 'markdown',
    turns: [
      {
        prompt: 'Some headings in docs/ do not follow the heading rule of our contributing guide. Fix them all.',
        reference: [
          calls(read('CONTRIBUTING.md'), search('^#+ ', 'docs')),
          calls(
            edit('docs/usage.md', '## Connecting To A Database', '## Connecting to a database'),
            edit('docs/usage.md', '## Running A Benchmark', '## Running a benchmark'),
            edit('docs/usage.md', '## Reading The Report', '## Reading the report'),
            edit('docs/configuration.md', '## Environment Variables', '## Environment variables'),
            edit('docs/configuration.md', '## Connection Pooling', '## Connection pooling'),
          ),
          calls(check()),
          done('Use sentence case for headings', 'Five headings in docs/usage.md and docs/configuration.md now use sentence case, as CONTRIBUTING.md asks.'),
        ],
      },
    ],
    expect: {
      files: {
        'docs/usage.md': { contains: ['## Connecting to a database', '## Running a benchmark', '## Reading the report', '## Flags'] },
        'docs/configuration.md': { contains: ['## Environment variables', '## Connection pooling'] },
        'docs/faq.md': { contains: ['## Why does p99 change between runs?'] },
      },
      checks: { alsoCheck: ['docs/usage.md'] },
      changed: { allowed: ['docs/usage.md', 'docs/configuration.md'] },
    },
  },
];
