// Add a page and wire it into the navigation.
import type { EvalTask } from '../lib/types.ts';
import { calls, check, done, edit, read, write } from './steps.ts';

const WEBHOOKS = `---
title: Webhooks
description: Get notified when a payment changes state.
---

Acme sends a \`POST\` request to your endpoint when a payment changes state.

## Register an endpoint

\`\`\`bash
curl https://api.acme.dev/v1/webhooks \\
  -H "Authorization: Bearer $ACME_API_KEY" \\
  -d url=https://example.com/acme/webhooks
\`\`\`

## Verify the signature

Each request carries an \`Acme-Signature\` header: an HMAC-SHA256 of the raw body with your endpoint's secret.
Reject requests whose signature does not match.

## Retries

An endpoint that does not answer \`2xx\` within 10 seconds is retried with backoff for up to three days.
See [Errors](/guides/errors) for the status codes the API itself answers.
`;

const PLUGINS = `# Plugins

Plugins add task types and hooks to Tern.

## Install a plugin

Plugins are Python packages named \`tern-<name>\`:

\`\`\`console
$ pip install tern-docker
\`\`\`

## Enable a plugin

List the plugin under \`plugins\` in \`tern.toml\` (see [Configuration](configuration.md)):

\`\`\`toml
plugins = ["docker"]
\`\`\`
`;

const MIGRATING = `---
title: Migrating to v2
---

# Migrating to v2

Orbit SDK 2.0 changes how clients are created and how events are published.

## Create clients with \`createClient\`

\`new Orbit(options)\` is replaced by \`createClient(options)\`:

\`\`\`ts
import { createClient } from 'orbit-sdk';

const orbit = createClient({ key: process.env.ORBIT_KEY });
\`\`\`

## \`publish\` takes one object

\`\`\`ts
await orbit.publish({ channel: 'orders', event: { type: 'created', id: 'ord_42' } });
\`\`\`

See the [client reference](../api/client.md) for the other methods, which did not change.
`;

const TROUBLESHOOTING = `# Troubleshooting

## connection refused

pgmeter could not reach the server. Check the host and port in \`-dsn\` (or \`PGMETER_DSN\`) and that
PostgreSQL listens on that address (\`listen_addresses\` in \`postgresql.conf\`).

## permission denied for table

The role in the connection string may not read the table the \`-query\` uses. Grant it:

\`\`\`sql
GRANT SELECT ON orders TO pgmeter;
\`\`\`

See [Configuration](configuration.md) for how the connection string is chosen.
`;

