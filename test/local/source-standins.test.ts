/**
 * The local stand-ins of AtCoder, CodeChef and LeetCode over real HTTP on loopback: each serves its
 * fixture shifted to the anchor and each source believes it; each can be told to misbehave (a
 * status, a challenge page, a truncated or a huge body, a slow reply, a changed page) and the
 * sources answer as they must; the stand-in closes promptly and runs as its own process.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { gunzipSync } from 'node:zlib';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { atcoderSource } from '../../lambda/sources/atcoder/index.js';
import { CODECHEF_SETTINGS, codechefSource } from '../../lambda/sources/codechef/index.js';
import { isSourceError, type SourceError } from '../../lambda/sources/errors.js';
import { leetcodeSource } from '../../lambda/sources/leetcode/index.js';
import type { Source } from '../../lambda/sources/source.js';
import { misbehave, startSourceStandins, type SourceStandin, type StandinPlatform } from '../../local/source-standins.js';

let dispatcher: Agent;
let standin: SourceStandin | undefined;
/** An hour ago, as `npm start -- --persist` anchors its fixtures at its first run. */
const ANCHOR = Date.now() - 3_600_000;

beforeAll(() => {
  dispatcher = new Agent({ keepAliveTimeout: 1_000 });
});
afterAll(async () => {
  await dispatcher.close();
});
afterEach(async () => {
  await standin?.close();
  standin = undefined;
});

async function start(options: Parameters<typeof startSourceStandins>[0] = { anchorMs: ANCHOR }): Promise<SourceStandin> {
  standin = await startSourceStandins(options);
  return standin;
}

/** Each platform's source against the stand-in, spacing and backoff short for the test. */
function sources(s: SourceStandin): Record<StandinPlatform, Source> {
  const quick = { dispatcher, random: () => 0, sleep: async () => undefined };
  return {
    atcoder: atcoderSource({ ...quick, baseUrl: s.baseUrls.atcoder }),
    codechef: codechefSource({ ...quick, baseUrl: s.baseUrls.codechef }),
    leetcode: leetcodeSource({ ...quick, baseUrl: s.baseUrls.leetcode }),
  };
}

const call = (ms = 10_000) => ({ signal: new AbortController().signal, deadline: Date.now() + ms });

async function failureOf(promise: Promise<unknown>): Promise<SourceError> {
  const thrown = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(isSourceError(thrown)).toBe(true);
  return thrown as SourceError;
}

describe('source stand-ins: the fixtures', () => {
  it('serve each fixture shifted to the anchor, believed by each source', async () => {
    const s = await start();
    const all = sources(s);
    const anchorSeconds = Math.floor(ANCHOR / 1000);
    const expected = { atcoder: [56, 6], codechef: [13, 5], leetcode: [97, 1] };
    for (const platform of ['atcoder', 'codechef', 'leetcode'] as const) {
      const reply = await all[platform].fetchReply(call());
      const upcoming = reply.contests.filter((c) => c.startTimeSeconds > anchorSeconds);
      expect([reply.contests.length, upcoming.length], platform).toEqual(expected[platform]);
      expect(reply.attempts).toBe(1);
      expect(reply.dating.madeAt).toBeGreaterThan(Date.now() / 1000 - 60);
    }
    expect(s.requests.map((r) => [r.platform, r.method])).toEqual([
      ['atcoder', 'GET'],
      ['codechef', 'GET'],
      ['leetcode', 'POST'],
    ]);
    expect(s.requests[0]!.path).toBe('/atcoder/contests/?lang=en');
  });

  it('gzip when the client accepts it', async () => {
    const s = await start();
    const response = await request(`${s.baseUrls.codechef}/api/list/contests/all`, { dispatcher, headers: { 'accept-encoding': 'gzip' } });
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(Buffer.from(await response.body.arrayBuffer())).toString('utf8'))).toMatchObject({ status: 'success' });
  });

  it('refuse, as LeetCode does, a GraphQL call without a JSON Content-Type or a Referer', async () => {
    const s = await start();
    const bare = await request(`${s.baseUrls.leetcode}/graphql`, { dispatcher, method: 'POST', body: '{}' });
    expect(bare.statusCode).toBe(403);
    await bare.body.dump();
    const other = await request(`${s.baseUrls.atcoder}/contests/archive`, { dispatcher });
    expect(other.statusCode).toBe(404);
    await other.body.dump();
    const posted = await request(`${s.baseUrls.atcoder}/contests/`, { dispatcher, method: 'POST', body: '' });
    expect(posted.statusCode).toBe(405);
    await posted.body.dump();
    expect(s.requests.filter((r) => r.platform === 'atcoder')).toHaveLength(0);
  });
});

