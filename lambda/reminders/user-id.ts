/**
 * What a user id is, once for the whole product: the HTTP API's token `sub` at every route, the
 * reminder write path's `userId`, the calendar's door-table keys and rebuild messages
 * (docs/api.md, "Who the user is"). 1 to 256 bytes of well-formed UTF-8 — a lone surrogate has
 * no UTF-8 form, and what a store does with one is undocumented (DynamoDB Local turns it into
 * `?`, so two users would share one key) — and no control characters. Pure; no imports.
 */

export const MAX_USER_ID_BYTES = 256;

/** The rule in the words of a refusal. */
export const USER_ID_RULE = `1 to ${MAX_USER_ID_BYTES} bytes of well-formed UTF-8 without control characters`;

const CONTROL = /\p{Cc}/u;
const encoder = new TextEncoder();

/** Node 20 and the Lambda runtime (Node 22) have String.prototype.isWellFormed; TypeScript's ES2023 lib does not name it. */
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Whether `value` is a user id the product can store, address and compare. */
export function isUserId(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length > 0 &&
    isWellFormed(value) &&
    !CONTROL.test(value) &&
    encoder.encode(value).length <= MAX_USER_ID_BYTES
  );
}
