/** The simulated app's users who change their minds: what they ask of the one write function. */
import { describe, expect, it } from 'vitest';
import { prng } from '../chaos/faults.js';
import { FickleUsers, LEAD_MINUTES, apiRequest, outcomeOf, type AppOutcome, type AppRequest } from './app.js';

const NOW = 1_800_000_000;

/** A write path in memory: what each user asked last, as the product would store it. */
function memoryWritePath(): { write: (request: AppRequest) => Promise<AppOutcome>; requests: AppRequest[]; rows: Map<string, number> } {
  const rows = new Map<string, number>();
  const requests: AppRequest[] = [];
  const write = (request: AppRequest): Promise<AppOutcome> => {
    requests.push(request);
    const key = `${request.contestId}/${request.userId}`;
    if (request.kind === 'cancel') return Promise.resolve({ kind: 'cancel', cancelled: rows.delete(key) });
    const changed = rows.get(key) !== request.minutesBefore;
    rows.set(key, request.minutesBefore);
    return Promise.resolve({ kind: 'set', changed, due: true });
  };
  return { write, requests, rows };
}

describe('FickleUsers', () => {
  it('set, change, cancel, set the same again and cancel-and-set again, each through the one write function', async () => {
    const path = memoryWritePath();
    const users = new FickleUsers(prng(7), path.write);
    const shown = [
      { contestId: 1, startTimeSeconds: NOW + 2 * 3600 },
      { contestId: 2, startTimeSeconds: NOW + 3 * 86_400 },
    ];
    for (let i = 0; i < 400; i += 1) await users.act(shown, NOW);
    expect(Object.keys(users.actions).sort()).toEqual(['cancel', 'cancel-and-set', 'change', 'set', 'set-again', 'set-same']);
    // A change is a set of another lead than the one stored; a set of the same lead changes nothing.
    expect(users.actions.change).toBeGreaterThan(20);
    expect(users.actions['set-again']).toBe(users.actions['cancel-and-set']);
    // Every cancel-and-set is a cancel followed at once by a set of the same lead for the same user.
    const pairs = path.requests.flatMap((request, i) => {
      const next = path.requests[i + 1];
      return request.kind === 'cancel' && next?.kind === 'set' && next.userId === request.userId && next.contestId === request.contestId
        ? [next]
        : [];
    });
    expect(pairs.length).toBeGreaterThanOrEqual(users.actions['set-again']!);
    // Leads: those users choose, or near the start one due within minutes; never one the write path refuses.
    for (const request of path.requests) {
      if (request.kind !== 'set') continue;
      if (request.contestId === 2) expect(LEAD_MINUTES).toContain(request.minutesBefore);
      else expect(request.minutesBefore).toBeLessThanOrEqual(1440);
    }
    expect(
      path.requests.some((r) => r.kind === 'set' && r.contestId === 1 && !(LEAD_MINUTES as readonly number[]).includes(r.minutesBefore)),
    ).toBe(true);
  });

  it('acts only on contests that have not started, and near ones more often', async () => {
    const path = memoryWritePath();
    const users = new FickleUsers(prng(3), path.write);
    const shown = [
      { contestId: 1, startTimeSeconds: NOW - 60 },
      { contestId: 2, startTimeSeconds: NOW + 3600 },
      ...Array.from({ length: 8 }, (_, i) => ({ contestId: 10 + i, startTimeSeconds: NOW + (2 + i) * 86_400 })),
    ];
    for (let i = 0; i < 300; i += 1) await users.act(shown, NOW);
    expect(path.requests.some((r) => r.contestId === 1)).toBe(false);
    const near = path.requests.filter((r) => r.contestId === 2).length;
    expect(near / path.requests.length).toBeGreaterThan(0.4);
    await users.act([{ contestId: 1, startTimeSeconds: NOW - 60 }], NOW);
    expect(path.requests.some((r) => r.contestId === 1)).toBe(false);
  });
});

describe('the API answers as the simulated app reads them', () => {
  const set = { kind: 'set', contestId: 2120, userId: 'user-0', minutesBefore: 30 } as const;
  const cancel = { kind: 'cancel', contestId: 2120, userId: 'user-0' } as const;
  const error = (code: string) => JSON.stringify({ error: { code, message: 'm' } });

  it('a set: changed and due from the answer; the write path’s refusals by their code', () => {
    const body = (changed: boolean, state: string) => JSON.stringify({ reminder: { state }, changed });
    expect(outcomeOf(set, 200, body(true, 'scheduled'))).toEqual({ kind: 'set', changed: true, due: true });
    expect(outcomeOf(set, 200, body(false, 'paused'))).toEqual({ kind: 'set', changed: false, due: false });
    expect(outcomeOf(set, 404, error('contest-not-found'))).toEqual({ kind: 'refused', reason: 'not-found' });
    expect(outcomeOf(set, 409, error('contest-started'))).toEqual({ kind: 'refused', reason: 'started' });
    expect(outcomeOf(set, 409, error('conflict'))).toEqual({ kind: 'refused', reason: 'conflict' });
    expect(() => outcomeOf(set, 400, error('invalid-input'))).toThrow(/400/);
  });

  it('a cancel: 204, or no reminder to cancel', () => {
    expect(outcomeOf(cancel, 204, '')).toEqual({ kind: 'cancel', cancelled: true });
    expect(outcomeOf(cancel, 404, error('reminder-not-found'))).toEqual({ kind: 'cancel', cancelled: false });
  });

  it('a request carries the user only as the authorizer’s claim', () => {
    const event = apiRequest(set);
    expect(event.requestContext.authorizer.jwt.claims).toEqual({ sub: 'user-0' });
    expect([event.routeKey, event.rawPath, event.body]).toEqual([
      'PUT /me/reminders/{contestId}',
      '/me/reminders/codeforces:2120',
      '{"minutesBefore":30}',
    ]);
  });
});