export const addPageTasks: EvalTask[] = [
  {
    name: 'mintlify/add-page-webhooks',
    kind: 'add-page',
    fixture: 'mintlify',
    turns: [
      {
        prompt:
          'Add a guide about webhooks at guides/webhooks.mdx: registering an endpoint with POST /v1/webhooks, verifying the Acme-Signature header (HMAC-SHA256 of the raw body), and retries (endpoints that do not answer 2xx within 10 seconds are retried for up to three days). Put it in the Guides group of the navigation, after Errors.',
        reference: [
          calls(read('docs.json'), read('guides/errors.mdx')),
          calls(
            write('guides/webhooks.mdx', WEBHOOKS),
            edit('docs.json', '"guides/pagination", "guides/errors"]', '"guides/pagination", "guides/errors", "guides/webhooks"]'),
          ),
          calls(check()),
          done(
            'Add a webhooks guide',
            'New page guides/webhooks.mdx (registering an endpoint, verifying `Acme-Signature`, retries), in the Guides group after Errors.',
          ),
        ],
      },
    ],
    expect: {
      files: {
        'guides/webhooks.mdx': { exists: true, contains: ['Acme-Signature', '/v1/webhooks'], matches: ['^---\\n(.*\\n)*title: .+', '/three days|3 days/i'] },
      },
      nav: { includes: ['guides/webhooks'] },
      checks: {},
      changed: { allowed: ['guides/webhooks.mdx', 'docs.json'] },
    },
  },
  {
    name: 'mkdocs/add-page-plugins',
    kind: 'add-page',
    fixture: 'mkdocs',
    turns: [
      {
        prompt:
          'Write a user guide page docs/guide/plugins.md about plugins: they are installed with `pip install tern-<name>` and enabled by listing them under `plugins` in tern.toml, e.g. plugins = ["docker"]. Add it to the User guide section of the nav, after Caching.',
        reference: [
          calls(read('mkdocs.yml'), read('docs/guide/configuration.md')),
          calls(
            write('docs/guide/plugins.md', PLUGINS),
            edit('mkdocs.yml', '      - Caching: guide/caching.md\n', '      - Caching: guide/caching.md\n      - Plugins: guide/plugins.md\n'),
          ),
          done(
            'Add a plugins page to the user guide',
            'docs/guide/plugins.md explains installing (`pip install tern-<name>`) and enabling plugins; it is in the User guide nav after Caching.',
          ),
        ],
      },
    ],
    expect: {
      files: { 'docs/guide/plugins.md': { exists: true, contains: ['pip install tern-', 'plugins'], matches: ['^# .+'] } },
      nav: { includes: ['guide/plugins.md'] },
      checks: {},
      changed: { allowed: ['docs/guide/plugins.md', 'mkdocs.yml'] },
    },
  },
  {
    name: 'docusaurus/add-page-migration',
    kind: 'add-page',
    fixture: 'docusaurus',
    turns: [
      {
        prompt:
          'We are releasing Orbit SDK 2.0. Add a migration guide at docs/guides/migrating-to-v2.md: `new Orbit(options)` becomes `createClient(options)`, and `publish(channel, event)` becomes `publish({ channel, event })`. Put it first in the Guides category of the sidebar.',
        reference: [
          calls(read('sidebars.js'), read('AGENTS.md'), read('docs/api/client.md')),
          calls(
            write('docs/guides/migrating-to-v2.md', MIGRATING),
            edit(
              'sidebars.js',
              "items: ['guides/configuration', 'guides/deploying'],",
              "items: ['guides/migrating-to-v2', 'guides/configuration', 'guides/deploying'],",
            ),
          ),
          calls(check()),
          done(
            'Add a v2 migration guide',
            'docs/guides/migrating-to-v2.md covers `createClient` and the new `publish` signature; it is first in the Guides category.',
          ),
        ],
      },
    ],
    expect: {
      files: { 'docs/guides/migrating-to-v2.md': { exists: true, contains: ['createClient'], matches: ['publish\\(\\{'] } },
      nav: { includes: ['guides/migrating-to-v2'] },
      checks: {},
      changed: { allowed: ['docs/guides/migrating-to-v2.md', 'sidebars.js'] },
    },
  },
  {
    name: 'markdown/add-page-troubleshooting',
    kind: 'add-page',
    fixture: 'markdown',
    turns: [
      {
        prompt:
          'Add a troubleshooting page, docs/troubleshooting.md, for the two errors users hit most: "connection refused" (wrong host/port in the DSN, or PostgreSQL not listening) and "permission denied for table" (the role lacks SELECT). Link it from the docs index.',
        reference: [
          calls(read('docs/README.md'), read('docs/configuration.md')),
          calls(
            write('docs/troubleshooting.md', TROUBLESHOOTING),
            edit('docs/README.md', '- [FAQ](faq.md)\n', '- [FAQ](faq.md)\n- [Troubleshooting](troubleshooting.md): common errors and their fixes.\n'),
          ),
          done(
            'Add a troubleshooting page',
            'docs/troubleshooting.md covers "connection refused" and "permission denied for table"; the docs index links to it.',
          ),
        ],
      },
    ],
    expect: {
      files: {
        'docs/troubleshooting.md': { exists: true, matches: ['/connection refused/i', '/permission denied/i', '/GRANT|SELECT/'] },
        'docs/README.md': { matches: ['\\]\\((\\./)?troubleshooting\\.md\\)'] },
      },
      checks: {},
      changed: { allowed: ['docs/troubleshooting.md', 'docs/README.md'] },
    },
  },
];
