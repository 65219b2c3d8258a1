// What a turn does to its pull request's state: draft or ready, the title, and what its comment says. Pure.
import { describe, expect, it } from 'vitest';
import { CHECKS_DRAFT_MARKER, pullRequestState } from '../../src/agent/pr-state.ts';

const checksDraft = { draft: true, body: `Body\n\n---\nOpened by Inkwell.\n${CHECKS_DRAFT_MARKER}` };

describe('pull request state', () => {
  it('opening: a draft when the job asks for one or the checks fail; only the second is marked as the checks’', () => {
    const open = (jobDraft: boolean, checks: 'passed' | 'failed' | null) => pullRequestState({ jobDraft, checks, existing: null, newTitle: 'ignored' });
    expect(open(false, 'failed')).toEqual({ draft: true, checksDraft: true, markReady: false, title: null, note: null });
    expect(open(true, 'failed')).toMatchObject({ draft: true, checksDraft: false });
    expect(open(true, 'passed')).toMatchObject({ draft: true, checksDraft: false });
    expect(open(false, 'passed')).toMatchObject({ draft: false, checksDraft: false });
    expect(open(false, null)).toMatchObject({ draft: false, checksDraft: false });
  });

  it('a follow-up whose checks pass marks ready only a draft its checks made', () => {
    const follow = (jobDraft: boolean, checks: 'passed' | 'failed' | null, existing: { draft: boolean; body: string | null }) =>
      pullRequestState({ jobDraft, checks, existing, newTitle: null });
    expect(follow(false, 'passed', checksDraft)).toEqual({
      draft: false,
      checksDraft: false,
      markReady: true,
      title: null,
      note: 'The docs checks pass now: the pull request is marked ready for review.',
    });
    // The job asked for a draft: it stays one, whatever the body says.
    expect(follow(true, 'passed', checksDraft)).toMatchObject({ draft: true, markReady: false, checksDraft: false, note: null });
    // A draft a person made (no marker), or a marker in a pull request that is not a draft.
    expect(follow(false, 'passed', { draft: true, body: 'Made a draft by hand' })).toMatchObject({ draft: true, markReady: false, note: null });
    expect(follow(false, 'passed', { draft: false, body: checksDraft.body })).toMatchObject({ draft: false, markReady: false, note: null });
    // Checks still failing, or not run: a checks draft stays one, still marked.
    expect(follow(false, 'failed', checksDraft)).toMatchObject({
      draft: true,
      checksDraft: true,
      markReady: false,
      note: 'The docs checks still fail: the pull request stays a draft.',
    });
    expect(follow(false, null, checksDraft)).toMatchObject({ draft: true, checksDraft: true, markReady: false, note: null });
  });

  it('over the changed-files budget: a draft without the checks’ marker, and no follow-up marks it ready while over', () => {
    expect(pullRequestState({ jobDraft: false, overBudget: true, checks: 'failed', existing: null, newTitle: null })).toMatchObject({
      draft: true,
      checksDraft: false,
    });
    expect(pullRequestState({ jobDraft: false, overBudget: true, checks: 'passed', existing: checksDraft, newTitle: null })).toMatchObject({
      draft: true,
      checksDraft: true,
      markReady: false,
    });
  });

  it('a follow-up whose checks fail on a ready pull request leaves it ready and says so', () => {
    expect(pullRequestState({ jobDraft: false, checks: 'failed', existing: { draft: false, body: 'B' }, newTitle: null })).toEqual({
      draft: false,
      checksDraft: false,
      markReady: false,
      title: null,
      note: 'The docs checks fail after this turn; the pull request stays ready for review (its description lists the findings).',
    });
  });

  it('renames only with the title a follow-up gave', () => {
    expect(pullRequestState({ jobDraft: false, checks: null, existing: { draft: false, body: null }, newTitle: 'Add an FAQ' }).title).toBe('Add an FAQ');
    expect(pullRequestState({ jobDraft: false, checks: null, existing: { draft: false, body: null }, newTitle: null }).title).toBeNull();
  });
});
