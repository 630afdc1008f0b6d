import { describe, expect, it } from 'vitest';
import {
  CONTEST_LIMITS,
  contestSchema,
  describeIssue,
  envelopeSchema,
  inconsistency,
  isScheduled,
  type CodeforcesContest,
} from '../../../../lambda/sources/codeforces/schema.js';
import { utf8Bytes } from '@contest-sync/scheduled-singleton';

const contest = {
  id: 2126,
  name: 'Codeforces Round 1036 (Div. 1)',
  type: 'CF',
  phase: 'BEFORE',
  frozen: false,
  durationSeconds: 9000,
  startTimeSeconds: 1751380500,
  relativeTimeSeconds: -1650900,
};

function issue(value: unknown): string {
  const parsed = contestSchema.safeParse(value);
  if (parsed.success) throw new Error('expected a validation failure');
  return describeIssue(parsed.error);
}

describe('contestSchema', () => {
  it('accepts a real contest and keeps unknown fields', () => {
    const parsed = contestSchema.parse({ ...contest, preparedBy: 'someone', kind: 'Official' });
    expect(parsed).toMatchObject({ ...contest, preparedBy: 'someone', kind: 'Official' });
    expect(isScheduled(parsed)).toBe(true);
  });

  it('accepts an unscheduled contest (no startTimeSeconds) and marks it unscheduled', () => {
    const { startTimeSeconds: _s, relativeTimeSeconds: _r, ...unscheduled } = contest;
    const parsed = contestSchema.parse(unscheduled);
    expect(isScheduled(parsed)).toBe(false);
  });

  it.each([
    [{ ...contest, id: 0 }, /^id: Too small/],
    [{ ...contest, id: 12.5 }, /^id: Invalid input: expected int/],
    [{ ...contest, name: '' }, /^name: Too small/],
    [{ ...contest, type: 'TEAM' }, /^type: Invalid option: expected one of "CF"\|"IOI"\|"ICPC"/],
    [{ ...contest, phase: 'WAITING' }, /^phase: Invalid option/],
    [{ ...contest, frozen: 'no' }, /^frozen: Invalid input: expected boolean/],
    [{ ...contest, durationSeconds: -1 }, /^durationSeconds: Too small/],
    [{ ...contest, startTimeSeconds: '1751380500' }, /^startTimeSeconds: Invalid input: expected number/],
    ['a string', /^Invalid input: expected object/],
    // Unstorable or absurd: a stored item must stay a few KB, times must be times.
    [{ ...contest, name: 'n'.repeat(500 * 1024) }, /^name: Too big: expected string to have <=512 characters$/],
    [{ ...contest, durationSeconds: 400 * 24 * 3600 }, /^durationSeconds: Too big/],
    [{ ...contest, startTimeSeconds: 1e12 }, /^startTimeSeconds: Too big/],
    [{ ...contest, startTimeSeconds: -5 }, /^startTimeSeconds: Too small/],
  ])('rejects %j with a message naming the field', (value, message) => {
    expect(issue(value)).toMatch(message);
  });
});

describe('envelopeSchema', () => {
  it('accepts OK and FAILED envelopes', () => {
    expect(envelopeSchema.parse({ status: 'OK', result: [] })).toEqual({ status: 'OK', result: [] });
    expect(envelopeSchema.parse({ status: 'FAILED', comment: 'Call limit exceeded' })).toEqual({
      status: 'FAILED',
      comment: 'Call limit exceeded',
    });
  });

  it('rejects other statuses, a missing result and a FAILED without comment', () => {
    expect(envelopeSchema.safeParse({ status: 'WAIT' }).success).toBe(false);
    expect(envelopeSchema.safeParse({ status: 'OK' }).success).toBe(false);
    expect(envelopeSchema.safeParse({ status: 'FAILED' }).success).toBe(false);
  });
});

describe('limits', () => {
  it('accepts the longest name allowed and a week-long contest', () => {
    expect(
      contestSchema.safeParse({ ...contest, name: '€'.repeat(CONTEST_LIMITS.maxNameLength), durationSeconds: 7 * 24 * 3600 }).success,
    ).toBe(true);
  });

  it('describes an issue in at most 256 bytes even when the path echoes the input', () => {
    const parsed = envelopeSchema.safeParse({ status: 'FAILED', comment: 5 });
    expect(parsed.success).toBe(false);
    const huge = contestSchema.safeParse({ ...contest, type: 'x'.repeat(1_000_000) });
    if (huge.success || parsed.success) throw new Error('expected failures');
    expect(utf8Bytes(describeIssue(huge.error))).toBeLessThanOrEqual(256);
    const issue = { ...huge.error.issues[0]!, path: ['k'.repeat(10_000)] };
    expect(utf8Bytes(describeIssue({ ...huge.error, issues: [issue] }))).toBeLessThanOrEqual(256);
  });
});

describe('inconsistency', () => {
  const NOW = 1_750_000_000;
  const at = (overrides: Partial<CodeforcesContest>) => ({ ...contest, ...overrides }) as CodeforcesContest;

  it('believes consistent contests, including ones stuck unfinished for years', () => {
    expect(inconsistency(at({ phase: 'BEFORE', startTimeSeconds: NOW + 3600 }), NOW)).toBeUndefined();
    expect(inconsistency(at({ phase: 'FINISHED', startTimeSeconds: NOW - 86_400 }), NOW)).toBeUndefined();
    expect(inconsistency(at({ phase: 'PENDING_SYSTEM_TEST', startTimeSeconds: NOW - 5 * 365 * 86_400 }), NOW)).toBeUndefined();
    // A contest just past its start but not yet switched to CODING, and a few minutes of clock skew.
    expect(inconsistency(at({ phase: 'BEFORE', startTimeSeconds: NOW - 3 * 3600, durationSeconds: 7200 }), NOW)).toBeUndefined();
    expect(inconsistency(at({ phase: 'FINISHED', startTimeSeconds: NOW + 60 }), NOW)).toBeUndefined();
  });

  it('does not believe FINISHED before the start, nor BEFORE a day after the end', () => {
    expect(inconsistency(at({ phase: 'FINISHED', startTimeSeconds: NOW + 3600 }), NOW)).toBe('phase FINISHED but it starts in 3600 s');
    expect(inconsistency(at({ phase: 'BEFORE', startTimeSeconds: NOW - 2 * 86_400, durationSeconds: 7200 }), NOW)).toBe(
      `phase BEFORE but it ended ${2 * 86_400 - 7200} s ago`,
    );
  });
});

describe('relativeTimeSeconds (it dates the reply)', () => {
  it('is optional, and bounded by the span of storable starts', () => {
    const base = {
      id: 1,
      name: 'Round',
      type: 'CF',
      phase: 'BEFORE',
      frozen: false,
      durationSeconds: 7200,
      startTimeSeconds: 1_800_000_000,
    };
    expect(contestSchema.safeParse(base).success).toBe(true);
    expect(contestSchema.safeParse({ ...base, relativeTimeSeconds: -3600 }).success).toBe(true);
    expect(contestSchema.safeParse({ ...base, relativeTimeSeconds: 1e12 }).success).toBe(false);
    expect(contestSchema.safeParse({ ...base, relativeTimeSeconds: 1.5 }).success).toBe(false);
  });
});
