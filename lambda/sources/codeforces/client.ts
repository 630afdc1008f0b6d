/**
 * Codeforces `contest.list` client: one logical fetch with retries, all inside a deadline.
 *
 * Pure pieces (reply classification, contest validation, backoff) are exported separately from
 * the I/O (`fetchContests`) so they can be unit-tested without HTTP.
 *
 * Retried (with exponential backoff + full jitter, attempt starts ≥ minSpacingMs apart):
 *   network errors, timeouts, HTTP 5xx, HTTP 403 / any HTML page (challenge),
 *   HTTP 429 and FAILED "Call limit exceeded" (rate-limited).
 * Not retried: other FAILED comments, other 4xx, non-JSON 200, a body above MAX_BODY_BYTES,
 *   wrong envelope, too many invalid contests, an empty list, abort.
 *
 * Nothing Codeforces sends reaches a message unbounded (`bound`, lambda/text.ts): comments,
 * body snippets, names and parse errors are cut, and every CodeforcesError message is ≤ 1 KB.
 */
import { setTimeout as sleepTimer } from 'node:timers/promises';
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import { Agent, request, type Dispatcher } from '../undici-lean.cjs';
import { bound } from '@contest-sync/scheduled-singleton';
import { CodeforcesError, type CodeforcesErrorKind } from './errors.js';
import { contestSchema, describeIssue, envelopeSchema, inconsistency, isScheduled, type CodeforcesContest } from './schema.js';

export interface FetchContestsOptions {
  /** e.g. https://codeforces.com/api (a trailing slash is fine). */
  baseUrl: string;
  /** Epoch ms (by `now`): no attempt starts and no wait goes past it. */
  deadline: number;
  /** Honoured end to end: in-flight request, body read, backoff sleeps. */
  signal?: AbortSignal;
  /** undici dispatcher (tests pass a MockAgent); default: a module-level Agent with timeouts. */
  dispatcher?: Dispatcher;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  /** Default 2000: Codeforces allows one call per 2 s; attempt starts are at least this far apart. */
  minSpacingMs?: number;
  /** Per-attempt headers+body timeout, default 10000 (capped by the time left to the deadline). */
  attemptTimeoutMs?: number;
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

export const USER_AGENT = 'contest-sync/0.1 (+codeforces contest mirror; undici)';
/** An attempt is only started with at least this much time left before the deadline. */
export const MIN_ATTEMPT_MS = 250;
export const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_CAP_MS = 16_000;
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
/** How much of a FAILED comment (or any quoted reply text) goes into an error message. */
export const MAX_QUOTED_BYTES = 512;

// ---------------------------------------------------------------------------------------------
// Pure helpers
// ---------------------------------------------------------------------------------------------

/** What went wrong with one attempt; the retry loop turns it into a CodeforcesError. */
export interface Problem {
  kind: CodeforcesErrorKind;
  message: string;
  retryable: boolean;
  cause?: unknown;
  /** From a Retry-After header: the next attempt waits at least this long. */
  retryAfterMs?: number;
}

export interface ParsedContests {
  contests: CodeforcesContest[];
  invalid: number;
  unscheduled: number;
  listedIds: number[];
}

export type ReplyOutcome = { ok: true; value: ParsedContests } | { ok: false; problem: Problem };

export interface RawReply {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** Already decompressed. */
  body: string;
}

/** Full-jitter exponential backoff: uniform in [0, min(cap, base·2^(attempt−1))). */
export function backoffDelay(
  attempt: number,
  random: () => number,
  baseMs: number = BACKOFF_BASE_MS,
  capMs: number = BACKOFF_CAP_MS,
): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * How long to wait before the next attempt, after `attempts` attempts so far: the jittered
 * backoff, but never less than what keeps attempt starts `minSpacingMs` apart, nor less than
 * the server's Retry-After.
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
  return Buffer.from(body).subarray(0, n).toString('utf8').replace(/\s+/g, ' ').trim();
}

