/**
 * The interval ledger: the scheduled intervals that succeeded, kept on the lease item so that the
 * one conditional write that acquires the lease also refuses an interval already done (the package
 * README, "The lease item"). Pure: no I/O.
 *
 * **Retention.** An interval is remembered as long as a duplicate or a retry of its event can still
 * arrive: EventBridge retries the delivery to Lambda for at most the target's maximum event age,
 * Lambda keeps the event (its retries and duplicates included) at most the function's maximum event
 * age, and the event's `time` falls up to one period after the interval's start. ScheduledSingletonJob
 * sets the same `maxEventAge` on both, so the ledger keeps `2 × maxEventAge + period + 5 min` (clock
 * skew), at most 7 days: 5 h 05 min for an hourly job with the default 2 h, 4 h 06 min for a
 * one-minute one. An older interval (an operator's console run of it) is not deduplicated.
 *
 * **Two forms on the item.** `done` (String): two characters per interval, `doneAtMs` the time it
 * was written — the compact form, used when the retention is at most 400 minutes (every job at the
 * default event age and a period up to two hours): 246 intervals of a one-minute job fit in 492 bytes,
 * so the lease item stays under 1 KB (one write unit). `ledger` (Number set of epoch minutes): the
 * exact form, for a longer retention, and as the package's first release wrote it. Acquiring tests
 * both forms; a write that marks an interval done rewrites the ledger in the job's form and removes
 * the other, carrying over what it held (an item written by an earlier release is read correctly and
 * converted by the first interval done after the upgrade).
 *
 * **Tokens.** An interval's token names its epoch minute modulo 936 (15.6 hours): one capital letter
 * (A–Z) and one digit or small letter (0–9, a–z). Only a capital starts a token, so `contains(done,
 * :token)` — DynamoDB's substring test on a String — can only match a whole token. A token repeats
 * only after 936 minutes; a `done` holds at most 400 minutes of them (plus the skew), one written more
 * than 420 minutes ago (`doneAtMs`) is disregarded by the condition (every interval in it is past its
 * retention), and only an interval at most 420 minutes old is tested against it: within that window
 * a token that matches names that very interval.
 */
import { EventValidationError } from './errors.js';

const MINUTE_MS = 60_000;

/** How far ahead of a run's clock an interval can be (a Scheduled Event's `time`, clock skew). */
export const LEDGER_SKEW_MS = 5 * MINUTE_MS;
/** The construct's default maximum event age, on the rule's target and on the function (2 hours). */
export const DEFAULT_MAX_EVENT_AGE_MS = 2 * 3600 * 1000;
export const MAX_LEDGER_RETENTION_MS = 7 * 24 * 3600 * 1000;

/** The longest retention the compact form (`done`) keeps; a longer one keeps the number set. */
export const TOKEN_RETENTION_MAX_MS = 400 * MINUTE_MS;
/** A `done` written longer ago than this is disregarded: every interval in it is past its retention. */
export const TOKEN_STALE_AFTER_MS = 420 * MINUTE_MS;

const MARKS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
/** Minutes after which a token repeats: 936 (15.6 hours), more than twice the stale window and the skews. */
export const TOKEN_MODULUS = MARKS.length * DIGITS.length;

/**
 * How long succeeded intervals are remembered for a schedule of `periodMinutes` whose events are
 * kept `maxEventAgeMs` by EventBridge's target and again by Lambda: until no duplicate or retry can
 * arrive (see above), at most 7 days.
 */
export function ledgerRetentionMs(periodMinutes: number, maxEventAgeMs: number = DEFAULT_MAX_EVENT_AGE_MS): number {
  return Math.min(MAX_LEDGER_RETENTION_MS, 2 * maxEventAgeMs + periodMinutes * MINUTE_MS + LEDGER_SKEW_MS);
}

/** The ledger slot of an interval (an ISO time on a period boundary): its epoch minute. */
export function slotOf(interval: string): number {
  const at = Date.parse(interval);
  if (!Number.isFinite(at)) throw new EventValidationError(`not an interval: ${interval}`);
  return Math.floor(at / MINUTE_MS);
}

