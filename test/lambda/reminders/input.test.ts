/**
 * The write path's inputs and errors (lambda/reminders/input.ts, errors.ts): every bound refused
 * as invalid-input with the fields named and no value quoted, messages at most 1 KB, the
 * platform-qualified id of any known platform, and a cursor that is refused when altered or taken from another user.
 */
import { describe, expect, it } from 'vitest';
import {
  cancelInputSchema,
  decodeCursor,
  encodeCursor,
  listInputSchema,
  parseInput,
  setInputSchema,
} from '../../../lambda/reminders/input.js';
import {
  ContestNotFoundError,
  ContestStartedError,
  InvalidInputError,
  ReminderConflictError,
  ReminderError,
} from '../../../lambda/reminders/errors.js';

const refusal = (run: () => unknown): InvalidInputError => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toBeInstanceOf(ReminderError);
    expect((error as InvalidInputError).code).toBe('invalid-input');
    expect(Buffer.byteLength((error as Error).message)).toBeLessThanOrEqual(1024);
    return error as InvalidInputError;
  }
  throw new Error('expected a refusal');
};
const set = (input: unknown) => parseInput(setInputSchema, input, 'setReminder');

describe('setReminder input', () => {
  it('accepts the bounds: a qualified contestId of a known platform, minutesBefore 0..10080, userId up to 256 bytes', () => {
    expect(set({ contestId: 'codeforces:1', userId: 'a', minutesBefore: 0 })).toEqual({
      contestId: 'codeforces:1',
      userId: 'a',
      minutesBefore: 0,
    });
    expect(set({ contestId: 'atcoder:abc199', userId: 'é'.repeat(128), minutesBefore: 10_080 }).minutesBefore).toBe(10_080);
    expect(set({ contestId: 'codechef:START151A', userId: 'a', minutesBefore: 1 }).contestId).toBe('codechef:START151A');
    expect(set({ contestId: `leetcode:${'w'.repeat(64)}`, userId: 'a', minutesBefore: 1 }).contestId).toHaveLength(73);
    expect(set({ contestId: 'codeforces:2051', userId: 'auth0|6543 用户 😀', minutesBefore: 30 }).userId).toBe('auth0|6543 用户 😀');
  });

  it.each([
    ['contestId a number', { contestId: 2051, userId: 'a', minutesBefore: 1 }, ['contestId']],
    ['contestId unqualified', { contestId: '2051', userId: 'a', minutesBefore: 1 }, ['contestId']],
    ['contestId of an unknown platform', { contestId: 'topcoder:2051', userId: 'a', minutesBefore: 1 }, ['contestId']],
    ['contestId without a platform id', { contestId: 'codeforces:', userId: 'a', minutesBefore: 1 }, ['contestId']],
    ['contestId with a space', { contestId: 'codeforces:20 51', userId: 'a', minutesBefore: 1 }, ['contestId']],
    ['contestId with a #', { contestId: 'codeforces:2051#00', userId: 'a', minutesBefore: 1 }, ['contestId']],
    ['contestId platform id over 64', { contestId: `atcoder:${'a'.repeat(65)}`, userId: 'a', minutesBefore: 1 }, ['contestId']],
    ['contestId the reply clock', { contestId: 'clock#codeforces', userId: 'a', minutesBefore: 1 }, ['contestId']],
    ['minutesBefore negative', { contestId: 'codeforces:1', userId: 'a', minutesBefore: -1 }, ['minutesBefore']],
    ['minutesBefore above a week', { contestId: 'codeforces:1', userId: 'a', minutesBefore: 10_081 }, ['minutesBefore']],
    ['minutesBefore fractional', { contestId: 'codeforces:1', userId: 'a', minutesBefore: 2.5 }, ['minutesBefore']],
    ['minutesBefore NaN', { contestId: 'codeforces:1', userId: 'a', minutesBefore: Number.NaN }, ['minutesBefore']],
    ['minutesBefore missing', { contestId: 'codeforces:1', userId: 'a' }, ['minutesBefore']],
    ['userId empty', { contestId: 'codeforces:1', userId: '', minutesBefore: 1 }, ['userId']],
    ['userId 257 bytes', { contestId: 'codeforces:1', userId: 'x'.repeat(257), minutesBefore: 1 }, ['userId']],
    ['userId 129 two-byte characters', { contestId: 'codeforces:1', userId: 'é'.repeat(129), minutesBefore: 1 }, ['userId']],
    ['userId with a newline', { contestId: 'codeforces:1', userId: 'a\nb', minutesBefore: 1 }, ['userId']],
    ['userId with NUL', { contestId: 'codeforces:1', userId: 'a\u0000', minutesBefore: 1 }, ['userId']],
    ['userId with a C1 control', { contestId: 'codeforces:1', userId: 'a\u0085', minutesBefore: 1 }, ['userId']],
    ['userId with a lone surrogate', { contestId: 'codeforces:1', userId: 'a\uD800b', minutesBefore: 1 }, ['userId']],
    ['userId not a string', { contestId: 'codeforces:1', userId: 42, minutesBefore: 1 }, ['userId']],
    ['everything wrong', { contestId: 'x', userId: null, minutesBefore: {} }, ['contestId', 'userId', 'minutesBefore']],
  ])('refuses %s, naming the field', (_name, input, fields) => {
    const error = refusal(() => set(input));
    expect(error.fields).toEqual(fields);
    expect(error.message.startsWith('setReminder: ')).toBe(true);
  });

  it('refuses what is not an object, and unknown fields (named, cut short), without quoting a hostile value', () => {
    for (const input of [null, undefined, 'alice', 42, [1, 2]]) expect(refusal(() => set(input)).message).toMatch(/must be an object/);
    const huge = 'A'.repeat(1_000_000);
    const error = refusal(() => set({ contestId: 'codeforces:1', userId: huge, minutesBefore: 1, [huge]: 1, extra: 2, more: 3, most: 4 }));
    expect(error.fields).toEqual(['userId']);
    expect(error.message).toContain('unknown fields');
    expect(error.message).toContain('"extra"');
    expect(error.message.length).toBeLessThan(600);
    expect(error.message).not.toContain('A'.repeat(41));
  });
});

