/** One base class for every failed reply: a kind, a bounded message, and a subclass per platform. */
import { describe, expect, it } from 'vitest';
import { MAX_TEXT_BYTES, utf8Bytes } from '@contest-sync/scheduled-singleton';
import { AtCoderError, CodeChefError, isSourceError, LeetCodeError, SourceError } from '../../../lambda/sources/errors.js';

describe('SourceError', () => {
  it('bounds its message to 1 KB, whatever the platform sent', () => {
    const error = new SourceError('atcoder', 'markup', `AtCoder page: ${'あ'.repeat(5_000)}`, { attempts: 1, retryable: false });
    expect(utf8Bytes(error.message)).toBeLessThanOrEqual(MAX_TEXT_BYTES);
    expect(error.message).toMatch(/cut from/);
  });

  it('keeps kind, attempts, retryable and cause', () => {
    const cause = new Error('socket hang up');
    const error = new SourceError('leetcode', 'network', 'network error', { attempts: 3, retryable: true, cause });
    expect(error).toMatchObject({ platform: 'leetcode', kind: 'network', attempts: 3, retryable: true, name: 'SourceError' });
    expect(error.cause).toBe(cause);
  });

  it('has one subclass per platform, each a SourceError with its platform and name', () => {
    const made = [AtCoderError, CodeChefError, LeetCodeError].map(
      (Class) => new Class('empty', 'empty list', { attempts: 1, retryable: false }),
    );
    expect(made.map((e) => [e.platform, e.name])).toEqual([
      ['atcoder', 'AtCoderError'],
      ['codechef', 'CodeChefError'],
      ['leetcode', 'LeetCodeError'],
    ]);
    expect(made.every((e) => e instanceof SourceError && isSourceError(e) && e instanceof Error)).toBe(true);
    expect(isSourceError(new Error('x'))).toBe(false);
  });

  it('lets a platform narrow its kinds in a subclass (as the Codeforces errors can)', () => {
    class NarrowError extends SourceError<'http' | 'empty'> {
      override readonly name = 'NarrowError';
      constructor(kind: 'http' | 'empty') {
        super('codeforces', kind, 'narrow', { attempts: 1, retryable: false });
      }
    }
    const error = new NarrowError('http');
    expect(isSourceError(error)).toBe(true);
    expect(error.kind).toBe('http');
  });
});
