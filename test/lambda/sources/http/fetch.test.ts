/**
 * One logical fetch through undici's MockAgent: retries with backoff inside the deadline, what is
 * and is not retried, the body cap while streaming and while decompressing, abort at every stage,
 * the request the layer sends.
 */
import { gzipSync, brotliCompressSync } from 'node:zlib';
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SourceError, type SourceErrorKind, type SourceErrorOptions } from '../../../../lambda/sources/errors.js';
import {
  fetchWithRetries,
  jsonBody,
  statusProblem,
  USER_AGENT,
  type Exchange,
  type FetchOptions,
  type Outcome,
} from '../../../../lambda/sources/http/index.js';

const ORIGIN = 'https://platform.test';
const PATH = '/api/list';

class TestError extends SourceError {
  override readonly name = 'TestError';
  constructor(kind: SourceErrorKind, message: string, options: SourceErrorOptions) {
    super('test', kind, message, options);
  }
}

/** The exchange a JSON source makes: status first, then the JSON. */
const exchange: Exchange<unknown> = {
  label: 'Test',
  request: { url: `${ORIGIN}${PATH}`, headers: { accept: 'application/json' } },
  interpret: (reply, at): Outcome<unknown> => {
    const problem = statusProblem(reply, 'Test', at);
    return problem === undefined ? jsonBody(reply, 'Test') : { ok: false, problem };
  },
};

function fakeClock(start = 1_750_000_000_000) {
  let t = start;
  const sleeps: number[] = [];
  return { start, sleeps, now: () => t, sleep: async (ms: number) => void (sleeps.push(ms), (t += ms)) };
}

let agent: MockAgent;
let clock: ReturnType<typeof fakeClock>;
let starts: number[];

beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  clock = fakeClock();
  starts = [];
});
afterEach(async () => {
  await agent.close();
});

function on(statusCode: number, body: string | Buffer, headers: Record<string, string> = {}, method = 'GET') {
  return agent
    .get(ORIGIN)
    .intercept({ path: PATH, method })
    .reply(() => {
      starts.push(clock.now());
      return { statusCode, data: body, responseOptions: { headers } };
    });
}

const options = (overrides: Partial<FetchOptions> = {}): FetchOptions => ({
  deadline: clock.start + 25_000,
  dispatcher: agent,
  now: clock.now,
  sleep: clock.sleep,
  random: () => 0,
  ...overrides,
});

async function failure(promise: Promise<unknown>): Promise<TestError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(TestError);
  return error as TestError;
}

describe('fetchWithRetries: the request', () => {
  it('sends the product User-Agent, gzip, the source headers and its body', async () => {
    let seen: { headers: Record<string, string>; body: unknown } | undefined;
    agent
      .get(ORIGIN)
      .intercept({ path: PATH, method: 'POST' })
      .reply((request) => {
        seen = { headers: request.headers as Record<string, string>, body: request.body };
        return { statusCode: 200, data: '{"ok":true}' };
      });
    const post = {
      ...exchange,
      request: {
        ...exchange.request,
        method: 'POST' as const,
        body: '{"q":1}',
        headers: { 'user-agent': 'Mozilla/5.0 (compatible; contest-sync/0.1)' },
      },
    };
    const fetched = await fetchWithRetries(post, options(), TestError);
    expect(fetched).toEqual({ value: { ok: true }, attempts: 1, latencyMs: 0 });
    expect(seen?.headers).toMatchObject({ 'accept-encoding': 'gzip', 'user-agent': 'Mozilla/5.0 (compatible; contest-sync/0.1)' });
    expect(seen?.body).toBe('{"q":1}');
    expect(USER_AGENT).toMatch(/^contest-sync\//);
  });

  it('decompresses gzip and brotli', async () => {
    on(200, gzipSync('{"a":1}'), { 'content-encoding': 'gzip' });
    expect((await fetchWithRetries(exchange, options(), TestError)).value).toEqual({ a: 1 });
    on(200, brotliCompressSync('{"b":2}'), { 'content-encoding': 'br' });
    expect((await fetchWithRetries(exchange, options(), TestError)).value).toEqual({ b: 2 });
  });

  it('refuses an encoding it does not know, unretried', async () => {
    on(200, 'x', { 'content-encoding': 'zstd' });
    const error = await failure(fetchWithRetries(exchange, options(), TestError));
    expect(error).toMatchObject({ kind: 'http', attempts: 1 });
    expect(error.message).toMatch(/unsupported Content-Encoding "zstd"/);
  });
});

describe('fetchWithRetries: retries', () => {
  it('retries 5xx then succeeds, waiting the backoff and the spacing', async () => {
    on(503, 'busy');
    on(500, 'oops');
    on(200, '{"ok":1}');
    const fetched = await fetchWithRetries(exchange, options({ random: () => 0.5 }), TestError);
    expect(fetched.attempts).toBe(3);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(2_000);
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(2_000);
    expect(fetched.latencyMs).toBe(clock.now() - clock.start);
  });

  it('retries 403, 429 (after its Retry-After) and a challenge page', async () => {
    on(403, 'denied');
    on(429, 'slow', { 'retry-after': '7' });
    on(200, '<html><title>Just a moment...</title></html>', { 'content-type': 'text/html' });
    on(200, '{"ok":1}');
    const fetched = await fetchWithRetries(exchange, options(), TestError);
    expect(fetched.attempts).toBe(4);
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(7_000);
  });

  it('does not retry other 4xx, nor what the source refuses', async () => {
    on(404, 'gone');
    expect(await failure(fetchWithRetries(exchange, options(), TestError))).toMatchObject({ kind: 'http', attempts: 1, retryable: false });
    on(200, '{"trunc');
    expect(await failure(fetchWithRetries(exchange, options(), TestError))).toMatchObject({ kind: 'not-json', attempts: 1 });
  });

  it('retries network errors', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: PATH, method: 'GET' })
      .replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    on(200, '{"ok":1}');
    expect((await fetchWithRetries(exchange, options(), TestError)).attempts).toBe(2);
  });

  it('gives up at the deadline with the last error as cause', async () => {
    on(503, 'busy').persist();
    const error = await failure(fetchWithRetries(exchange, options({ deadline: clock.start + 7_000 }), TestError));
    expect(error.kind).toBe('deadline');
    expect(error.attempts).toBeGreaterThanOrEqual(3);
    expect(error.message).toMatch(/gave up after \d attempts .*last error HTTP 503 from Test/);
    expect((error.cause as TestError).kind).toBe('http');
    expect(clock.now()).toBeLessThanOrEqual(clock.start + 7_000);
  });

  it('makes no attempt when the deadline leaves no room for one', async () => {
    const error = await failure(fetchWithRetries(exchange, options({ deadline: clock.start + 100 }), TestError));
    expect(error).toMatchObject({ kind: 'deadline', attempts: 0 });
  });
});

