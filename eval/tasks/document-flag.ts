// Document a CLI flag or option from the code diff given in the request.
import type { EvalTask } from '../lib/types.ts';
import { calls, done, edit, read } from './steps.ts';

const DRY_RUN_DIFF = `\`\`\`diff
--- a/src/cli/flags.ts
+++ b/src/cli/flags.ts
@@ export const deployFlags = {
   env: { type: 'string', choices: ['test', 'production'], default: 'test' },
   file: { type: 'string', default: 'acme.yaml' },
+  // Validate acme.yaml and print the changes deploy would make, without making them.
+  'dry-run': { type: 'boolean', default: false },
 };
\`\`\``;

export const documentFlagTasks: EvalTask[] = [
  {
    name: 'mintlify/document-flag-dry-run',
    kind: 'document-flag',
    fixture: 'mintlify',
    turns: [
      {
        prompt: `This change adds a flag to \`acme deploy\`. Document it in the deploy section of cli/commands.mdx.\n\n${DRY_RUN_DIFF}`,
        reference: [
          calls(read('cli/commands.mdx')),
          calls(
            edit(
              'cli/commands.mdx',
              '| `--file <path>` | The configuration file. Default: `acme.yaml`. |\n',
              '| `--file <path>` | The configuration file. Default: `acme.yaml`. |\n| `--dry-run` | Validate the configuration file and print the changes `deploy` would make, without making them. |\n',
            ),
          ),
          done('Document acme deploy --dry-run', 'Adds `--dry-run` to the flag table of `acme deploy` in cli/commands.mdx.'),
        ],
      },
    ],
    expect: {
      files: { 'cli/commands.mdx': { contains: ['`--dry-run`', '`--env <name>`'], matches: ['/## acme deploy[\\s\\S]*--dry-run/'] } },
      checks: {},
      changed: { allowed: ['cli/commands.mdx'] },
    },
  },
];
