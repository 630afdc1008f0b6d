/**
 * What the sources' client tests share: a fake clock whose sleeps advance it at once, a MockAgent
 * for one origin that records when each attempt started, and the failure a fetch must end in.
 */
import { MockAgent } from 'undici';
import { expect } from 'vitest';
import type { SourceError } from '../../../lambda/sources/errors.js';

export const START_MS = Date.UTC(2025, 5, 1, 12);

export function fakeClock(start = START_MS) {
  let t = start;
  const sleeps: number[] = [];
  return {
    start,
    sleeps,
    now: () => t,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      t += ms;
    },
  };
}

export type FakeClock = ReturnType<typeof fakeClock>;

/** A MockAgent without network for `origin`; `reply` queues one reply to `method path`. */
export function mockPlatform(origin: string, path: string, method: 'GET' | 'POST', clock: FakeClock) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const starts: number[] = [];
  const seen: { headers: Record<string, string>; body: unknown }[] = [];
  const reply = (statusCode: number, body: string | Buffer, headers: Record<string, string> = {}) =>
    agent
      .get(origin)
      .intercept({ path, method })
      .reply((request) => {
        starts.push(clock.now());
        seen.push({ headers: request.headers as Record<string, string>, body: request.body });
        return { statusCode, data: body, responseOptions: { headers } };
      });
  return { agent, starts, seen, reply };
}

/** Options every client test passes: the mock, the fake clock, no jitter, a 25 s deadline. */
export function seams(agent: MockAgent, clock: FakeClock) {
  return { dispatcher: agent, now: clock.now, sleep: clock.sleep, random: () => 0, deadline: clock.start + 25_000 };
}

/** The SourceError subclass a fetch failed with. */
export async function failure<E extends SourceError>(promise: Promise<unknown>, Class: abstract new (...args: never[]) => E): Promise<E> {
  const thrown = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(thrown).toBeInstanceOf(Class);
  return thrown as E;
}

/** An HTTP Date header `secondsAgo` before `ms`. */
export const httpDate = (ms: number, secondsAgo = 0): string => new Date(ms - secondsAgo * 1000).toUTCString();
