/**
 * Times as platforms print them, read only with their offset: `2021-04-24 21:00:00+0900` (AtCoder),
 * `2024-05-15T20:00:00+05:30` (CodeChef), `…Z`. A time without an offset is refused, never guessed
 * (a server's zone, or ours, is no evidence). Pure.
 */

const ZONED_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?\s?(Z|[+-]\d{2}:?\d{2})$/;

/** Minutes east of UTC of `Z`, `+0900`, `+05:30`, `-0330`; undefined past ±18:00 or minutes ≥ 60. */
function offsetMinutes(text: string): number | undefined {
  if (text === 'Z') return 0;
  const sign = text.startsWith('-') ? -1 : 1;
  const digits = text.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2));
  if (minutes >= 60 || hours * 60 + minutes > 18 * 60) return undefined;
  return sign * (hours * 60 + minutes);
}

/**
 * Epoch seconds of a time printed with its offset, or undefined: no offset, not a calendar time
 * (2021-02-30, 24:00), or an offset no zone has.
 */
export function parseZonedTime(text: string): number | undefined {
  const match = ZONED_TIME.exec(text.trim());
  if (match === null) return undefined;
  const [, y, mo, d, h, mi, s = '00', zone = ''] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  const offset = offsetMinutes(zone);
  if (offset === undefined || hour > 23 || minute > 59 || second > 59) return undefined;
  const local = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(local);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return undefined;
  return local / 1000 - offset * 60;
}
