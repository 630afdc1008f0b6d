/**
 * Codeforces `contest.list` over the shared HTTP layer (docs/sources.md, "The HTTP layer"): one GET,
 * retried, bounded and abortable there, read here.
 *
 * What is Codeforces' own: the API answers its failures as `{"status":"FAILED","comment":...}`,
 * with HTTP 400 as often as not, so a 4xx body is read too (`jsonApiBody`); a FAILED "Call limit
 * exceeded" is a rate limit (retried, after any Retry-After), any other FAILED comment is
 * `api-failed`; an OK envelope comes with HTTP 200 only. The rest of what is retried is the shared
 * layer's: network errors, timeouts, HTTP 5xx, HTTP 403 or any HTML page (a challenge), HTTP 429.
 * Not retried: other FAILED comments, other 4xx, non-JSON 200, a body above MAX_BODY_BYTES, a wrong
 * envelope, too many invalid contests, an empty list, abort.
 *
 * Nothing Codeforces sends reaches a message unbounded (`bound`): comments, body snippets, names
 * and parse errors are cut, and every CodeforcesError message is ≤ 1 KB.
 */
import { bound } from '@contest-sync/scheduled-singleton';
import {
  failed,
  fetchWithRetries,
  jsonApiBody,
  MAX_QUOTED_BYTES,
  retryAfter,
  snippet,
  unexpectedStatus,
  type Exchange,
  type FetchOptions,
  type Outcome,
  type Problem,
  type RawReply,
} from '../http/index.js';
import { CodeforcesError } from './errors.js';
import { contestSchema, describeIssue, envelopeSchema, inconsistency, isScheduled, type CodeforcesContest } from './schema.js';

export const LABEL = 'Codeforces';

export interface FetchContestsOptions extends FetchOptions {
  /** e.g. https://codeforces.com/api (a trailing slash is fine). */
  baseUrl: string;
  /** Default 0.1: more invalid contests than this share of the list fails the reply. */
  maxInvalidShare?: number;
}

export interface FetchContestsResult {
  /** Valid, scheduled contests. */
  contests: CodeforcesContest[];
  /** Entries skipped because they failed validation. */
  invalid: number;
  /** Valid entries without startTimeSeconds (skipped). */
  unscheduled: number;
  /**
   * Ids of every entry listed (valid, invalid or unscheduled) that carries an integer id:
   * a contest missing from `contests` but present here was skipped, not cancelled.
   */
  listedIds: number[];
  attempts: number;
  /** Total wall time including retries (by `now`). */
  latencyMs: number;
}

/**
 * Compressed and decompressed body limit: 16× the real contest.list (about 1 MiB), and small
 * enough that the reply, its string and its parse fit in the function's 256 MB. A larger body is
 * refused while it streams (or while it is gunzipped), before any parsing: `too-large`.
 */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
/**
 * Entries a list may have before it is refused unvalidated (the real list has about 2,000): a body
 * under the byte cap can still hold millions of tiny entries, whose validation would take seconds of
 * CPU and hundreds of MB in a 256 MB function.
 */
export const MAX_LIST_ENTRIES = 50_000;

export interface ParsedContests {
  contests: CodeforcesContest[];
  invalid: number;
  unscheduled: number;
  listedIds: number[];
}

export type ReplyOutcome = Outcome<ParsedContests>;

function isRateLimitComment(comment: string): boolean {
  return /call limit exceeded/i.test(comment);
}

export interface ParseOptions {
  /** Epoch seconds: entries inconsistent with this time (FINISHED before their start...) are invalid. */
  nowSeconds: number;
  /** The same moment in epoch ms (for Retry-After dates); default nowSeconds × 1000. */
  nowMs?: number;
  /** Default 0.1: more invalid contests than this share of the list fails the reply. */
  maxInvalidShare?: number;
}

/** Classify one complete HTTP reply; on success, validate the contests. */
export function classifyReply(reply: RawReply, options: ParseOptions): ReplyOutcome {
  const nowMs = options.nowMs ?? options.nowSeconds * 1000;
  const fail = (problem: Problem): ReplyOutcome => ({ ok: false, problem });
  const json = jsonApiBody(reply, LABEL, nowMs);
  if (!json.ok) return json;
  const envelope = envelopeSchema.safeParse(json.value);
  if (!envelope.success) {
    if (reply.statusCode !== 200) return fail(unexpectedStatus(reply, LABEL));
    return fail({
      kind: 'bad-shape',
      message: `Codeforces reply is not a contest.list envelope: ${describeIssue(envelope.error)} (first 80 bytes: ${snippet(reply.body)})`,
      retryable: false,
      cause: envelope.error,
    });
  }
  if (envelope.data.status === 'FAILED') {
    const comment = bound(envelope.data.comment, MAX_QUOTED_BYTES);
    return isRateLimitComment(comment)
      ? fail({
          kind: 'rate-limited',
          message: `Codeforces said FAILED: ${comment} (rate limited, HTTP ${reply.statusCode})`,
          retryable: true,
          ...retryAfter(reply, nowMs),
        })
      : fail({ kind: 'api-failed', message: `Codeforces said FAILED: ${comment}`, retryable: false });
  }
  if (reply.statusCode !== 200) return fail(unexpectedStatus(reply, LABEL, ' with status OK'));
  return parseContestList(envelope.data.result, options);
}