function header(headers: RawReply['headers'], name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Retry-After as delay-seconds or an HTTP date (relative to `nowMs`). */
export function parseRetryAfter(value: string | undefined, nowMs: number = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

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
  const { statusCode, body } = reply;
  const first = snippet(body);
  const contentType = header(reply.headers, 'content-type') ?? '';
  const fail = (problem: Problem): ReplyOutcome => ({ ok: false, problem });

  const looksHtml = /html/i.test(contentType) || /^\s*</.test(body);
  if (statusCode === 403 || looksHtml) {
    return fail({
      kind: 'challenge',
      message: `Codeforces replied with ${looksHtml ? 'an HTML page' : 'a non-API reply'} (HTTP ${statusCode}, likely a Cloudflare challenge; first 80 bytes: ${first})`,
      retryable: true,
    });
  }
  // An HTTP-date Retry-After is read against the injected clock, like every other time here.
  const retryAfterMs = parseRetryAfter(header(reply.headers, 'retry-after'), options.nowMs ?? options.nowSeconds * 1000);
  const withRetryAfter = retryAfterMs === undefined ? {} : { retryAfterMs };
  if (statusCode === 429) {
    return fail({
      kind: 'rate-limited',
      message: `Codeforces rate limit: HTTP 429 (first 80 bytes: ${first})`,
      retryable: true,
      ...withRetryAfter,
    });
  }
  if (statusCode >= 500) {
    return fail({
      kind: 'http',
      message: `HTTP ${statusCode} from Codeforces (first 80 bytes: ${first})`,
      retryable: true,
      ...withRetryAfter,
    });
  }

  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    if (statusCode !== 200) {
      return fail({ kind: 'http', message: `HTTP ${statusCode} from Codeforces (first 80 bytes: ${first})`, retryable: false });
    }
    const reason = bound(error instanceof Error ? error.message : String(error), 256);
    return fail({
      kind: 'not-json',
      message: `Codeforces reply is not JSON: ${reason} (first 80 bytes: ${first})`,
      retryable: false,
      cause: error,
    });
  }

  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) {
    if (statusCode !== 200) {
      return fail({ kind: 'http', message: `HTTP ${statusCode} from Codeforces (first 80 bytes: ${first})`, retryable: false });
    }
    return fail({
      kind: 'bad-shape',
      message: `Codeforces reply is not a contest.list envelope: ${describeIssue(envelope.error)} (first 80 bytes: ${first})`,
      retryable: false,
      cause: envelope.error,
    });
  }
  if (envelope.data.status === 'FAILED') {
    const comment = bound(envelope.data.comment, MAX_QUOTED_BYTES);
    return isRateLimitComment(comment)
      ? fail({
          kind: 'rate-limited',
          message: `Codeforces said FAILED: ${comment} (rate limited, HTTP ${statusCode})`,
          retryable: true,
          ...withRetryAfter,
        })
      : fail({ kind: 'api-failed', message: `Codeforces said FAILED: ${comment}`, retryable: false });
  }
  if (statusCode !== 200) {
    return fail({
      kind: 'http',
      message: `HTTP ${statusCode} from Codeforces with status OK (first 80 bytes: ${first})`,
      retryable: false,
    });
  }
  return parseContestList(envelope.data.result, options);
}

/**
 * Validate `result` of an OK reply entry by entry; skip and count the odd ones: entries that
 * fail the schema (absurd or unstorable fields too) and entries inconsistent at `nowSeconds`.
 * Every skipped entry with an id stays in `listedIds`, so it is never taken for cancelled.
 */
export function parseContestList(result: unknown, options: ParseOptions): ReplyOutcome {
  const { nowSeconds, maxInvalidShare = 0.1 } = options;
  const fail = (kind: CodeforcesErrorKind, message: string): ReplyOutcome => ({ ok: false, problem: { kind, message, retryable: false } });
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

/** Classify an error thrown by the HTTP request or the body read. */
export function classifyRequestError(error: unknown, timedOutAfterMs?: number): Problem {
  const code = (error as { code?: unknown } | null)?.code;
  const message = bound(error instanceof Error ? error.message : String(error), MAX_QUOTED_BYTES);
  if (
    timedOutAfterMs !== undefined ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    const after = timedOutAfterMs === undefined ? '' : ` after ${timedOutAfterMs} ms`;
    return {
      kind: 'timeout',
      message: `Codeforces request timed out${after}${code === undefined ? '' : ` (${typeof code === 'string' ? code : JSON.stringify(code)})`}`,
      retryable: true,
      cause: error,
    };
  }
  const detail = typeof code === 'string' && !message.includes(code) ? `${message} (${bound(code, 64)})` : message;
  return { kind: 'network', message: `network error calling Codeforces: ${detail}`, retryable: true, cause: error };
}

// ---------------------------------------------------------------------------------------------
// I/O
// ---------------------------------------------------------------------------------------------

let defaultAgent: Agent | undefined;

function defaultDispatcher(): Dispatcher {
  defaultAgent ??= new Agent({ connect: { timeout: 5_000 }, headersTimeout: 10_000, bodyTimeout: 10_000, keepAliveTimeout: 4_000 });
  return defaultAgent;
}

const gunzipAsync = promisify(gunzip);

class AttemptTimeout extends Error {
  override readonly name = 'AttemptTimeout';
}

/** One GET with its own timeout; resolves with the decompressed reply or throws a Problem. */
async function attemptOnce(url: string, dispatcher: Dispatcher, timeoutMs: number, signal: AbortSignal | undefined): Promise<RawReply> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new AttemptTimeout(`attempt timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  const onAbort = (): void => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const response = await request(url, {
      dispatcher,
      method: 'GET',
      headers: { accept: 'application/json', 'accept-encoding': 'gzip', 'user-agent': USER_AGENT },
      signal: controller.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const declared = Number(header(response.headers, 'content-length'));
    if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
      response.body.destroy();
      throw tooLarge(`declares ${declared} bytes (Content-Length)`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) {
        response.body.destroy();
        throw tooLarge(`went past ${MAX_BODY_BYTES} bytes while streaming`);
      }
      chunks.push(chunk as Buffer);
    }
    let bytes = Buffer.concat(chunks);
    const encoding = header(response.headers, 'content-encoding')?.toLowerCase() ?? '';
    if (/\b(x-)?gzip\b/.test(encoding)) {
      try {
        bytes = await gunzipAsync(bytes, { maxOutputLength: MAX_BODY_BYTES });
      } catch (error) {
        if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
          throw tooLarge(`gunzips to more than ${MAX_BODY_BYTES} bytes (${bytes.length} bytes compressed)`);
        }
        throw new Error(`corrupt gzip body: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
    }
    return { statusCode: response.statusCode, headers: response.headers, body: bytes.toString('utf8') };
  } catch (error) {
    if (signal?.aborted) throw abortedProblem(signal);
    if (isProblem(error)) throw error;
    throw classifyRequestError(error, timedOut ? timeoutMs : undefined);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** A body above MAX_BODY_BYTES: never parsed, never retried (the next reply would be the same). */
function tooLarge(detail: string): Problem {
  return {
    kind: 'too-large',
    message: `Codeforces reply refused: its body ${detail}, above the ${MAX_BODY_BYTES}-byte cap`,
    retryable: false,
  };
}

function abortedProblem(signal: AbortSignal): Problem {
  const reason: unknown = signal.reason;
  const why = reason instanceof Error ? reason.message : String(reason);
  return { kind: 'aborted', message: `Codeforces fetch aborted: ${why}`, retryable: false, cause: reason };
}

function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && 'kind' in value && 'retryable' in value && !(value instanceof Error);
}

