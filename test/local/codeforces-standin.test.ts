/** The local Codeforces stand-in over real HTTP on loopback. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { gunzipSync } from 'node:zlib';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fetchContests, MAX_BODY_BYTES } from '../../lambda/sources/codeforces/client.js';
import { CodeforcesError } from '../../lambda/sources/codeforces/errors.js';
import { recordedContestList, startCodeforcesStandin, type CodeforcesStandin } from '../../local/codeforces-standin.js';
import { timed } from '../support/starvation.js';

type Contest = { id: number; phase: string; startTimeSeconds?: number; relativeTimeSeconds?: number; durationSeconds: number };

const RECORDED_AT = (
  JSON.parse(readFileSync(new URL('../fixtures/contest-list.meta.json', import.meta.url), 'utf8')) as { recordedAtSeconds: number }
).recordedAtSeconds;
const FIXTURE = (JSON.parse(readFileSync(new URL('../fixtures/contest-list.json', import.meta.url), 'utf8')) as { result: Contest[] })
  .result;

let dispatcher: Agent;
let standin: CodeforcesStandin | undefined;

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

async function start(options?: Parameters<typeof startCodeforcesStandin>[0]): Promise<CodeforcesStandin> {
  standin = await startCodeforcesStandin(options);
  return standin;
}

function get(s: CodeforcesStandin, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return request(`${s.baseUrl}/contest.list?gym=false`, { dispatcher, headers, ...(signal === undefined ? {} : { signal }) });
}

/** Resolves to 'pending' if `promise` has not settled within `ms`. */
async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms))]);
}

describe('recordedContestList', () => {
  it('rebases start times to now and recomputes relativeTimeSeconds', () => {
    const now = Date.UTC(2030, 0, 1, 12, 0, 0);
    const nowSeconds = now / 1000;
    const list = recordedContestList(now) as Contest[];
    expect(list).toHaveLength(FIXTURE.length);
    list.forEach((contest, i) => {
      const recorded = FIXTURE[i]!;
      expect(contest.id).toBe(recorded.id);
      if (recorded.startTimeSeconds === undefined) {
        expect(contest.startTimeSeconds).toBeUndefined();
        return;
      }
      expect(contest.startTimeSeconds).toBe(recorded.startTimeSeconds + (nowSeconds - RECORDED_AT));
      expect(contest.relativeTimeSeconds).toBe(nowSeconds - contest.startTimeSeconds!);
      expect(contest.relativeTimeSeconds).toBe(recorded.relativeTimeSeconds);
    });
  });

  it('keeps upcoming contests upcoming and finished ones in the past, whatever now is', () => {
    for (const now of [Date.now(), Date.UTC(2024, 0, 1), Date.UTC(2040, 6, 1)]) {
      const nowSeconds = Math.floor(now / 1000);
      for (const c of recordedContestList(now) as Contest[]) {
        if (c.startTimeSeconds === undefined) continue;
        if (c.phase === 'BEFORE') expect(c.startTimeSeconds).toBeGreaterThan(nowSeconds);
        if (c.phase === 'FINISHED') expect(c.startTimeSeconds + c.durationSeconds).toBeLessThan(nowSeconds);
        if (c.phase === 'CODING') {
          expect(c.startTimeSeconds).toBeLessThanOrEqual(nowSeconds);
          expect(c.startTimeSeconds + c.durationSeconds).toBeGreaterThan(nowSeconds);
        }
      }
    }
  });

  it('has the mix of contests the tests rely on', () => {
    const phases = FIXTURE.map((c) => c.phase);
    expect(FIXTURE.length).toBeGreaterThanOrEqual(55);
    expect(phases.filter((p) => p === 'BEFORE').length).toBeGreaterThanOrEqual(5);
    expect(phases).toContain('CODING');
    expect(phases).toContain('SYSTEM_TEST');
    expect(FIXTURE.filter((c) => c.startTimeSeconds === undefined)).toHaveLength(1);
    expect(new Set(FIXTURE.map((c) => c.id)).size).toBe(FIXTURE.length);
  });
});

