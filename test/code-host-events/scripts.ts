// The scripted model's two turns the code-host tests share: the first documents `--dry-run` in docs/cli.md,
// the follow-up (asked for in a review or a diff-line comment) rewords what it prints.
import type { ModelScriptEntry } from '../helpers/model-server.ts';

export const DRY_RUN_TURNS: ModelScriptEntry[] = [
  {
    toolCalls: [
      {
        name: 'edit_file',
        args: { path: 'docs/cli.md', old_string: 'Run `acme build`.', new_string: 'Run `acme build`.\n\n`--dry-run` prints what would change.' },
      },
    ],
  },
  { text: 'Document --dry-run\n\nThe CLI page describes the flag.' },
  {
    toolCalls: [
      {
        name: 'edit_file',
        args: { path: 'docs/cli.md', old_string: 'prints what would change.', new_string: 'prints the files it would write, and writes none.' },
      },
    ],
  },
  { text: 'Say what --dry-run prints' },
];
