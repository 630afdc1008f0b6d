/**
 * The shared HTTP layer's pure rules (docs/sources.md, "The HTTP layer"): how long to wait between
 * attempts, which replies and request errors are worth another attempt, what a bot challenge looks
 * like, and when a reply was made according to its headers. No I/O: tested without HTTP.
 *
 * Retried: network errors, timeouts, HTTP 5xx, HTTP 403 or a challenge page (or an HTML page where
 * JSON is due), HTTP 429.
 * Not retried: other 4xx and 3xx (a redirect is not followed), bodies above the cap, abort, and what
 * a source finds wrong with a complete reply unless it says otherwise (a platform's own rate-limit
 * answer is retried: `retryAfter` keeps its Retry-After).
 */
import { bound } from '@contest-sync/scheduled-singleton';
import type { SourceErrorKind } from '../errors.js';

/** Names the product in every request (a platform that refuses it tells us, instead of a silent block). */
export const USER_AGENT = 'contest-sync/0.1 (+programming contest calendar sync; undici)';
/** An attempt is only started with at least this much time left before the deadline. */
export const MIN_ATTEMPT_MS = 250;
export const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_CAP_MS = 16_000;
/** How much of any quoted reply text (a body's start, a platform's message) goes into an error. */
export const MAX_QUOTED_BYTES = 512;

/** What went wrong with one attempt; the retry loop turns it into the platform's SourceError. */
export interface Problem {
  kind: SourceErrorKind;
  message: string;
  retryable: boolean;
  cause?: unknown;
  /** From a Retry-After header: the next attempt waits at least this long. */
  retryAfterMs?: number;
}

/** A Problem thrown out of one attempt (request, body read, decompression) to the retry loop. */
export class AttemptFailure extends Error {
  override readonly name = 'AttemptFailure';
  constructor(readonly problem: Problem) {
    super(problem.message, problem.cause === undefined ? undefined : { cause: problem.cause });
  }
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; problem: Problem };

