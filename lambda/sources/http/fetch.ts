/**
 * One logical fetch of a platform's list (docs/sources.md, "The HTTP layer"): attempts with
 * exponential backoff and full jitter, attempt starts at least `minSpacingMs` apart, a Retry-After
 * honoured, everything inside `deadline` and the caller's AbortSignal (the request in flight, the
 * body read and the waits between attempts all end when it fires). Each attempt has its own timeout
 * besides the Agent's connect/headers/body timeouts; its body is read within the cap (body.ts).
 *
 * A source gives the request and `interpret`, which turns one complete reply into its value or a
 * Problem (policy.ts: `statusProblem`, `jsonBody`); the loop retries what is retryable and throws the
 * platform's SourceError for the rest, or for the last attempt before the deadline.
 */
import { setTimeout as sleepTimer } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from '../undici-lean.cjs';
import type { SourceError, SourceErrorClass } from '../errors.js';
import { decompress, readCapped } from './body.js';
import {
  AttemptFailure,
  classifyRequestError,
  header,
  MIN_ATTEMPT_MS,
  nextWaitMs,
  USER_AGENT,
  type Outcome,
  type Problem,
  type RawReply,
} from './policy.js';

export interface HttpRequest {
  url: string;
  /** @default 'GET' */
  method?: 'GET' | 'POST';
  /** Added to (and overriding) accept-encoding: gzip and the product's User-Agent. */
  headers?: Record<string, string>;
  body?: string;
}

/** What one source asks of the layer. */
export interface Exchange<T> {
  /** The platform in messages: 'AtCoder'. */
  label: string;
  request: HttpRequest;
  /** One complete reply (and when it arrived, epoch ms by `now`) to the value or a Problem; pure. */
  interpret(reply: RawReply, receivedAtMs: number): Outcome<T>;
}

export interface FetchOptions {
  /** Epoch ms (by `now`): no attempt starts and no wait goes past it. */
  deadline: number;
  /** Honoured end to end: in-flight request, body read, backoff sleeps. */
  signal?: AbortSignal;
  /** undici dispatcher (tests pass a MockAgent). @default a module-level Agent with timeouts */
  dispatcher?: Dispatcher;
  /** @default Date.now */
  now?: () => number;
  /** @default node:timers/promises setTimeout */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** @default Math.random */
  random?: () => number;
  /** Attempt starts are at least this far apart. @default 2000 */
  minSpacingMs?: number;
  /** Per-attempt headers+body timeout, capped by the time left to the deadline. @default 10000 */
  attemptTimeoutMs?: number;
  /** Compressed and decompressed body cap. @default DEFAULT_MAX_BODY_BYTES */
  maxBodyBytes?: number;
}

export interface Fetched<T> {
  value: T;
  attempts: number;
  /** Total wall time including retries (by `now`). */
  latencyMs: number;
}

/** 4 MiB: far above any platform's list today (each source sets its own cap from its reply's size). */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

let defaultAgent: Agent | undefined;

/** One Agent for every source in the process: connections are reused across runs of a warm function. */
export function defaultDispatcher(): Dispatcher {
  defaultAgent ??= new Agent({ connect: { timeout: 5_000 }, headersTimeout: 10_000, bodyTimeout: 10_000, keepAliveTimeout: 4_000 });
  return defaultAgent;
}

type Settled = Required<Omit<FetchOptions, 'signal'>> & { signal: AbortSignal | undefined };

function settle(options: FetchOptions): Settled {
  return {
    deadline: options.deadline,
    signal: options.signal,
    dispatcher: options.dispatcher ?? defaultDispatcher(),
    now: options.now ?? Date.now,
    sleep: options.sleep ?? ((ms, signal) => sleepTimer(ms, undefined, signal === undefined ? {} : { signal })),
    random: options.random ?? Math.random,
    minSpacingMs: options.minSpacingMs ?? 2_000,
    attemptTimeoutMs: options.attemptTimeoutMs ?? 10_000,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
  };
}

function abortedFailure(signal: AbortSignal, label: string): AttemptFailure {
  const reason: unknown = signal.reason;
  const why = reason instanceof Error ? reason.message : String(reason);
  return new AttemptFailure({ kind: 'aborted', message: `${label} fetch aborted: ${why}`, retryable: false, cause: reason });
}

class AttemptTimeout extends Error {
  override readonly name = 'AttemptTimeout';
}

