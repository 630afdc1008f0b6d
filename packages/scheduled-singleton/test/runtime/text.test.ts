import { describe as group, expect, it } from 'vitest';
import { bound, describe, EventValidationError, MAX_TEXT_BYTES, parseInvocation, utf8Bytes } from '@contest-sync/scheduled-singleton';

/** True when `text` survives a UTF-8 round trip unchanged (no half character, no U+FFFD added). */
const wellFormed = (text: string) => Buffer.from(text, 'utf8').toString('utf8') === text && !text.includes('\uFFFD');

group('bound', () => {
  it('returns text that fits unchanged', () => {
    expect(bound('Codeforces said FAILED: contest.list: Internal error')).toBe('Codeforces said FAILED: contest.list: Internal error');
    expect(bound('x'.repeat(MAX_TEXT_BYTES))).toBe('x'.repeat(MAX_TEXT_BYTES));
    expect(bound('')).toBe('');
  });

  it('cuts a 7 MB text to at most 1 KB, keeping its beginning and saying how big it was', () => {
    const huge = `start ${'a'.repeat(7 * 1024 * 1024)}`;
    const cut = bound(huge);
    expect(utf8Bytes(cut)).toBeLessThanOrEqual(MAX_TEXT_BYTES);
    expect(cut.startsWith('start aaaa')).toBe(true);
    expect(cut).toMatch(new RegExp(`… \\[cut from ${utf8Bytes(huge)} bytes\\]$`));
  });

  it('never splits a character, whatever the width of the characters around the cut', () => {
    for (const unit of ['é', '€', '😀', 'a😀', 'ab€', '\uD83D']) {
      for (let max = 30; max <= 80; max += 1) {
        const cut = bound(unit.repeat(200), max);
        expect(utf8Bytes(cut), `${unit} at ${max}`).toBeLessThanOrEqual(max);
        if (unit !== '\uD83D') expect(wellFormed(cut), `${unit} at ${max}: ${cut}`).toBe(true);
        expect(cut).toContain('[cut from');
      }
    }
  });

  it('honours a bound smaller than its marker by returning the marker alone', () => {
    expect(bound('x'.repeat(100), 10)).toBe('… [cut from 100 bytes]');
  });
});

group('describe (every error text the function reports)', () => {
  it('is at most 1 KB for an error whose message quotes a huge reply, and for a huge non-error', () => {
    const error = new Error(`Codeforces said FAILED: ${'x'.repeat(7_000_000)}`);
    expect(utf8Bytes(describe(error))).toBeLessThanOrEqual(MAX_TEXT_BYTES);
    expect(describe(error)).toMatch(/^Error: Codeforces said FAILED: x+… \[cut from \d+ bytes\]$/);
    expect(utf8Bytes(describe('€'.repeat(500_000)))).toBeLessThanOrEqual(MAX_TEXT_BYTES);
    expect(describe(new TypeError('short'))).toBe('TypeError: short');
  });
});

group('EventValidationError', () => {
  it('is at most 1 KB when the event carries a huge unknown key or a huge time', () => {
    for (const event of [
      { ['k'.repeat(1_000_000)]: 1 },
      { source: 'aws.events', 'detail-type': 'Scheduled Event', time: 't'.repeat(1_000_000) },
    ]) {
      let thrown: unknown;
      try {
        parseInvocation(event, { periodMinutes: 60, nowMs: Date.now() });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(EventValidationError);
      expect(utf8Bytes((thrown as Error).message)).toBeLessThanOrEqual(MAX_TEXT_BYTES);
    }
  });
});