describe('cancel and list input', () => {
  it('cancel takes contestId and userId only; list a userId, a limit 1..100 and a cursor', () => {
    expect(parseInput(cancelInputSchema, { contestId: 'atcoder:3', userId: 'u' }, 'cancelReminder')).toEqual({
      contestId: 'atcoder:3',
      userId: 'u',
    });
    expect(
      refusal(() => parseInput(cancelInputSchema, { contestId: 'codeforces:3', userId: 'u', minutesBefore: 3 }, 'cancelReminder')).message,
    ).toContain('unknown field "minutesBefore"');
    const list = (input: unknown) => parseInput(listInputSchema, input, 'listReminders');
    expect(list({ userId: 'u' })).toEqual({ userId: 'u' });
    expect(list({ userId: 'u', limit: 1 }).limit).toBe(1);
    expect(list({ userId: 'u', limit: 100 }).limit).toBe(100);
    for (const limit of [0, 101, 2.5, '10']) expect(refusal(() => list({ userId: 'u', limit })).fields).toEqual(['limit']);
    // The longest cursor (a qualified id of 85 characters and its tag, base64url) is 140 characters.
    expect(refusal(() => list({ userId: 'u', cursor: 'x'.repeat(141) })).fields).toEqual(['cursor']);
    expect(refusal(() => list({ userId: 'u', cursor: '' })).fields).toEqual(['cursor']);
  });
});

describe('the cursor', () => {
  it('round-trips a position for its user, and is opaque (base64url, no user id inside)', () => {
    const cursor = encodeCursor('alice', 'codeforces:2051');
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(cursor, 'base64url').toString()).not.toContain('alice');
    expect(decodeCursor('alice', cursor)).toBe('codeforces:2051');
    const longest = `codechef:${'w'.repeat(64)}`;
    expect(decodeCursor('alice', encodeCursor('alice', longest))).toBe(longest);
    expect(encodeCursor('alice', `${'c'.repeat(8)}:${'w'.repeat(64)}`).length).toBeLessThanOrEqual(140);
  });

  it('refuses a cursor of another user, an altered position, garbage and non-base64url text as invalid-input', () => {
    const cursor = encodeCursor('alice', 'codeforces:2051');
    const altered = Buffer.from(Buffer.from(cursor, 'base64url').toString().replace('2051', '2052')).toString('base64url');
    const otherPlatform = Buffer.from(Buffer.from(cursor, 'base64url').toString().replace('codeforces', 'atcoder')).toString('base64url');
    for (const bad of [altered, otherPlatform, 'garbage', 'AAAA', cursor.slice(0, -2), `${cursor}==`, '../../etc', '1:2051:abc']) {
      expect(refusal(() => decodeCursor('alice', bad)).fields).toEqual(['cursor']);
    }
    expect(refusal(() => decodeCursor('bob', cursor)).message).toBe('listReminders: cursor must be one that listReminders returned');
  });
});

describe('contest references and errors', () => {
  it('every refusal has a stable code under one base class, and its message is bounded', () => {
    const errors: [ReminderError, string][] = [
      [new InvalidInputError('x', ['userId']), 'invalid-input'],
      [new ContestNotFoundError('codeforces:7'), 'contest-not-found'],
      [new ContestStartedError('codeforces:7', 1_900_000_000), 'contest-started'],
      [new ReminderConflictError('the contest or the reminder changed meanwhile', 5), 'conflict'],
    ];
    for (const [error, code] of errors) {
      expect(error).toBeInstanceOf(ReminderError);
      expect(error).toBeInstanceOf(Error);
      expect(error.code).toBe(code);
    }
    expect(new ContestStartedError('codeforces:7', 1_900_000_000).message).toBe(
      'contest codeforces:7 has already started (at 2030-03-17T17:46:40.000Z)',
    );
    expect(Buffer.byteLength(new InvalidInputError('é'.repeat(10_000), []).message)).toBeLessThanOrEqual(1024);
  });
});
