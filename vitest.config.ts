import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts', 'test/cli/build-setup.ts'],
    // Generous: CI shares a busy 2-core machine, and tests that start the CLI pay its start-up on every call.
    // A timeout is a safety net here, never an assertion about speed.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
