/** The contract's helpers: qualified ids and the phase of a platform without phases. */
import { describe, expect, it } from 'vitest';
import { LISTED_LIMITS, phaseAt, qualifiedId } from '../../../lambda/sources/source.js';

describe('qualifiedId', () => {
  it('is <platform>:<platformId>, so that ids of two platforms never collide', () => {
    expect(qualifiedId('atcoder', 'abc199')).toBe('atcoder:abc199');
    expect(qualifiedId('codeforces', '2120')).not.toBe(qualifiedId('leetcode', '2120'));
  });
});

describe('phaseAt', () => {
  const start = 1_000_000;
  it('is BEFORE until the start, CODING from the start, FINISHED from the end', () => {
    expect(phaseAt(start, 5400, start - 1)).toBe('BEFORE');
    expect(phaseAt(start, 5400, start)).toBe('CODING');
    expect(phaseAt(start, 5400, start + 5399)).toBe('CODING');
    expect(phaseAt(start, 5400, start + 5400)).toBe('FINISHED');
  });
});

describe('LISTED_LIMITS', () => {
  it('bound platforms and ids to safe text', () => {
    expect(LISTED_LIMITS.platformPattern.test('codechef')).toBe(true);
    expect(LISTED_LIMITS.platformPattern.test('CodeChef')).toBe(false);
    expect(LISTED_LIMITS.platformPattern.test('a'.repeat(21))).toBe(false);
    expect(LISTED_LIMITS.platformIdPattern.test('weekly-contest-91')).toBe(true);
    expect(LISTED_LIMITS.platformIdPattern.test('a/b')).toBe(false);
    expect(LISTED_LIMITS.platformIdPattern.test('a'.repeat(64))).toBe(true);
    expect(LISTED_LIMITS.platformIdPattern.test('a'.repeat(65))).toBe(false);
  });
});
