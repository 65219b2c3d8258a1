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
];