/** One complete HTTP reply, its body already decompressed and within the cap. */
export interface RawReply {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export const failed = (kind: SourceErrorKind, message: string, retryable = false): Outcome<never> => ({
  ok: false,
  problem: { kind, message, retryable },
});

/** Full-jitter exponential backoff: uniform in [0, min(cap, base·2^(attempt−1))). */
export function backoffDelay(attempt: number, random: () => number, baseMs = BACKOFF_BASE_MS, capMs = BACKOFF_CAP_MS): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * How long to wait before the next attempt, after `attempts` attempts so far: the jittered backoff,
 * but never less than what keeps attempt starts `minSpacingMs` apart, nor less than a Retry-After.
 */
export function nextWaitMs(input: {
  attempts: number;
  sinceLastStartMs: number;
  minSpacingMs: number;
  random: () => number;
  retryAfterMs?: number;
}): number {
  const spacing = Math.max(0, input.minSpacingMs - input.sinceLastStartMs);
  return Math.max(backoffDelay(input.attempts, input.random), spacing, input.retryAfterMs ?? 0);
}

/** First `n` bytes of a body for error messages, whitespace collapsed. */
export function snippet(body: string, n = 80): string {
  return Buffer.from(body.slice(0, n)).subarray(0, n).toString('utf8').replace(/\s+/g, ' ').trim();
}

/** A header's value (a repeated header joined with `, `). */
export function header(headers: RawReply['headers'], name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Retry-After as delay-seconds or an HTTP date (relative to `nowMs`). */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * A bot challenge or block page instead of the reply: Cloudflare marks its challenges with
 * `cf-mitigated: challenge` (developers.cloudflare.com, "Detect a Challenge Page response") and
 * titles them "Just a moment..." or "Attention Required!"; `_cf_chl_opt` is the challenge's script.
 * (The `/cdn-cgi/challenge-platform/` script Cloudflare injects into ordinary pages is no sign.)
 */
export function isChallenge(reply: RawReply): boolean {
  if (/\bchallenge\b/i.test(header(reply.headers, 'cf-mitigated') ?? '')) return true;
  const head = reply.body.slice(0, 65_536);
  return /<title>\s*(just a moment|attention required|checking your browser)/i.test(head) || /\b_cf_chl_opt\b/.test(head);
}

/** `{ retryAfterMs }` from the reply's Retry-After, read against `nowMs` (the injected clock), or `{}`. */
export function retryAfter(reply: RawReply, nowMs: number): { retryAfterMs?: number } {
  const retryAfterMs = parseRetryAfter(header(reply.headers, 'retry-after'), nowMs);
  return retryAfterMs === undefined ? {} : { retryAfterMs };
}

const quoted = (reply: RawReply): string => `first 80 bytes: ${snippet(reply.body)}`;

/** 429 (rate-limited) and 5xx (http), both retried after any Retry-After; undefined for any other status. */
function busyProblem(reply: RawReply, label: string, nowMs: number): Problem | undefined {
  const { statusCode } = reply;
  if (statusCode === 429) {
    return {
      kind: 'rate-limited',
      message: `${label} rate limit: HTTP 429 (${quoted(reply)})`,
      retryable: true,
      ...retryAfter(reply, nowMs),
    };
  }
  if (statusCode >= 500) {
    return { kind: 'http', message: `HTTP ${statusCode} from ${label} (${quoted(reply)})`, retryable: true, ...retryAfter(reply, nowMs) };
  }
  return undefined;
}

/** A status the source did not expect, not retried; `note` says what else the reply said. */
export function unexpectedStatus(reply: RawReply, label: string, note = ''): Problem {
  return { kind: 'http', message: `HTTP ${reply.statusCode} from ${label}${note} (${quoted(reply)})`, retryable: false };
}

/**
 * The HTTP-level verdict on a complete reply before the source reads its body: undefined for a 2xx
 * that is no challenge. `label` names the platform in messages ('AtCoder').
 */
export function statusProblem(reply: RawReply, label: string, nowMs: number): Problem | undefined {
  const { statusCode } = reply;
  const challenge = isChallenge(reply);
  if (statusCode === 403 || challenge) {
    const what = challenge ? 'a challenge page' : 'a refusal';
    return { kind: 'challenge', message: `${label} replied with ${what} (HTTP ${statusCode}; ${quoted(reply)})`, retryable: true };
  }
  const busy = busyProblem(reply, label, nowMs);
  if (busy !== undefined) return busy;
  if (statusCode < 200 || statusCode >= 300) return unexpectedStatus(reply, label);
  return undefined;
}

/** A Content-Type of HTML, or a body that opens with `<`: no JSON API's own answer. */
function looksHtml(reply: RawReply): boolean {
  return /html/i.test(header(reply.headers, 'content-type') ?? '') || /^\s*</.test(reply.body);
}

function htmlInsteadOfJson(reply: RawReply, label: string): Outcome<never> {
  const message = `${label} replied with an HTML page (HTTP ${reply.statusCode}, likely a Cloudflare challenge; ${quoted(reply)})`;
  return failed('challenge', message, true);
}

function parseJson(reply: RawReply, label: string): Outcome<unknown> {
  try {
    return { ok: true, value: JSON.parse(reply.body) as unknown };
  } catch (error) {
    const reason = bound(error instanceof Error ? error.message : String(error), 256);
    return failed('not-json', `${label} reply is not JSON: ${reason} (${quoted(reply)})`);
  }
}

/**
 * The JSON of a 2xx reply that should be JSON. An HTML page is taken for a challenge (retried):
 * a JSON API answers an HTML page only when something stands in front.
 */
export function jsonBody(reply: RawReply, label: string): Outcome<unknown> {
  if (reply.body.trim() === '') return failed('empty', `${label} replied with an empty body (HTTP ${reply.statusCode})`);
  if (looksHtml(reply)) return htmlInsteadOfJson(reply, label);
  return parseJson(reply, label);
}

/**
 * The JSON of a reply from an API that answers its own failures as JSON whatever the HTTP status
 * (a failure envelope with a 400): the body of a 4xx is read too, and the source calls
 * `unexpectedStatus` when that body says nothing it knows. Before the body: a 403, a challenge or
 * an HTML page at any status is a challenge (retried), a 429 or a 5xx is retried after any
 * Retry-After. A body that is not JSON is `not-json` from a 2xx, the unexpected status otherwise.
 */
export function jsonApiBody(reply: RawReply, label: string, nowMs: number): Outcome<unknown> {
  if (looksHtml(reply)) return htmlInsteadOfJson(reply, label);
  if (reply.statusCode === 403 || isChallenge(reply)) {
    const message = `${label} replied with a non-API reply (HTTP ${reply.statusCode}, likely a Cloudflare challenge; ${quoted(reply)})`;
    return failed('challenge', message, true);
  }
  const busy = busyProblem(reply, label, nowMs);
  if (busy !== undefined) return { ok: false, problem: busy };
  const json = parseJson(reply, label);
  const success = reply.statusCode >= 200 && reply.statusCode < 300;
  return json.ok || success ? json : { ok: false, problem: unexpectedStatus(reply, label) };
}

/** Classify an error thrown by the HTTP request or the body read. */
export function classifyRequestError(error: unknown, label: string, timedOutAfterMs?: number): Problem {
  const code = (error as { code?: unknown } | null)?.code;
  const codeText = typeof code === 'string' ? bound(code, 64) : undefined;
  const message = bound(error instanceof Error ? error.message : String(error), MAX_QUOTED_BYTES);
  const timeoutCodes = ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT'];
  if (timedOutAfterMs !== undefined || (codeText !== undefined && timeoutCodes.includes(codeText))) {
    const after = timedOutAfterMs === undefined ? '' : ` after ${timedOutAfterMs} ms`;
    return {
      kind: 'timeout',
      message: `${label} request timed out${after}${codeText === undefined ? '' : ` (${codeText})`}`,
      retryable: true,
      cause: error,
    };
  }
  const detail = codeText !== undefined && !message.includes(codeText) ? `${message} (${codeText})` : message;
  return { kind: 'network', message: `network error calling ${label}: ${detail}`, retryable: true, cause: error };
}

const DATE_BOUNDS = { min: Date.UTC(2000, 0, 1) / 1000, max: Date.UTC(2100, 0, 1) / 1000 };

/**
 * When the reply was made, from its headers, in epoch seconds: `Date` minus `Age` (RFC 9110 §6.6.1,
 * RFC 9111 §5.1), for a source whose reply cannot date itself. Never later than when the origin made
 * it: a cache that forwards the origin's `Date` makes it earlier by the `Age` (a reply that is older
 * or served again looks stale, never fresh), a cache that sets its own `Date` makes it exact.
 * Undefined without a valid `Date`, or with an `Age` that is not one number of seconds.
 */
export function replyMadeAt(headers: RawReply['headers']): number | undefined {
  const date = header(headers, 'date');
  if (date === undefined) return undefined;
  const ms = Date.parse(date);
  if (Number.isNaN(ms)) return undefined;
  const age = header(headers, 'age')?.trim();
  if (age !== undefined && !/^\d{1,10}$/.test(age)) return undefined;
  const madeAt = Math.floor(ms / 1000) - Number(age ?? 0);
  return madeAt >= DATE_BOUNDS.min && madeAt <= DATE_BOUNDS.max ? madeAt : undefined;
}
