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

const JOBS_DIFF = `\`\`\`diff
--- a/tern/cli.py
+++ b/tern/cli.py
@@ def build_parser() -> argparse.ArgumentParser:
     run.add_argument("--force", action="store_true", help="Ignore the cache")
     run.add_argument("--dry-run", action="store_true", help="Print what would run")
+    run.add_argument(
+        "-j", "--jobs", type=int, default=os.cpu_count(),
+        help="Run at most N tasks at once (default: the number of CPUs)",
+    )
\`\`\``;

const TIMEOUT_DIFF = `\`\`\`diff
--- a/cmd/pgmeter/main.go
+++ b/cmd/pgmeter/main.go
@@ type options struct {
 	clients  int
 	duration time.Duration
+	timeout  time.Duration
 }
@@ func parseFlags() options {
 	flag.DurationVar(&o.duration, "duration", 10*time.Second, "how long to run")
+	flag.DurationVar(&o.timeout, "timeout", 30*time.Second, "cancel a query that runs longer than this; it counts as an error")
 	flag.Parse()
\`\`\``;

const RETRIES_DIFF = `\`\`\`diff
--- a/src/lib/client.ts
+++ b/src/lib/client.ts
@@ export interface OrbitOptions {
   key: string;
   region?: 'us' | 'eu';
   timeoutMs?: number;
+  /** Times a failed publish is retried, with exponential backoff. Default 3; 0 turns retries off. */
+  retries?: number;
 }
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
  {
    name: 'mkdocs/document-flag-jobs',
    kind: 'document-flag',
    fixture: 'mkdocs',
    turns: [
      {
        prompt: `Document the new option of \`tern run\` in the command line reference.\n\n${JOBS_DIFF}`,
        reference: [
          calls(read('docs/reference/cli.md')),
          calls(
            edit(
              'docs/reference/cli.md',
              '| `--dry-run` | Print what would run without running it. |\n',
              '| `--dry-run` | Print what would run without running it. |\n| `-j N`, `--jobs N` | Run at most N tasks at once. Default: the number of CPUs. |\n',
            ),
          ),
          done('Document tern run --jobs', 'Adds `-j`/`--jobs` to the options of `tern run` in docs/reference/cli.md.'),
        ],
      },
    ],
    expect: {
      files: { 'docs/reference/cli.md': { contains: ['--jobs', '`--force`'], matches: ['/-j\\b/', '/CPU/i'] } },
      checks: {},
      changed: { allowed: ['docs/reference/cli.md'] },
    },
  },
  {
    name: 'markdown/document-flag-timeout',
    kind: 'document-flag',
    fixture: 'markdown',
    turns: [
      {
        prompt: `pgmeter gets a new flag in this change. Add it to the flag table in docs/usage.md.\n\n${TIMEOUT_DIFF}`,
        reference: [
          calls(read('docs/usage.md'), read('CONTRIBUTING.md')),
          calls(
            edit(
              'docs/usage.md',
              '| `-duration` | `10s` | How long to run. |\n',
              '| `-duration` | `10s` | How long to run. |\n| `-timeout` | `30s` | Cancel a query that runs longer than this; it counts as an error. |\n',
            ),
          ),
          done('Document the -timeout flag', 'Adds `-timeout` (default `30s`) to the flag table in docs/usage.md.'),
        ],
      },
    ],
    expect: {
      files: { 'docs/usage.md': { contains: ['`-timeout`', '30s', '`-duration`'], notContains: ['--timeout'] } },
      checks: {},
      changed: { allowed: ['docs/usage.md'] },
    },
  },
  {
    name: 'docusaurus/document-option-retries',
    kind: 'document-flag',
    fixture: 'docusaurus',
    turns: [
      {
        prompt: `Document the client option this change adds, in the options table of the configuration guide.\n\n${RETRIES_DIFF}`,
        reference: [
          calls(read('docs/guides/configuration.md')),
          calls(
            edit(
              'docs/guides/configuration.md',
              '| `timeoutMs` | `number` | `10000` | How long a publish may take. |\n',
              '| `timeoutMs` | `number` | `10000` | How long a publish may take. |\n| `retries` | `number` | `3` | Times a failed publish is retried, with exponential backoff. `0` turns retries off. |\n',
            ),
          ),
          done('Document the retries option', 'Adds `retries` (default `3`) to the options table in docs/guides/configuration.md.'),
        ],
      },
    ],
    expect: {
      files: { 'docs/guides/configuration.md': { contains: ['`retries`', '`timeoutMs`'], matches: ['/retries[^\\n]*3/'] } },
      checks: {},
      changed: { allowed: ['docs/guides/configuration.md'] },
    },
  },
];
