import { describe, expect, it } from 'vitest';
import {
  branchName,
  canTransition,
  IllegalTransitionError,
  isValidBranchName,
  JOB_STATUSES,
  JOB_TRIGGERS,
  type JobState,
  type JobTrigger,
  nextState,
  shortJobId,
  slugify,
  TRANSITIONS,
  transition,
  visiblePrLink,
} from '../../src/jobs/state.ts';

// SPEC 3.2 written out independently of the table: every legal (from, trigger) → to.
const LEGAL: [JobState, JobTrigger, string][] = [
  ['new', 'create', 'active'],
  ['active', 'run_completed', 'completed'],
  ['active', 'run_failed', 'failed'],
  ['active', 'archive', 'archived'],
  ['completed', 'message', 'active'],
  ['completed', 'archive', 'archived'],
  ['failed', 'message', 'active'],
  ['failed', 'archive', 'archived'],
];

const STATES: JobState[] = ['new', ...JOB_STATUSES];

describe('job state machine', () => {
  it.each(LEGAL)('%s --%s--> %s is legal', (from, trigger, to) => {
    expect(nextState(from, trigger)).toBe(to);
    expect(transition(from, trigger)).toBe(to);
    expect(canTransition(from, trigger)).toBe(true);
  });

  const illegal = STATES.flatMap((from) =>
    JOB_TRIGGERS.filter((trigger) => !LEGAL.some(([f, t]) => f === from && t === trigger)).map((trigger) => [from, trigger] as [JobState, JobTrigger]),
  );

  it('covers every (state, trigger) pair as either legal or illegal', () => {
    expect(LEGAL.length + illegal.length).toBe(STATES.length * JOB_TRIGGERS.length);
    expect(illegal.length).toBe(17);
  });

  it.each(illegal)('%s --%s--> is illegal', (from, trigger) => {
    expect(nextState(from, trigger)).toBeNull();
    expect(canTransition(from, trigger)).toBe(false);
    expect(() => transition(from, trigger)).toThrow(IllegalTransitionError);
  });

  it('archived is final: no trigger leaves it', () => {
    expect(Object.keys(TRANSITIONS.archived)).toEqual([]);
    for (const t of JOB_TRIGGERS) expect(nextState('archived', t)).toBeNull();
  });

  it('every non-archived status can be archived', () => {
    for (const s of JOB_STATUSES.filter((s) => s !== 'archived')) expect(nextState(s, 'archive')).toBe('archived');
  });

  it('the error names the transition', () => {
    expect(() => transition('archived', 'message')).toThrow('Illegal job transition: message from archived');
  });

  it('prLink is hidden while active and shown otherwise', () => {
    expect(visiblePrLink('active', 'https://x/pull/1')).toBeNull();
    expect(visiblePrLink('completed', 'https://x/pull/1')).toBe('https://x/pull/1');
    expect(visiblePrLink('failed', 'https://x/pull/1')).toBe('https://x/pull/1');
    expect(visiblePrLink('archived', 'https://x/pull/1')).toBe('https://x/pull/1');
    expect(visiblePrLink('completed', null)).toBeNull();
  });
});

describe('branch naming', () => {
  it('is inkwell/<short-id>-<slug>', () => {
    expect(branchName('job_AbCdEfGh12345678', 'Fix the typo in the Quickstart guide!')).toBe('inkwell/abcdefgh-fix-the-typo-in-the-quickstart-guide');
  });

  it('short id is the first 8 characters of the random part, lower-cased', () => {
    expect(shortJobId('job_XYZ12345abcdef')).toBe('xyz12345');
    expect(shortJobId('plainid123456')).toBe('plainid1');
  });

  it('slug keeps whole words up to 40 characters', () => {
    const s = slugify('Document every single endpoint of the analytics API with examples and more');
    expect(s.length).toBeLessThanOrEqual(40);
    expect(s).toBe('document-every-single-endpoint-of-the');
  });

  it('slug strips accents, punctuation and non-Latin text', () => {
    expect(slugify('Café — naïve résumé: update ../../etc/passwd')).toBe('cafe-naive-resume-update-etc-passwd');
    expect(slugify('文档 更新')).toBe('');
    expect(branchName('job_abcdefgh99', '文档 更新')).toBe('inkwell/abcdefgh');
  });

  it('cuts a single very long word', () => {
    expect(slugify('a'.repeat(100))).toBe('a'.repeat(40));
  });

  it('always produces a valid git branch name', () => {
    for (const p of ['', '  ', '...', 'x.lock', 'Update docs/guide.md', '-leading dash', 'a..b', 'HEAD']) {
      expect(isValidBranchName(branchName('job_Q1w2e3r4t5', p))).toBe(true);
    }
  });

  it('validates requested branch names', () => {
    for (const ok of ['main', 'docs/update-1', 'feature/x.y', 'release-2.0']) expect(isValidBranchName(ok)).toBe(true);
    for (const bad of [
      '',
      'a b',
      'a..b',
      '/a',
      'a/',
      'a//b',
      'a.lock',
      '.hidden',
      'a/.b',
      '-x',
      'HEAD',
      'a~1',
      'a^',
      'a:b',
      'a@{1}',
      'x\\y',
      'x'.repeat(201),
    ]) {
      expect(isValidBranchName(bad), bad).toBe(false);
    }
  });
});
