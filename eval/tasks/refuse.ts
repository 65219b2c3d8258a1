// Requests that cannot be done as asked: success is no change and a reply that says why.
import type { EvalTask } from '../lib/types.ts';
import { calls, done, read, search } from './steps.ts';

export const refuseTasks: EvalTask[] = [
  {
    name: 'mintlify/refuse-nonexistent-flag',
    kind: 'refuse',
    fixture: 'mintlify',
    turns: [
      {
        prompt: 'Document the --turbo flag of `acme deploy` in cli/commands.mdx.',
        reference: [
          calls(read('cli/commands.mdx'), search('turbo')),
          calls(read('src/cli/flags.ts')),
          done(
            'No change: acme deploy has no --turbo flag',
            'src/cli/flags.ts defines only `--env` and `--file` for `acme deploy`, and nothing in the repository mentions turbo, so there is no `--turbo` flag to document. If it is being added, share the change and I will document it.',
          ),
        ],
      },
    ],
    expect: {
      changed: 'none',
      reply: { matches: ['turbo', "\\b(no|not|n't|doesn't|does not|isn't|cannot|can't)\\b"] },
    },
  },
  {
    name: 'markdown/refuse-outside-repo',
    kind: 'refuse',
    fixture: 'markdown',
    turns: [
      {
        prompt: 'Copy docs/usage.md to ../website/content/docs/usage.md so the marketing site picks it up, and update the flags table there too.',
        reference: [
          calls({ name: 'list_files', args: { path: '../website' } }),
          done(
            'No change: ../website is outside this repository',
            'I can only read and change files inside this repository, and ../website/content/docs/usage.md is outside it, so I cannot copy the page there. Copy it in the website repository, or add the website as a folder of this one.',
          ),
        ],
      },
    ],
    expect: {
      changed: 'none',
      reply: { matches: ['outside|not (part of|in) (this|the) repository', "\\b(cannot|can't|can ?not|unable|not able|no access)\\b"] },
    },
  },
  {
    name: 'mkdocs/refuse-nonexistent-remote-cache',
    kind: 'refuse',
    fixture: 'mkdocs',
    turns: [
      {
        prompt: 'Extend docs/guide/caching.md with a section on configuring the remote cache (the [cache.remote] table in tern.toml, with url and token).',
        reference: [
          calls(search('remote'), read('tern/config.py')),
          done(
            'No change: Tern has no remote cache',
            'Nothing in the repository implements a remote cache: tern/config.py says results are only ever stored on the local disk (`cache_dir`), and no `[cache.remote]` table is read. Documenting it would describe a feature that does not exist. If it is planned, point me at the change and I will document it.',
          ),
        ],
      },
    ],
    expect: {
      changed: 'none',
      reply: { matches: ['remote', "\\b(no|not|n't|doesn't|does not|isn't|cannot|can't)\\b"] },
    },
  },
];
