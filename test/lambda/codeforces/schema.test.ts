import { describe, expect, it } from 'vitest';
import { contestSchema, describeIssue, envelopeSchema, isScheduled } from '../../../lambda/codeforces/schema.js';

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
  ])('rejects %j with a message naming the field', (value, message) => {
    expect(issue(value)).toMatch(message);
  });
});

describe('envelopeSchema', () => {
  it('accepts OK and FAILED envelopes', () => {
    expect(envelopeSchema.parse({ status: 'OK', result: [] })).toEqual({ status: 'OK', result: [] });
    expect(envelopeSchema.parse({ status: 'FAILED', comment: 'Call limit exceeded' })).toEqual({ status: 'FAILED', comment: 'Call limit exceeded' });
  });

  it('rejects other statuses, a missing result and a FAILED without comment', () => {
    expect(envelopeSchema.safeParse({ status: 'WAIT' }).success).toBe(false);
    expect(envelopeSchema.safeParse({ status: 'OK' }).success).toBe(false);
    expect(envelopeSchema.safeParse({ status: 'FAILED' }).success).toBe(false);
  });
});