/** One request with its own timeout; the decompressed reply, or an AttemptFailure. */
async function attemptOnce(exchange: Pick<Exchange<unknown>, 'label' | 'request'>, o: Settled, timeoutMs: number): Promise<RawReply> {
  const { label, request: req } = exchange;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new AttemptTimeout(`attempt timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  const onAbort = (): void => controller.abort(o.signal?.reason);
  o.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const response = await request(req.url, {
      dispatcher: o.dispatcher,
      method: req.method ?? 'GET',
      headers: { 'accept-encoding': 'gzip', 'user-agent': USER_AGENT, ...req.headers },
      ...(req.body === undefined ? {} : { body: req.body }),
      signal: controller.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const sent = await readCapped(response.body, Number(header(response.headers, 'content-length')), o.maxBodyBytes, label);
    const bytes = await decompress(sent, header(response.headers, 'content-encoding'), o.maxBodyBytes, label);
    return { statusCode: response.statusCode, headers: response.headers, body: bytes.toString('utf8') };
  } catch (error) {
    if (o.signal?.aborted === true) throw abortedFailure(o.signal, label);
    if (error instanceof AttemptFailure) throw error;
    throw new AttemptFailure(classifyRequestError(error, label, timedOut ? timeoutMs : undefined));
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
  }
}

/** Sleep that ends at once on abort even if an injected `sleep` ignores the signal. */
async function sleepUnlessAborted(o: Settled, ms: number, label: string): Promise<void> {
  const { signal } = o;
  if (signal === undefined) return o.sleep(ms);
  if (signal.aborted) throw abortedFailure(signal, label);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortedFailure(signal, label));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([o.sleep(ms, signal), aborted]);
    // A sleep that settles as the signal fires may win the race: the abort still ends the fetch.
    if (signal.aborted) throw abortedFailure(signal, label);
  } catch (error) {
    if (signal.aborted) throw abortedFailure(signal, label);
    throw error;
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}

interface Run {
  attempts: number;
  started: number;
  lastStart: number;
  last?: SourceError;
  lastRetryAfterMs?: number;
}

/** Waits as the last failure asks (backoff, spacing, Retry-After); the timeout of the next attempt. */
async function beforeAttempt(run: Run, o: Settled, label: string, toError: (problem: Problem) => SourceError): Promise<number> {
  if (o.signal?.aborted === true) throw toError(abortedFailure(o.signal, label).problem);
  const deadlineError = (): SourceError => {
    const waited = Math.round(o.deadline - run.started);
    const problem: Problem =
      run.last === undefined
        ? {
            kind: 'deadline',
            message: `${label}: deadline reached before the first attempt (${Math.max(0, waited)} ms left, an attempt needs ${MIN_ATTEMPT_MS} ms)`,
            retryable: false,
          }
        : {
            kind: 'deadline',
            message: `${label}: gave up after ${run.attempts} attempt${run.attempts === 1 ? '' : 's'} within ${waited} ms: last error ${run.last.message}`,
            retryable: false,
            cause: run.last,
          };
    return toError(problem);
  };
  if (run.last !== undefined) {
    const waitInput = { attempts: run.attempts, sinceLastStartMs: o.now() - run.lastStart, minSpacingMs: o.minSpacingMs, random: o.random };
    const wait = nextWaitMs(run.lastRetryAfterMs === undefined ? waitInput : { ...waitInput, retryAfterMs: run.lastRetryAfterMs });
    if (o.now() + wait + MIN_ATTEMPT_MS > o.deadline) throw deadlineError();
    try {
      await sleepUnlessAborted(o, wait, label);
    } catch (thrown) {
      throw thrown instanceof AttemptFailure ? toError(thrown.problem) : thrown;
    }
  }
  const left = o.deadline - o.now();
  if (left < MIN_ATTEMPT_MS) throw deadlineError();
  return Math.min(o.attemptTimeoutMs, left);
}

/** One attempt, read by the source: its value or the Problem it had. */
async function attemptOutcome<T>(exchange: Exchange<T>, o: Settled, timeoutMs: number): Promise<Outcome<T>> {
  try {
    const reply = await attemptOnce(exchange, o, timeoutMs);
    return exchange.interpret(reply, o.now());
  } catch (thrown) {
    if (thrown instanceof AttemptFailure) return { ok: false, problem: thrown.problem };
    throw thrown;
  }
}

/** The exchange, retried inside the deadline; throws `errorClass` (the platform's SourceError). */
export async function fetchWithRetries<T>(exchange: Exchange<T>, options: FetchOptions, errorClass: SourceErrorClass): Promise<Fetched<T>> {
  const o = settle(options);
  const run: Run = { attempts: 0, started: o.now(), lastStart: o.now() };
  const toError = (problem: Problem): SourceError =>
    new errorClass(problem.kind, problem.message, { attempts: run.attempts, retryable: problem.retryable, cause: problem.cause });
  for (;;) {
    const timeoutMs = await beforeAttempt(run, o, exchange.label, toError);
    run.attempts += 1;
    run.lastStart = o.now();
    const outcome = await attemptOutcome(exchange, o, timeoutMs);
    if (outcome.ok) return { value: outcome.value, attempts: run.attempts, latencyMs: o.now() - run.started };
    run.last = toError(outcome.problem);
    run.lastRetryAfterMs = outcome.problem.retryAfterMs;
    if (!outcome.problem.retryable) throw run.last;
  }
}