describe('fetchWithRetries: the body cap', () => {
  const CAP = 64 * 1024;

  it('refuses a declared Content-Length above the cap, unretried', async () => {
    on(200, '{}', { 'content-length': String(CAP + 1) });
    const error = await failure(fetchWithRetries(exchange, options({ maxBodyBytes: CAP }), TestError));
    expect(error).toMatchObject({ kind: 'too-large', attempts: 1, retryable: false });
  });

  it('stops reading past the cap while it streams (a 10 MB body)', async () => {
    on(200, Buffer.alloc(10 * 1024 * 1024, 0x20));
    const error = await failure(fetchWithRetries(exchange, options({ maxBodyBytes: 8 * 1024 * 1024 }), TestError));
    expect(error).toMatchObject({ kind: 'too-large', attempts: 1 });
    expect(error.message).toMatch(/went past 8388608 bytes while streaming/);
  });

  it('refuses a small gzip that decompresses past the cap', async () => {
    const bomb = gzipSync(Buffer.alloc(CAP * 8, 0x20));
    expect(bomb.length).toBeLessThan(CAP);
    on(200, bomb, { 'content-encoding': 'gzip' });
    const error = await failure(fetchWithRetries(exchange, options({ maxBodyBytes: CAP }), TestError));
    expect(error).toMatchObject({ kind: 'too-large' });
    expect(error.message).toMatch(/gunzips to more than 65536 bytes/);
  });
});

describe('fetchWithRetries: abort', () => {
  it('throws aborted at once for a signal already aborted', async () => {
    const error = await failure(fetchWithRetries(exchange, options({ signal: AbortSignal.abort(new Error('lease lost')) }), TestError));
    expect(error).toMatchObject({ kind: 'aborted', attempts: 0 });
    expect(error.message).toMatch(/lease lost/);
  });

  it('ends the wait between attempts when the signal fires, even if the sleep ignores it', async () => {
    on(503, 'busy');
    const controller = new AbortController();
    const sleep = () => {
      setTimeout(() => controller.abort(new Error('lease lost')), 5);
      return new Promise<void>(() => undefined);
    };
    const error = await failure(fetchWithRetries(exchange, options({ signal: controller.signal, sleep }), TestError));
    expect(error).toMatchObject({ kind: 'aborted', attempts: 1 });
  });

  it('ends a request in flight', async () => {
    const controller = new AbortController();
    agent.get(ORIGIN).intercept({ path: PATH, method: 'GET' }).reply(200, '{}').delay(5_000);
    setTimeout(() => controller.abort(new Error('lease lost')), 20);
    const error = await failure(
      fetchWithRetries(exchange, options({ signal: controller.signal, now: Date.now, deadline: Date.now() + 20_000 }), TestError),
    );
    expect(error).toMatchObject({ kind: 'aborted', attempts: 1 });
  });

  it('times one attempt out and retries it', async () => {
    agent.get(ORIGIN).intercept({ path: PATH, method: 'GET' }).reply(200, '{}').delay(10_000);
    agent.get(ORIGIN).intercept({ path: PATH, method: 'GET' }).reply(200, '{"second":true}');
    const fetched = await fetchWithRetries(
      exchange,
      options({ attemptTimeoutMs: 1_000, minSpacingMs: 0, now: Date.now, deadline: Date.now() + 20_000, sleep: async () => undefined }),
      TestError,
    );
    expect(fetched).toMatchObject({ value: { second: true }, attempts: 2 });
  });
});
