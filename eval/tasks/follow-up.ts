// Two turns on the same branch: the second builds on what the first pushed.
import type { EvalTask } from '../lib/types.ts';
import { calls, done, edit, read, write } from './steps.ts';

const LOGGING = `# Logging

Orbit SDK logs connection changes and failed publishes. Set the level with the \`logLevel\` option:

\`\`\`ts
const orbit = new Orbit({ key: process.env.ORBIT_KEY, logLevel: 'debug' });
\`\`\`

## Levels

| Level | What is logged |
| --- | --- |
| \`debug\` | Every event sent and received. |
| \`info\` | Connections and reconnections. |
| \`warn\` | Retried publishes. |
| \`error\` | Publishes that failed for good. |
`;

export const followUpTasks: EvalTask[] = [
  {
    name: 'docusaurus/follow-up-logging-env',
    kind: 'follow-up',
    fixture: 'docusaurus',
    turns: [
      {
        prompt:
          'Add a guide docs/guides/logging.md on logging: the `logLevel` client option takes debug, info, warn or error (debug logs every event, info connections, warn retried publishes, error failed publishes). Add it to the Guides category of the sidebar.',
        reference: [
          calls(read('sidebars.js'), read('docs/guides/configuration.md')),
          calls(
            write('docs/guides/logging.md', LOGGING),
            edit(
              'sidebars.js',
              "items: ['guides/configuration', 'guides/deploying'],",
              "items: ['guides/configuration', 'guides/deploying', 'guides/logging'],",
            ),
          ),
          done('Add a logging guide', 'docs/guides/logging.md documents the `logLevel` option and its levels; it is in the Guides category of the sidebar.'),
        ],
      },
      {
        prompt: 'Thanks. Also document that the ORBIT_LOG_LEVEL environment variable overrides `logLevel`, and that the default level is `warn`.',
        reference: [
          calls(read('docs/guides/logging.md')),
          calls(
            edit(
              'docs/guides/logging.md',
              '## Levels\n',
              'The default level is `warn`. The `ORBIT_LOG_LEVEL` environment variable overrides `logLevel`, so you can turn on debug logs without a deploy:\n\n```bash\nORBIT_LOG_LEVEL=debug node server.js\n```\n\n## Levels\n',
            ),
          ),
          done(
            'Add a logging guide',
            'docs/guides/logging.md documents `logLevel`, its default (`warn`) and the `ORBIT_LOG_LEVEL` override; it is in the Guides sidebar.',
          ),
        ],
      },
    ],
    expect: {
      files: {
        'docs/guides/logging.md': { exists: true, contains: ['ORBIT_LOG_LEVEL', 'logLevel'], matches: ['/default[^\\n]*`?warn`?/i', '^# '] },
      },
      nav: { includes: ['guides/logging'] },
      checks: {},
      changed: { allowed: ['docs/guides/logging.md', 'sidebars.js'] },
    },
  },
];