describe('source stand-ins: misbehaving', () => {
  it('a status, a challenge page and a truncated body, each retried, then the fixture', async () => {
    const s = await start();
    s.enqueue('atcoder', misbehave.status(503), misbehave.challenge(), misbehave.truncated());
    const reply = await sources(s).atcoder.fetchReply(call());
    expect(reply.attempts).toBe(4);
    expect(reply.contests).toHaveLength(56);
  });

  it('a huge body is refused while it streams', async () => {
    const s = await start();
    s.enqueue('leetcode', misbehave.huge());
    const error = await failureOf(sources(s).leetcode.fetchReply(call()));
    expect(error).toMatchObject({ kind: 'too-large', attempts: 1 });
  });

  it('an empty body and a changed page are failed replies', async () => {
    const s = await start();
    s.enqueue('codechef', misbehave.empty());
    expect(await failureOf(sources(s).codechef.fetchReply(call()))).toMatchObject({ kind: 'empty' });
    s.setBody('atcoder', '<!DOCTYPE html><html><body><div id="contest-table-upcoming-v2"></div></body></html>');
    expect(await failureOf(sources(s).atcoder.fetchReply(call()))).toMatchObject({ kind: 'markup' });
    s.setBody('codechef', { status: 'failure', message: 'maintenance' });
    expect(await failureOf(sources(s).codechef.fetchReply(call()))).toMatchObject({ kind: 'api-failed' });
  });

  it('a slow reply times the attempt out; the next attempt gets the fixture', async () => {
    const s = await start();
    s.enqueue('codechef', misbehave.slow(30_000));
    const source = codechefSource(
      { dispatcher, baseUrl: s.baseUrls.codechef, random: () => 0, sleep: async () => undefined },
      {
        ...CODECHEF_SETTINGS,
        http: { minSpacingMs: 0, attemptTimeoutMs: 2_000, maxBodyBytes: 4 * 1024 * 1024 },
      },
    );
    const reply = await source.fetchReply(call(20_000));
    expect(reply.attempts).toBe(2);
  });

  it('setDelay slows every reply of one platform; hold keeps replies until released', async () => {
    const s = await start();
    s.setDelay('leetcode', 200);
    const began = Date.now();
    await sources(s).leetcode.fetchReply(call());
    expect(Date.now() - began).toBeGreaterThanOrEqual(200);
    const release = s.hold();
    let done = false;
    const pending = sources(s)
      .atcoder.fetchReply(call())
      .then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(done).toBe(false);
    release();
    await pending;
    expect(done).toBe(true);
  });

  it('closes promptly with a held request in flight', async () => {
    const s = await start();
    s.hold();
    const pending = request(`${s.baseUrls.atcoder}/contests/?lang=en`, { dispatcher }).then(
      () => 'answered',
      () => 'cut',
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const began = Date.now();
    await s.close();
    expect(Date.now() - began).toBeLessThan(2_000);
    expect(await pending).toBe('cut');
  });
});

describe('source-standins as its own process', () => {
  it('prints its base URLs, serves, and exits cleanly on SIGTERM', async () => {
    const tsx = new URL('../../node_modules/.bin/tsx', import.meta.url).pathname;
    const script = new URL('../../local/source-standins.ts', import.meta.url).pathname;
    const child = spawn(tsx, [script, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const lines = createInterface({ input: child.stdout });
      const line = await new Promise<string>((resolve, reject) => {
        lines.once('line', resolve);
        child.once('exit', (code) => reject(new Error(`stand-in exited early with ${code}`)));
      });
      const baseUrls = JSON.parse(line) as Record<StandinPlatform, string>;
      expect(baseUrls.leetcode).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/leetcode$/);
      const reply = await leetcodeSource({ dispatcher, baseUrl: baseUrls.leetcode }).fetchReply(call());
      expect(reply.contests).toHaveLength(97);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