/** Sleep that ends at once on abort even if an injected `sleep` ignores the signal. */
async function sleepUnlessAborted(
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (signal === undefined) return sleep(ms);
  if (signal.aborted) throw abortedProblem(signal);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortedProblem(signal));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([sleep(ms, signal), aborted]);
  } catch (error) {
    if (signal.aborted) throw abortedProblem(signal);
    throw error;
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}

const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> => sleepTimer(ms, undefined, signal === undefined ? {} : { signal });

/** GET {baseUrl}/contest.list?gym=false, with retries inside `deadline`. Throws CodeforcesError. */
export async function fetchContests(options: FetchContestsOptions): Promise<FetchContestsResult> {
  const {
    signal,
    deadline,
    dispatcher = defaultDispatcher(),
    now = Date.now,
    sleep = defaultSleep,
    random = Math.random,
    minSpacingMs = 2_000,
    attemptTimeoutMs = 10_000,
    maxInvalidShare = 0.1,
  } = options;
  const url = `${options.baseUrl.replace(/\/+$/, '')}/contest.list?gym=false`;
  const started = now();
  let attempts = 0;
  let lastStart = started;
  let last: CodeforcesError | undefined;
  let lastRetryAfterMs: number | undefined;

  const error = (problem: Problem): CodeforcesError =>
    new CodeforcesError(problem.kind, problem.message, { attempts, retryable: problem.retryable, cause: problem.cause });
  const deadlineError = (): CodeforcesError => {
    const message =
      last === undefined
        ? `Codeforces: deadline reached before the first attempt (${Math.max(0, deadline - started)} ms left, an attempt needs ${MIN_ATTEMPT_MS} ms)`
        : `Codeforces: gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} within ${Math.round(deadline - started)} ms: last error ${last.message}`;
    return new CodeforcesError('deadline', message, { attempts, retryable: false, cause: last });
  };

  for (;;) {
    if (signal?.aborted) throw error(abortedProblem(signal));
    if (last !== undefined) {
      const wait = nextWaitMs({
        attempts,
        sinceLastStartMs: now() - lastStart,
        minSpacingMs,
        random,
        ...(lastRetryAfterMs === undefined ? {} : { retryAfterMs: lastRetryAfterMs }),
      });
      if (now() + wait + MIN_ATTEMPT_MS > deadline) throw deadlineError();
      try {
        await sleepUnlessAborted(sleep, wait, signal);
      } catch (thrown) {
        throw isProblem(thrown) ? error(thrown) : thrown;
      }
    }
    const left = deadline - now();
    if (left < MIN_ATTEMPT_MS) throw deadlineError();

    attempts += 1;
    lastStart = now();
    let outcome: ReplyOutcome;
    try {
      const reply = await attemptOnce(url, dispatcher, Math.min(attemptTimeoutMs, left), signal);
      const at = now();
      outcome = classifyReply(reply, { nowSeconds: Math.floor(at / 1000), nowMs: at, maxInvalidShare });
    } catch (thrown) {
      if (!isProblem(thrown)) throw thrown;
      outcome = { ok: false, problem: thrown };
    }
    if (outcome.ok) {
      return { ...outcome.value, attempts, latencyMs: now() - started };
    }
    last = error(outcome.problem);
    lastRetryAfterMs = outcome.problem.retryAfterMs;
    if (!outcome.problem.retryable) throw last;
  }
}
