// Apply a rule of the repository's own style guide (AGENTS.md, CONTRIBUTING.md) across files.
import type { EvalTask } from '../lib/types.ts';
import { calls, done, edit, read, search } from './steps.ts';

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
];
