// The timeline's words for a `scope` event (src/dashboard/scope-text.ts), on the data the executor stores.
import { expect, it } from 'vitest';
import { scopeText } from '../../src/dashboard/scope-text.ts';

it('says what was reverted, what was kept and the budget; odd data stays text', () => {
  expect(
    scopeText({
      reverted: [
        { path: 'package-lock.json', reason: 'lockfile' },
        { path: 'dist/app.js', reason: 'build-output' },
      ],
      justified: [{ path: 'yarn.lock', reason: 'lockfile', justification: 'asked for' }],
      overBudget: true,
      changedFiles: 30,
      maxChangedFiles: 25,
    }),
  ).toBe(
    "Scope: reverted 2 out-of-scope files: package-lock.json, dist/app.js; kept 1 with the agent's reason: yarn.lock; over the budget: 30 of 25 files, so the pull request is a draft",
  );
  expect(scopeText({ reverted: [{ path: '<b>x</b>' }], justified: 'nope', overBudget: false })).toBe('Scope: reverted 1 out-of-scope file: <b>x</b>');
  expect(scopeText({ reverted: [{ path: 'guides/setup.md', reason: 'unrelated-page' }], justified: [], overBudget: false })).toBe(
    'Scope: reverted 1 out-of-scope file: guides/setup.md (unrelated page)',
  );
});