/** Whether `interval` is inside the ledger's window at `nowMs`: not older than the retention, not past the skew. */
export function withinRetention(interval: string, nowMs: number, retentionMs: number): boolean {
  const slot = slotOf(interval);
  return slot >= Math.floor((nowMs - retentionMs) / MINUTE_MS) && slot <= Math.floor((nowMs + LEDGER_SKEW_MS) / MINUTE_MS);
}

/** The ledger after `interval` succeeded: the slots inside the window, the interval's among them if it is. */
export function rememberDone(ledger: ReadonlySet<number>, interval: string, nowMs: number, retentionMs: number): Set<number> {
  const oldest = Math.floor((nowMs - retentionMs) / MINUTE_MS);
  const newest = Math.floor((nowMs + LEDGER_SKEW_MS) / MINUTE_MS);
  const keep = new Set<number>();
  for (const slot of [...ledger, slotOf(interval)]) if (slot >= oldest && slot <= newest) keep.add(Number(slot));
  return keep;
}

/** Whether a job with this retention keeps the compact form (`done`), or the number set. */
export function usesTokens(retentionMs: number): boolean {
  return retentionMs <= TOKEN_RETENTION_MAX_MS;
}

/** The two characters that name `slot` (an epoch minute) in `done`. */
export function slotToken(slot: number): string {
  const value = ((slot % TOKEN_MODULUS) + TOKEN_MODULUS) % TOKEN_MODULUS;
  return MARKS[Math.floor(value / DIGITS.length)]! + DIGITS[value % DIGITS.length]!;
}

/** `done` for these slots: their tokens, oldest first. */
export function encodeTokens(slots: Iterable<number>): string {
  return [...slots]
    .sort((a, b) => a - b)
    .map(slotToken)
    .join('');
}

/**
 * The slots `done` names, written at `doneAtMs`: each token is the latest minute it can name up to
 * the skew past `doneAtMs` (every one was within the retention then). Anything that is not a token is
 * skipped.
 */
export function decodeTokens(done: string, doneAtMs: number): Set<number> {
  const reference = Math.floor((doneAtMs + LEDGER_SKEW_MS) / MINUTE_MS);
  const slots = new Set<number>();
  for (const [, mark, digit] of done.matchAll(/([A-Z])([0-9a-z])/g)) {
    const value = MARKS.indexOf(mark!) * DIGITS.length + DIGITS.indexOf(digit!);
    slots.add(reference - ((((reference - value) % TOKEN_MODULUS) + TOKEN_MODULUS) % TOKEN_MODULUS));
  }
  return slots;
}

/** The two forms as the lease item holds them (attributes `ledger`, `done`, `doneAtMs`). */
export interface LedgerForms {
  ledger?: ReadonlySet<number>;
  done?: string;
  doneAtMs?: number;
}

/** Every slot the item's ledger names, in either form. */
export function ledgerSlots(item: LedgerForms | undefined): Set<number> {
  const slots = new Set([...(item?.ledger ?? [])].map(Number));
  if (item?.done !== undefined && item.done !== '' && item.doneAtMs !== undefined) {
    for (const slot of decodeTokens(item.done, Number(item.doneAtMs))) slots.add(slot);
  }
  return slots;
}

/** Whether `done` is tested for an interval: the token is unambiguous within the stale window. */
export function tokenTested(interval: string, nowMs: number): boolean {
  return withinRetention(interval, nowMs, TOKEN_STALE_AFTER_MS);
}

/**
 * What the acquire condition decides about the ledger, evaluated here on an item (the refused write
 * returns it): the interval is done in the number set, or in a `done` not older than the stale window.
 */
export function ledgerHolds(item: LedgerForms | undefined, interval: string, nowMs: number): boolean {
  const slot = slotOf(interval);
  if (item?.ledger !== undefined && [...item.ledger].some((s) => Number(s) === slot)) return true;
  if (item?.done === undefined || !tokenTested(interval, nowMs)) return false;
  if (item.doneAtMs !== undefined && Number(item.doneAtMs) < nowMs - TOKEN_STALE_AFTER_MS) return false;
  return containsToken(item.done, slotToken(slot));
}

/** DynamoDB's `contains` on a String: a substring test (a token starts only at a capital). */
function containsToken(done: string, token: string): boolean {
  return done.includes(token);
}
