/**
 * runSync on the single-execution module with in-memory ports: the release paths that are hard to
 * provoke on a real engine (an answer lost on the way back, a release that keeps failing), where
 * the interval is marked done, dry runs, and contention. The real lease and store run in
 * test/integration and test/multiprocess.
 */
import { describe, expect, it, vi } from 'vitest';
import type { FetchContestsResult } from '../../lambda/codeforces/client.js';
import type { ContestItem } from '../../lambda/contests/model.js';
import { DEFAULT_PLAN_SETTINGS, toItem } from '../../lambda/contests/plan.js';
import { type FencedWriterPort, type HeldLease, type LeasePort, leaseTiming, FencedWriteError } from '@contest-sync/scheduled-singleton';
import { DynamoContestStore } from '../../lambda/store/dynamo-store.js';
import { runSync, type StorePort } from '../../lambda/sync.js';

const timing = leaseTiming(10);
const interval = '2026-11-29T14:00:00Z';

/** The contest the stand-in list holds, as stored after a sync: a run over it writes nothing. */
const storedRound1: ContestItem = {
  ...toItem(
    { id: 1, name: 'Round 1', type: 'CF', phase: 'BEFORE', frozen: false, durationSeconds: 7200, startTimeSeconds: 2_000_000_000 },
    DEFAULT_PLAN_SETTINGS,
    '2026-11-29T13:00:00.000Z',
  ),
  confirmedStart: 2_000_000_000,
};

/**
 * The reply clock as a sync just now left it: an undated reply is dated by our own fetch, so a run
 * over the same list within the skew has nothing to write, not even the clock.
 */
const clockNow = () => ({ contestId: 0, replyMadeAt: Math.floor(Date.now() / 1000), updatedAt: 'x' }) as never;

function ports(
  release: LeasePort['release'],
  releaseLanded: LeasePort['releaseLanded'] = async () => false,
  options: { stored?: ContestItem[]; handoff?: string[] } = {},
) {
  const held: HeldLease = {
    runId: 'run-1',
    fence: 9,
    expiresAtMs: Date.now() + 10_000,
    ledger: new Set(),
    handoff: new Set(options.handoff),
  };
  const lease: LeasePort = {
    acquire: vi.fn(async () => ({ acquired: true as const, lease: held })),
    renew: vi.fn(async (l: HeldLease) => l),
    release: vi.fn(release),
    releaseLanded: vi.fn(releaseLanded),
    fenceCheck: () => ({ ConditionCheck: { TableName: 'coordination', Key: { pk: 'lease' }, ConditionExpression: 'x' } }),
  };
  const actions = new DynamoContestStore({} as never, { contests: 'contests', reminders: 'reminders' });
  const store: StorePort = {
    scanContests: async () => options.stored ?? [],
    remindersOf: async () => [],
    actionsFor: (changes, updatedAt) => actions.actionsFor(changes, updatedAt),
  };
  const writer = {
    commit: vi.fn<FencedWriterPort['commit']>(async (written, fence) => {
      if (written.length > 0) fence(true);
      return { transactions: written.length > 0 ? 1 : 0 };
    }),
  };
  const fetched: FetchContestsResult = {
    contests: [
      { id: 1, name: 'Round 1', type: 'CF', phase: 'BEFORE', frozen: false, durationSeconds: 7200, startTimeSeconds: 2_000_000_000 },
    ],
    listedIds: [1],
    invalid: 0,
    unscheduled: 0,
    attempts: 1,
    latencyMs: 5,
  };
  return { lease, writer, store, fetchContests: async () => fetched, now: Date.now, timing, sleep: async () => undefined };
}

const scheduled = { source: 'schedule' as const, interval, dryRun: false, force: false };
const context = { runId: 'run-1', remainingMs: () => 60_000 };
const lost = () => Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });

