/**
 * Text that comes from outside (Codeforces comments, bodies, names, SDK and zod error messages)
 * is bounded where it enters, so that no reply can make a result, a log line, a run record or a
 * thrown error approach the platform limits (Lambda result 6 MB, DynamoDB item 400 KB,
 * CloudWatch Logs event 256 KB). Pure, no dependencies.
 */

/** The bound of every error text the function reports (results, logs, run records, errors). */
export const MAX_TEXT_BYTES = 1024;

/**
 * `text` if it fits in `maxBytes` of UTF-8, otherwise its beginning, cut on a character boundary,
 * followed by a marker giving the original size, e.g. `Codeforces said… [cut from 7340032 bytes]`.
 * The result (marker included) never exceeds `maxBytes` (unless `maxBytes` is smaller than the
 * marker itself, then it is the marker alone).
 */
export function bound(text: string, maxBytes: number = MAX_TEXT_BYTES): string {
  // A UTF-16 code unit is at most 3 bytes of UTF-8: short strings need no measuring.
  if (text.length * 3 <= maxBytes) return text;
  const total = Buffer.byteLength(text, 'utf8');
  if (total <= maxBytes) return text;
  const marker = `… [cut from ${total} bytes]`;
  let keep = maxBytes - Buffer.byteLength(marker, 'utf8');
  if (keep <= 0) return marker;
  // Encode only a prefix long enough to hold `keep` bytes (each code unit gives at least one).
  const bytes = Buffer.from(text.slice(0, keep + 1), 'utf8');
  keep = Math.min(keep, bytes.length);
  // Back off to the first byte of the character that straddles the cut (continuation: 10xxxxxx).
  while (keep > 0 && keep < bytes.length && ((bytes[keep] ?? 0) & 0xc0) === 0x80) keep -= 1;
  return `${bytes.subarray(0, keep).toString('utf8')}${marker}`;
}

/** How many bytes `text` takes in UTF-8. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