/**
 * Validate `result` of an OK reply entry by entry; skip and count the odd ones: entries that
 * fail the schema (absurd or unstorable fields too) and entries inconsistent at `nowSeconds`.
 * Every skipped entry with an id stays in `listedIds`, so it is never taken for cancelled.
 */
export function parseContestList(result: unknown, options: ParseOptions): ReplyOutcome {
  const { nowSeconds, maxInvalidShare = 0.1 } = options;
  const fail = failed;
  if (!Array.isArray(result)) {
    const got = result === null ? 'null' : typeof result;
    return fail('bad-shape', `Codeforces reply has status OK but result is ${got}, not an array`);
  }
  if (result.length === 0) return fail('empty', 'Codeforces returned an empty contest list');
  if (result.length > MAX_LIST_ENTRIES) {
    return fail('too-large', `Codeforces reply refused: its list has ${result.length} entries, above the ${MAX_LIST_ENTRIES}-entry cap`);
  }

  const contests: CodeforcesContest[] = [];
  const listedIds: number[] = [];
  let invalid = 0;
  let unscheduled = 0;
  let example: string | undefined;
  result.forEach((entry: unknown, index) => {
    const id = listedId(entry);
    if (id !== undefined) listedIds.push(id);
    const parsed = contestSchema.safeParse(entry);
    if (!parsed.success) {
      invalid += 1;
      example ??= `${describeEntry(entry, index)}: ${describeIssue(parsed.error)}`;
    } else if (isScheduled(parsed.data)) {
      const why = inconsistency(parsed.data, nowSeconds);
      if (why === undefined) {
        contests.push(parsed.data);
      } else {
        invalid += 1;
        example ??= `${describeEntry(entry, index)}: ${why}`;
      }
    } else {
      unscheduled += 1;
    }
  });

  if (invalid / result.length > maxInvalidShare) {
    return fail('invalid-contests', `${invalid} of ${result.length} contests failed validation (e.g. ${example})`);
  }
  if (contests.length === 0) {
    return fail('empty', `Codeforces returned no scheduled contests (${unscheduled} unscheduled, ${invalid} invalid of ${result.length})`);
  }
  return { ok: true, value: { contests, invalid, unscheduled, listedIds } };
}

/** The id of a listed entry, even an invalid one, when it is an integer (or an integer string). */
function listedId(entry: unknown): number | undefined {
  if (typeof entry !== 'object' || entry === null || !('id' in entry)) return undefined;
  const raw = entry.id;
  const id = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  return Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

function describeEntry(entry: unknown, index: number): string {
  if (typeof entry === 'object' && entry !== null && 'id' in entry) {
    const id = entry.id;
    if (typeof id === 'number' || typeof id === 'string') return `contest ${bound(String(id), 64)}`;
  }
  return `entry #${index}`;
}

/** The request and its reading, for the shared HTTP layer. */
export function codeforcesExchange(options: Pick<FetchContestsOptions, 'baseUrl' | 'maxInvalidShare'>): Exchange<ParsedContests> {
  const { maxInvalidShare = 0.1 } = options;
  return {
    label: LABEL,
    request: { url: `${options.baseUrl.replace(/\/+$/, '')}/contest.list?gym=false`, headers: { accept: 'application/json' } },
    interpret: (reply, at) => classifyReply(reply, { nowSeconds: Math.floor(at / 1000), nowMs: at, maxInvalidShare }),
  };
}

/** GET {baseUrl}/contest.list?gym=false, with retries inside `deadline`. Throws CodeforcesError. */
export async function fetchContests(options: FetchContestsOptions): Promise<FetchContestsResult> {
  const { baseUrl, maxInvalidShare, maxBodyBytes = MAX_BODY_BYTES, ...fetchOptions } = options;
  const exchange = codeforcesExchange(maxInvalidShare === undefined ? { baseUrl } : { baseUrl, maxInvalidShare });
  const fetched = await fetchWithRetries(exchange, { ...fetchOptions, maxBodyBytes }, CodeforcesError);
  return { ...fetched.value, attempts: fetched.attempts, latencyMs: fetched.latencyMs };
}