describe('runSync release', () => {
  it('marks the interval done in the release and reports success', async () => {
    const deps = ports(async () => true);
    const summary = await runSync(scheduled, deps, context);
    expect(summary).toMatchObject({ outcome: 'succeeded', fence: 9, interval });
    expect(deps.lease.release).toHaveBeenCalledWith(
      expect.objectContaining({ fence: 9 }),
      expect.objectContaining({
        doneInterval: interval,
        runRecord: expect.objectContaining({ pk: `run#${interval}`, outcome: 'succeeded' }),
      }),
      expect.any(AbortSignal),
    );
  });

  it('an answer lost, then a refusal: reads the lease back and counts the release that landed', async () => {
    let calls = 0;
    const deps = ports(
      async () => {
        calls += 1;
        if (calls === 1) throw lost();
        return false;
      },
      async () => true,
    );
    expect(await runSync(scheduled, deps, context)).toMatchObject({ outcome: 'succeeded' });
    expect(deps.lease.releaseLanded).toHaveBeenCalledTimes(1);
  });

  it('an error, then a refusal, and the read-back shows another run: lease-lost, not success', async () => {
    let calls = 0;
    const deps = ports(
      async () => {
        calls += 1;
        if (calls === 1) throw lost();
        return false;
      },
      async () => false,
      { stored: [storedRound1, clockNow()] },
    );
    expect(await runSync(scheduled, deps, context)).toMatchObject({ outcome: 'failed', reason: 'lease-lost' });
  });

  it('a release that keeps failing after a sync that wrote nothing: failed (the interval is not marked done, so it is retried)', async () => {
    const deps = ports(
      async () => {
        throw lost();
      },
      async () => false,
      { stored: [storedRound1, clockNow()] },
    );
    const summary = await runSync(scheduled, deps, context);
    expect(summary).toMatchObject({ outcome: 'failed', reason: 'lease', error: expect.stringMatching(/release failed: TimeoutError/) });
    expect(deps.lease.release).toHaveBeenCalledTimes(3);
  });

  it('a release that keeps failing after the last data write marked the interval done: succeeded (the lease lapses)', async () => {
    const deps = ports(async () => {
      throw lost();
    });
    const summary = await runSync(scheduled, deps, context);
    expect(summary).toMatchObject({ outcome: 'succeeded', fence: 9 });
    expect(deps.writer.commit).toHaveBeenCalledTimes(1);
  });

  it('marks the interval done in the last data transaction, and only there', async () => {
    const deps = ports(async () => true);
    const fenceCheck = vi.spyOn(deps.lease, 'fenceCheck');
    deps.writer.commit.mockImplementation(async (_actions, fence) => {
      fence(false);
      fence(true);
      return { transactions: 2 };
    });
    await runSync(scheduled, deps, context);
    expect(fenceCheck.mock.calls.map(([, extras]) => extras?.doneInterval)).toEqual([undefined, interval]);
  });

  it('a dry run takes no lease and writes nothing, not even a run record', async () => {
    const deps = ports(async () => true);
    const summary = await runSync({ source: 'console', interval, dryRun: true, force: false }, deps, context);
    expect(summary).toMatchObject({ outcome: 'succeeded', dryRun: true, changes: { write: [expect.objectContaining({ contestId: 1 })] } });
    expect(summary.fence).toBeUndefined();
    expect(deps.lease.acquire).not.toHaveBeenCalled();
    expect(deps.lease.release).not.toHaveBeenCalled();
    expect(deps.writer.commit).not.toHaveBeenCalled();
  });

  it('a contender that meets contention it cannot clear skips as lease-held with the reason, never fails', async () => {
    const deps = ports(async () => true);
    vi.mocked(deps.lease.acquire).mockResolvedValueOnce({
      acquired: false,
      reason: 'lease-held',
      holder: 'unknown',
      fence: undefined,
      contention: 'DynamoDB contention did not clear within 4 attempts (last: TransactionConflictException)',
    });
    const summary = await runSync(scheduled, deps, context);
    expect(summary).toMatchObject({
      outcome: 'skipped',
      reason: 'lease-held',
      holder: 'unknown',
      detail: expect.stringMatching(/TransactionConflict/),
    });
    expect(summary.holderExpiresAt).toBeUndefined();
  });

  it('a reminder update refused by a race (a claim) is dropped, the rest committed, and its contest handed over even when nothing else would hand it over', async () => {
    // Contest 1 was handed over by the last run and is unchanged now: only its reminder is updated.
    const deps = ports(
      async () => true,
      async () => false,
      { stored: [storedRound1], handoff: ['1'] },
    );
    const reminder = { contestId: 1, userId: 'u', minutesBefore: 10, remindAt: 2_000_000_000 - 600, expiresAt: storedRound1.expiresAt };
    deps.store.remindersOf = async (contestId) => (contestId === 1 ? [reminder] : []);
    const fenceCheck = vi.spyOn(deps.lease, 'fenceCheck');
    let refusedOnce = false;
    deps.writer.commit.mockImplementation(async (written, fence) => {
      const claimed = written.find((action) => action.Update?.TableName === 'reminders');
      if (!refusedOnce && claimed !== undefined) {
        refusedOnce = true;
        throw new FencedWriteError('a write was refused by its condition', { refused: [claimed] });
      }
      if (written.length > 0) fence(true);
      return { transactions: written.length > 0 ? 1 : 0 };
    });
    const summary = await runSync(scheduled, deps, context);
    expect(refusedOnce).toBe(true);
    expect(summary).toMatchObject({ outcome: 'succeeded', counts: { remindersRaced: 1 } });
    const last = vi.mocked(deps.writer.commit).mock.calls.at(-1)![0];
    expect(last.some((action) => action.Update?.TableName === 'reminders')).toBe(false);
    expect(fenceCheck.mock.calls.at(-1)?.[1]?.handoff).toEqual(['1']);
  });

  it('resolves a handed-over contest once its reminders were read again (a paused contest refuses due reminders from the app)', async () => {
    const vanished = {
      ...storedRound1,
      contestId: 7,
      url: 'https://codeforces.com/contest/7',
      vanishedAt: 1,
      missingSyncs: 1,
      remindersPaused: 'vanished' as const,
    };
    const deps = ports(
      async () => true,
      async () => false,
      { stored: [storedRound1, vanished], handoff: ['7'] },
    );
    const fenceCheck = vi.spyOn(deps.lease, 'fenceCheck');
    expect(await runSync(scheduled, deps, context)).toMatchObject({
      outcome: 'succeeded',
      counts: { contestsVanished: 1, contestsRechecked: 1 },
    });
    expect(fenceCheck.mock.calls.at(-1)?.[1]?.handoff).toEqual([]);
    expect(vi.mocked(deps.lease.release).mock.calls[0]?.[1].resolved).toEqual(['7']);
  });

  it('an undated reply that is not stale is dated by the fetch: the reply clock moves, so delivery sees fresh evidence', async () => {
    const deps = ports(
      async () => true,
      async () => false,
      { stored: [storedRound1] },
    );
    const before = Math.floor(Date.now() / 1000);
    expect(await runSync(scheduled, deps, context)).toMatchObject({ outcome: 'succeeded' });
    const actions = vi.mocked(deps.writer.commit).mock.calls.flatMap((call) => [...call[0]]);
    const clock = actions.find((action) => action.Put?.Item?.contestId === 0 || action.Update?.Key?.contestId === 0);
    expect(clock).toBeDefined();
    const madeAt = Number(clock?.Put?.Item?.replyMadeAt ?? clock?.Update?.ExpressionAttributeValues?.[':replyMadeAt']);
    expect(madeAt).toBeGreaterThanOrEqual(before);
    expect(madeAt).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it('a stale reply (made before the newest applied one) is never applied: counted, named, the handoff kept', async () => {
    const clock = { contestId: 0, replyMadeAt: 2_000_000_000 - 100, updatedAt: 'x' } as never;
    const deps = ports(
      async () => true,
      async () => false,
      { stored: [storedRound1, clock], handoff: ['1'] },
    );
    const old = { ...(await deps.fetchContests()).contests[0]!, startTimeSeconds: 2_000_000_000 + 99_999, relativeTimeSeconds: -200_000 };
    deps.fetchContests = async () => ({ contests: [old], listedIds: [1], invalid: 0, unscheduled: 0, attempts: 1, latencyMs: 5 });
    const summary = await runSync(scheduled, deps, context);
    expect(summary).toMatchObject({
      outcome: 'succeeded',
      counts: { repliesStale: 1, contestsWritten: 0 },
      stale: {
        madeAt: new Date((2_000_000_000 - 100_001) * 1000).toISOString(),
        newestApplied: new Date((2_000_000_000 - 100) * 1000).toISOString(),
      },
    });
    expect(deps.writer.commit).not.toHaveBeenCalled();
    expect(vi.mocked(deps.lease.release).mock.calls[0]?.[1].resolved).toEqual([]);
  });
});