describe('startCodeforcesStandin', () => {
  it('serves the rebased fixture that fetchContests accepts, and counts requests', async () => {
    const s = await start();
    expect(s.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);

    const result = await fetchContests({ baseUrl: s.baseUrl, deadline: Date.now() + 10_000, dispatcher });
    expect(result.contests).toHaveLength(FIXTURE.length - 1);
    expect(result.unscheduled).toBe(1);
    expect(result.attempts).toBe(1);
    const upcoming = result.contests.filter((c) => c.phase === 'BEFORE');
    expect(upcoming.every((c) => c.startTimeSeconds > Date.now() / 1000)).toBe(true);

    await fetchContests({ baseUrl: s.baseUrl, deadline: Date.now() + 10_000, dispatcher });
    expect(s.requests.map((r) => r.path)).toEqual(['/api/contest.list?gym=false', '/api/contest.list?gym=false']);
    expect(s.requests[0]!.at).toBeLessThanOrEqual(s.requests[1]!.at);
  });

  it('gzips when the client accepts it, plain otherwise', async () => {
    const s = await start({ contests: [{ id: 1, name: 'x' }] });
    const zipped = await get(s, { 'accept-encoding': 'gzip' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(Buffer.from(await zipped.body.arrayBuffer())).toString())).toEqual({
      status: 'OK',
      result: [{ id: 1, name: 'x' }],
    });

    const plain = await get(s);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['content-type']).toMatch(/application\/json/);
    expect(await plain.body.json()).toEqual({ status: 'OK', result: [{ id: 1, name: 'x' }] });
  });

  it('setContests replaces the served list', async () => {
    const s = await start();
    const list = recordedContestList().slice(0, 3);
    s.setContests(list);
    expect(s.contests()).toEqual(list);
    expect(((await (await get(s)).body.json()) as { result: unknown[] }).result).toEqual(list);
  });

  it('enqueue serves one-shot replies in order, then falls back to the default', async () => {
    const s = await start();
    s.enqueue(
      { status: 503, body: 'Service Unavailable', headers: { 'content-type': 'text/plain' } },
      { status: 400, body: { status: 'FAILED', comment: 'Call limit exceeded' } },
      { status: 403, body: '<!DOCTYPE html><title>Just a moment...</title>' },
    );
    const result = await fetchContests({
      baseUrl: s.baseUrl,
      deadline: Date.now() + 10_000,
      dispatcher,
      minSpacingMs: 10,
      random: () => 0,
    });
    expect(result.attempts).toBe(4);
    expect(s.requests).toHaveLength(4);
  });

  it('enqueued bodies reach the client as sent (a truncated reply fails fetchContests)', async () => {
    const s = await start();
    s.enqueue({ body: '{"status":"OK","result":[{"id":1', gzip: true });
    const error = (await fetchContests({ baseUrl: s.baseUrl, deadline: Date.now() + 10_000, dispatcher }).catch(
      (e: unknown) => e,
    )) as CodeforcesError;
    expect(error).toBeInstanceOf(CodeforcesError);
    expect(error.kind).toBe('not-json');
  });

  it('setDelay slows every reply; a reply can override it', async () => {
    const s = await start({ delayMs: 0 });
    s.setDelay(200);
    const slowed = await timed(async () => (await get(s)).body.dump());
    expect(slowed.elapsedMs).toBeGreaterThanOrEqual(190);

    s.enqueue({ delayMs: 0 });
    // The bound holds the time this process had the CPU: a machine busy with other work adds none.
    const overridden = await timed(async () => (await get(s)).body.dump());
    expect(overridden.ownMs, JSON.stringify(overridden)).toBeLessThan(150);
  });

  it('hold keeps replies back until released', async () => {
    const s = await start();
    const release = s.hold();
    const pending = get(s);
    expect(await settledWithin(pending, 150)).toBe('pending');
    expect(s.requests).toHaveLength(1);
    release();
    const response = await pending;
    expect(response.statusCode).toBe(200);
    await response.body.dump();
  });

  it('several holds: replies wait for the last release', async () => {
    const s = await start();
    const releaseA = s.hold();
    const releaseB = s.hold();
    const pending = get(s);
    releaseA();
    releaseA();
    expect(await settledWithin(pending, 100)).toBe('pending');
    releaseB();
    await (await pending).body.dump();
  });

  it('a slow reply makes fetchContests time out and retry', async () => {
    const s = await start();
    s.enqueue({ delayMs: 2_000 });
    const result = await fetchContests({
      baseUrl: s.baseUrl,
      deadline: Date.now() + 10_000,
      dispatcher,
      attemptTimeoutMs: 200,
      minSpacingMs: 10,
      random: () => 0,
    });
    expect(result.attempts).toBe(2);
  });

  it('copes with clients that abort a held request', async () => {
    const s = await start();
    const release = s.hold();
    const controller = new AbortController();
    const pending = get(s, {}, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort(new Error('client gave up'));
    await expect(pending).rejects.toThrow();
    release();
    const response = await get(s);
    expect(response.statusCode).toBe(200);
    await response.body.dump();
  });

  it('closes promptly with a held request in flight', async () => {
    const s = await start();
    s.hold();
    const pending = get(s).then(
      () => 'answered',
      () => 'cut',
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closing = await timed(() => s.close());
    expect(closing.ownMs, JSON.stringify(closing)).toBeLessThan(1_000);
    expect(await pending).toBe('cut');
    await s.close();
  });

  it('closes promptly with a slow request in flight', async () => {
    const s = await start({ delayMs: 30_000 });
    const pending = get(s).catch(() => 'cut');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closing = await timed(() => s.close());
    expect(closing.ownMs, JSON.stringify(closing)).toBeLessThan(1_000);
    expect(await pending).toBe('cut');
  });

  it('streams a chunked reply without Content-Length; fetchContests refuses one above the cap while it streams', async () => {
    const s = await start();
    const body = JSON.stringify({ status: 'OK', result: recordedContestList() });
    s.enqueue({ body, chunked: true, gzip: false });
    const response = await get(s);
    expect(response.headers['content-length']).toBeUndefined();
    expect(response.headers['transfer-encoding']).toBe('chunked');
    expect(await response.body.text()).toBe(body);

    s.enqueue({ body: `{"status":"OK","result":[${' '.repeat(MAX_BODY_BYTES)}]}`, chunked: true, gzip: false });
    const error = await fetchContests({ baseUrl: s.baseUrl, deadline: Date.now() + 10_000, dispatcher }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CodeforcesError);
    expect(error).toMatchObject({ kind: 'too-large', attempts: 1 });
    expect((error as CodeforcesError).message).toMatch(/while streaming/);
  });

  it('answers other paths with a FAILED reply and does not count them', async () => {
    const s = await start();
    const response = await request(`${s.baseUrl}/user.info?handles=tourist`, { dispatcher });
    expect(response.statusCode).toBe(400);
    expect(await response.body.json()).toEqual({ status: 'FAILED', comment: 'Method is not found: /api/user.info' });
    expect(s.requests).toHaveLength(0);
  });
});

describe('codeforces-standin as its own process', () => {
  it('prints its base URL, serves, and exits cleanly on SIGTERM', async () => {
    const tsx = new URL('../../node_modules/.bin/tsx', import.meta.url).pathname;
    const script = new URL('../../local/codeforces-standin.ts', import.meta.url).pathname;
    const child = spawn(tsx, [script, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const lines = createInterface({ input: child.stdout });
      const baseUrl = await new Promise<string>((resolve, reject) => {
        lines.once('line', resolve);
        child.once('exit', (code) => reject(new Error(`stand-in exited early with ${code}`)));
      });
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);
      const result = await fetchContests({ baseUrl, deadline: Date.now() + 10_000, dispatcher });
      expect(result.contests).toHaveLength(FIXTURE.length - 1);

      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
