/**
 * A reply is evidence, and the firing rule (docs/design.md): the review's cases end to end — the
 * real handler on a virtual clock, DynamoDB Local tables from the synthesized template (the
 * Reminders TTL and the sparse `byDue` index included), the Codeforces stand-in serving replies
 * made at the virtual time, the app writing reminders by the table contract and a notifier that
 * queries `byDue` and claims each row. The same cases run hour by hour at planner level in
 * test/lambda/contests/plan.test.ts.
 */
import { DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { CodeforcesStandin } from '../../local/codeforces-standin.js';
import { REMINDERS_BY_DUE_INDEX } from '../../lib/constructs/data-tables.js';
import { setReminder, snapshot, type ApiContest } from '../support/contests.js';
import { localHandler } from '../support/handler.js';
import type { TestTables } from '../support/tables.js';
import { useWorld } from '../support/world.js';
import { cf, codeforcesNumber } from '../support/ids.js';

let standin: CodeforcesStandin;
let tables: TestTables;

useWorld('evidence', (world) => {
  ({ standin, tables } = world);
});

const HOUR = 3600;
const MIN = 60;
const T0 = Math.floor(Date.now() / 1000 / HOUR) * HOUR;

interface Truth {
  id: number;
  start: number;
  durationSeconds?: number;
}

/** The entry an honest Codeforces makes at `t`. */
function entry(c: Truth, t: number, overrides: Partial<ApiContest> = {}): ApiContest {
  const duration = c.durationSeconds ?? 2 * HOUR;
  const start = overrides.startTimeSeconds ?? c.start;
  const phase = t < c.start ? 'BEFORE' : t < c.start + duration ? 'CODING' : 'FINISHED';
  return {
    id: c.id,
    name: `Codeforces Round ${c.id}`,
    type: 'CF',
    phase,
    frozen: false,
    durationSeconds: duration,
    startTimeSeconds: start,
    relativeTimeSeconds: t - start,
    ...overrides,
  };
}

/** A virtual hour: the reply `list` (made at the virtual time), a sync, then the notifier every 10 minutes. */
function harness() {
  const clock = { seconds: T0 };
  const { invoke } = localHandler(tables, standin.baseUrl, { now: () => clock.seconds * 1000 });
  const fired: { contestId: number; userId: string; at: number; start: number }[] = [];
  /** The notifier: one Query of the sparse index, a conditional claim per row (docs/tables.md). */
  const notify = async (at: number) => {
    const { Items = [] } = await tables.doc.send(
      new QueryCommand({
        TableName: tables.names.reminders,
        IndexName: REMINDERS_BY_DUE_INDEX,
        KeyConditionExpression: 'dueShard = :s AND dueAt <= :now',
        ExpressionAttributeValues: { ':s': 0, ':now': at },
      }),
    );
    for (const item of Items) {
      await tables.doc.send(
        new UpdateCommand({
          TableName: tables.names.reminders,
          Key: { contestKey: item.contestKey, userId: item.userId },
          UpdateExpression: 'SET notifiedAt = :at, notifiedStart = dueStart, paused = :notified REMOVE dueAt, dueShard, dueStart',
          ConditionExpression: 'dueAt = :seen',
          ExpressionAttributeValues: { ':at': at, ':notified': 'notified', ':seen': item.dueAt },
        }),
      );
      fired.push({ contestId: codeforcesNumber(item.contestId), userId: String(item.userId), at, start: Number(item.dueStart) });
    }
  };
  return {
    clock,
    fired,
    async hour(list: ApiContest[], event: unknown = {}) {
      clock.seconds += 2;
      standin.enqueue({ body: { status: 'OK', result: list } });
      const result = await invoke(event);
      for (let minute = 0; minute < 60; minute += 10) await notify(clock.seconds - 2 + minute * MIN + 10);
      clock.seconds += HOUR - 2;
      return result;
    },
  };
}

const ROUNDS: Truth[] = [
  { id: 2101, start: T0 + 4 * HOUR + 30 * MIN },
  { id: 2102, start: T0 + 6 * HOUR + 5 * MIN },
  { id: 2103, start: T0 + 30 * HOUR },
  { id: 2104, start: T0 + 50 * HOUR },
];
const OLD: Truth = { id: 2000, start: T0 - 30 * HOUR };
const honest = (t: number, truth: Truth[] = ROUNDS) => [...truth, OLD].map((c) => entry(c, t));

/** Synced once, with reminders 10 and 60 minutes before each round (the app, by the contract). */
async function seeded() {
  const h = harness();
  await h.hour(honest(h.clock.seconds + 2));
  for (const c of ROUNDS) {
    await setReminder(tables, c.id, 'a', 10);
    await setReminder(tables, c.id, 'b', 60);
  }
  return h;
}

/** Sent at most once per start, never more than 10 minutes early, for the round's true start. */
function expectOnTimeOrLate(fired: { contestId: number; userId: string; at: number; start: number }[], latest: number) {
  for (const send of fired) {
    const round = ROUNDS.find((c) => c.id === send.contestId)!;
    const minutes = send.userId === 'a' ? 10 : 60;
    expect(send.start, `${send.contestId}/${send.userId}`).toBe(round.start);
    expect(send.at, `${send.contestId}/${send.userId} early`).toBeGreaterThanOrEqual(round.start - minutes * MIN - 10 * MIN);
    expect(send.at, `${send.contestId}/${send.userId} late`).toBeLessThanOrEqual(Math.max(round.start - minutes * MIN, latest) + 70 * MIN);
  }
  const keys = fired.map((f) => `${f.contestId}/${f.userId}`);
  expect(new Set(keys).size).toBe(keys.length);
}

const LIES: Record<string, (t: number) => ApiContest[]> = {
  'all-FINISHED with starts moved back': (t) =>
    honest(t).map((e) => (e.phase === 'FINISHED' ? e : { ...e, phase: 'FINISHED', startTimeSeconds: t - HOUR, relativeTimeSeconds: HOUR })),
  'starts moved into the past': (t) =>
    honest(t).map((e) => (e.phase === 'BEFORE' ? { ...e, startTimeSeconds: t - HOUR, relativeTimeSeconds: HOUR } : e)),
  'a partial list': (t) => honest(t).filter((e) => e.id === 2000 || e.id === 2104),
};

describe('the same wrong reply three times (fresh times each hour): nothing lost, early or twice', () => {
  for (const [name, lie] of Object.entries(LIES)) {
    it(name, async () => {
      const h = await seeded();
      const reminders = (await snapshot(tables)).reminders.length;
      for (let i = 0; i < 3; i += 1) {
        const { summary } = await h.hour(lie(h.clock.seconds + 2));
        expect(summary).toMatchObject({ outcome: 'succeeded', counts: { repliesStale: 0 } });
      }
      const episodeEnd = h.clock.seconds + 2;
      for (let i = 0; i < 8; i += 1) await h.hour(honest(h.clock.seconds + 2));
      // The view is the truth again, the reminders all kept.
      const { contests, reminders: after } = await snapshot(tables);
      for (const c of ROUNDS) expect(contests.find((s) => s.contestId === cf(c.id))).toMatchObject({ startTimeSeconds: c.start });
      expect(after).toHaveLength(reminders);
      expectOnTimeOrLate(h.fired, episodeEnd);
      // Both reminders of the two near rounds fired by now (late if the lie covered their time).
      expect(h.fired.filter((f) => f.contestId === 2101 || f.contestId === 2102)).toHaveLength(4);
    });
  }
});

describe('stale replies', () => {
  it('a frozen reply served again is stale: never applied, counted in the summary line and the run record', async () => {
    const h = await seeded();
    const frozen = LIES['all-FINISHED with starts moved back']!(h.clock.seconds + 2);
    const first = await h.hour(frozen);
    expect(first.summary).toMatchObject({ counts: { contestsHeld: 4, repliesStale: 0 } });
    const again = await h.hour(frozen);
    expect(again.summary).toMatchObject({
      outcome: 'succeeded',
      counts: { repliesStale: 1, contestsHeld: 0, contestsWritten: 0 },
      stale: { madeAt: expect.any(String) },
    });
    const line = again.lines.find((l) => l.summary === true);
    expect(line).toMatchObject({ counts: { repliesStale: 1 }, stale: again.summary!.stale });
    const record = await tables.doc.send(
      new GetCommand({ TableName: tables.names.coordination, Key: { pk: `run#console#${again.summary!.runId}` }, ConsistentRead: true }),
    );
    expect(record.Item).toMatchObject({ counts: { repliesStale: 1 }, stale: again.summary!.stale });
    // Served a third time: still stale, so the lie never converges.
    expect((await h.hour(frozen)).summary?.counts).toMatchObject({ repliesStale: 1, contestsAccepted: 0 });
  });
});

describe('when in doubt, delay', () => {
  it('a stale reply pauses the reminders due before the next sync could see a change; the next fresh reply brings them back', async () => {
    const h = await seeded();
    await h.hour(honest(h.clock.seconds + 2));
    const madeAt = h.clock.seconds + 2;
    const last = honest(madeAt);
    await h.hour(last);
    // T0 + 3 h: the same reply again (a frozen cache). 2101 starts at T0 + 4 h 30: 'b' (60 min) is due within the hour.
    const stale = await h.hour(last);
    expect(stale.summary).toMatchObject({ outcome: 'succeeded', counts: { repliesStale: 1, remindersPaused: 1, contestsWritten: 0 } });
    let state = await snapshot(tables);
    expect(state.contests.find((c) => c.contestId === cf(2101))).toMatchObject({
      remindersPaused: 'held',
      startTimeSeconds: ROUNDS[0]!.start,
    });
    expect(state.reminders.filter((r) => r.contestId === cf(2101)).map((r) => [r.userId, r.paused ?? r.dueAt])).toEqual([
      ['a', ROUNDS[0]!.start - 10 * MIN],
      ['b', 'held'],
    ]);
    expect(h.fired).toEqual([]);
    // T0 + 4 h: fresh again: the pause ends, 'b' fires late (never early), 'a' on time.
    await h.hour(honest(h.clock.seconds + 2));
    state = await snapshot(tables);
    expect(state.contests.find((c) => c.contestId === cf(2101))?.remindersPaused).toBeUndefined();
    expect(h.fired.map((f) => [f.contestId, f.userId, f.at - (ROUNDS[0]!.start - (f.userId === 'a' ? 10 : 60) * MIN)])).toEqual([
      [2101, 'b', 30 * MIN + 10],
      [2101, 'a', 10],
    ]);
  });
});

describe('honest change near the start', () => {
  it('3 of 4 rounds postponed a day 90 minutes before the first start: no reminder fires early, each once for the new start', async () => {
    const h = harness();
    const near: Truth[] = [0, 20, 40, 60].map((m, i) => ({ id: 2201 + i, start: T0 + 3 * HOUR + 30 * MIN + m * MIN }));
    await h.hour(honest(h.clock.seconds + 2, near));
    for (const c of near) await setReminder(tables, c.id, 'a', 10);
    await h.hour(honest(h.clock.seconds + 2, near));
    // Postponed at T0 + 2 h: the next replies list 3 of them a day later.
    const moved = near.map((c, i) => (i < 3 ? { ...c, start: c.start + 24 * HOUR } : c));
    const first = await h.hour(honest(h.clock.seconds + 2, moved));
    expect(first.summary?.counts.contestsHeld).toBe(3);
    for (let i = 0; i < 30; i += 1) await h.hour(honest(h.clock.seconds + 2, moved));
    for (const c of moved) {
      const sends = h.fired.filter((f) => f.contestId === c.id);
      expect(sends.map((s) => s.start)).toEqual([c.start]);
      expect(sends[0]!.at).toBeGreaterThanOrEqual(c.start - 20 * MIN);
    }
  });

  it('a round moved 2.5 h earlier, announced 1.5 h ahead: its reminders fire at the new time (confirmed by the next reply)', async () => {
    const h = harness();
    const round: Truth = { id: 2301, start: T0 + 6 * HOUR };
    await h.hour(honest(h.clock.seconds + 2, [round]));
    await setReminder(tables, 2301, 'a', 10);
    await setReminder(tables, 2301, 'b', 30);
    await h.hour(honest(h.clock.seconds + 2, [round]));
    const earlier: Truth = { id: 2301, start: h.clock.seconds + 90 * MIN };
    for (let i = 0; i < 4; i += 1) await h.hour(honest(h.clock.seconds + 2, [earlier]));
    expect(h.fired.map((f) => f.start)).toEqual([earlier.start, earlier.start]);
    for (const send of h.fired) {
      const minutes = send.userId === 'a' ? 10 : 30;
      expect(send.at - (earlier.start - minutes * MIN)).toBeGreaterThanOrEqual(-10 * MIN);
      expect(send.at - (earlier.start - minutes * MIN)).toBeLessThanOrEqual(10 * MIN);
    }
  });
});

describe('one believable lie per contest', () => {
  it('one contest listed as started 5 minutes ago (inside the skew) in consecutive replies: its reminders never fire early', async () => {
    const h = await seeded();
    for (let i = 0; i < 3; i += 1) {
      const t = h.clock.seconds + 2;
      await h.hour(
        honest(t).map((e) => (e.id === 2103 ? { ...e, phase: 'CODING', startTimeSeconds: t - 5 * MIN, relativeTimeSeconds: 5 * MIN } : e)),
      );
    }
    const episodeEnd = h.clock.seconds + 2;
    for (let i = 0; i < 4; i += 1) await h.hour(honest(h.clock.seconds + 2));
    expect(h.fired.filter((f) => f.contestId === 2103)).toEqual([]);
    expectOnTimeOrLate(h.fired, episodeEnd);
    const { reminders } = await snapshot(tables);
    expect(reminders.filter((r) => r.contestId === cf(2103)).map((r) => r.dueAt)).toEqual([
      ROUNDS[2]!.start - 10 * MIN,
      ROUNDS[2]!.start - 60 * MIN,
    ]);
  });
});

describe('reminders are never deleted, and never orphaned for ever', () => {
  it('the Reminders table has its TTL; a contest deleted after its misses leaves its reminders paused with its TTL, and brings them back when re-listed', async () => {
    const ttl = await tables.doc.send(new DescribeTimeToLiveCommand({ TableName: tables.names.reminders }));
    expect(ttl.TimeToLiveDescription).toMatchObject({ AttributeName: 'expiresAt', TimeToLiveStatus: 'ENABLED' });
    const h = await seeded();
    const without = (t: number) => honest(t).filter((e) => e.id !== 2104);
    for (let i = 0; i < 3; i += 1) await h.hour(without(h.clock.seconds + 2));
    let state = await snapshot(tables);
    expect(state.contests.find((c) => c.contestId === cf(2104))).toBeUndefined();
    const expiresAt = ROUNDS[3]!.start + 2 * HOUR + 7 * 24 * HOUR;
    expect(state.reminders.filter((r) => r.contestId === cf(2104)).map((r) => [r.paused, r.expiresAt, r.dueAt])).toEqual([
      ['vanished', expiresAt, undefined],
      ['vanished', expiresAt, undefined],
    ]);
    await h.hour(honest(h.clock.seconds + 2));
    state = await snapshot(tables);
    expect(state.reminders.filter((r) => r.contestId === cf(2104)).map((r) => r.dueAt)).toEqual([
      ROUNDS[3]!.start - 10 * MIN,
      ROUNDS[3]!.start - 60 * MIN,
    ]);
  });

  it('a stored contest left unfinished past its TTL pauses its reminders with the same TTL (they go with it)', async () => {
    const h = harness();
    const stuck: Truth = { id: 2401, start: T0 + 2 * HOUR, durationSeconds: 2 * HOUR };
    await h.hour(honest(h.clock.seconds + 2, [stuck]));
    await setReminder(tables, 2401, 'a', 10);
    // Eight days on, Codeforces still lists it PENDING_SYSTEM_TEST.
    h.clock.seconds += 8 * 24 * HOUR;
    const { summary } = await h.hour([entry(stuck, h.clock.seconds + 2, { phase: 'PENDING_SYSTEM_TEST' })]);
    expect(summary, JSON.stringify(summary)).toMatchObject({ outcome: 'succeeded' });
    const { contests, reminders } = await snapshot(tables);
    const contest = contests.find((c) => c.contestId === cf(2401));
    // Left as stored (never rewritten from the stuck entry), marked once.
    expect(contest).toMatchObject({ remindersPaused: 'expired', phase: 'BEFORE' });
    expect(reminders).toMatchObject([{ contestId: cf(2401), userId: 'a', paused: 'expired', expiresAt: contest!.expiresAt }]);
    expect(reminders[0]?.dueAt).toBeUndefined();
  });
});
