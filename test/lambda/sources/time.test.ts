/** Times are read only with their offset; a time without one is refused, never guessed. */
import { describe, expect, it } from 'vitest';
import { parseZonedTime } from '../../../lambda/sources/time.js';

describe('parseZonedTime', () => {
  it("reads AtCoder's and CodeChef's forms with their offsets", () => {
    expect(parseZonedTime('2021-04-24 21:00:00+0900')).toBe(Date.UTC(2021, 3, 24, 12) / 1000);
    expect(parseZonedTime('2024-05-15T20:00:00+05:30')).toBe(Date.UTC(2024, 4, 15, 14, 30) / 1000);
    expect(parseZonedTime('2024-05-15T20:00:00-03:30')).toBe(Date.UTC(2024, 4, 15, 23, 30) / 1000);
    expect(parseZonedTime('2024-05-15T20:00:00Z')).toBe(Date.UTC(2024, 4, 15, 20) / 1000);
    expect(parseZonedTime('2024-05-15T20:00:00.250+00:00')).toBe(Date.UTC(2024, 4, 15, 20) / 1000);
  });

  it('refuses a time without an offset', () => {
    expect(parseZonedTime('2021-04-24 21:00:00')).toBeUndefined();
    expect(parseZonedTime('2024-05-15T20:00:00')).toBeUndefined();
    expect(parseZonedTime('15 May 2024  20:00:00')).toBeUndefined();
  });

  it('refuses what is no calendar time or no offset a zone has', () => {
    expect(parseZonedTime('2021-02-30 21:00:00+0900')).toBeUndefined();
    expect(parseZonedTime('2021-04-24 24:00:00+0900')).toBeUndefined();
    expect(parseZonedTime('2021-04-24 21:60:00+0900')).toBeUndefined();
    expect(parseZonedTime('2021-04-24 21:00:00+1900')).toBeUndefined();
    expect(parseZonedTime('2021-04-24 21:00:00+0960')).toBeUndefined();
    expect(parseZonedTime('')).toBeUndefined();
  });
});
