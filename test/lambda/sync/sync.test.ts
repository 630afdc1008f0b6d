/**
 * The sync on the package's wrapper with in-memory ports: the release paths that are hard to
 * provoke on a real engine (an answer lost on the way back, a release that keeps failing), where
 * the interval is marked done, dry runs, contention, races, and the order the act step writes in.
 * The real lease and store run in test/integration and test/multiprocess.
 */
import { describe, expect, it, vi } from 'vitest';
import { codeforcesReply } from '../../../lambda/sources/codeforces/source.js';
import type { ContestItem, ReminderItem, ReplyClockItem } from '../../../lambda/contests/model.js';
import { createHandler } from '../../../lambda/sync/handler.js';
import { DynamoContestStore } from '../../../lambda/sync/store.js';
import type { RunSummary } from '../../../lambda/sync/summary.js';
import type { StorePort } from '../../../lambda/sync/sync.js';
import {
  FencedWriteError,
  type FencedWriterPort,
  type HeldLease,
  type LeasePort,
  type TransactAction,
} from '@contest-sync/scheduled-singleton';

const START = 2_000_000_000;
const interval = '2026-11-29T14:00:00Z';

/** The contest the stand-in list holds, as stored after a sync: a run over it writes nothing. */
const storedRound1: ContestItem = {
  contestId: 1,
  platform: 'codeforces',
  name: 'Round 1',
  type: 'CF',
  phase: 'BEFORE',
  startTimeSeconds: START,
  durationSeconds: 7200,
  url: 'https://codeforces.com/contest/1',
  updatedAt: '2026-11-29T13:00:00.000Z',
  expiresAt: START + 7200 + 7 * 86_400,
  confirmedStart: START,
  dueStart: START,
};

/**
 * The reply clock as a sync just now left it: an undated reply is dated by our own fetch, so a run
 * over the same list within the skew has nothing to write, not even the clock.
 */
const clockNow = (): ReplyClockItem => ({ contestId: 0, replyMadeAt: Math.floor(Date.now() / 1000), updatedAt: 'x' });

interface Options {
  stored?: (ContestItem | ReplyClockItem)[];
  handoff?: string[];
  reminders?: ReminderItem[];
  entries?: { id: number; startTimeSeconds: number; relativeTimeSeconds?: number; name?: string }[];
  fail?: Error;
  env?: Record<string, string>;
}

/** The wrapper over in-memory ports: a lease and a writer as mocks, the store, the source. */
function harness(
  release: LeasePort['release'] = async () => true,
  releaseLanded: LeasePort['releaseLanded'] = async () => false,
  options: Options = {},
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
  const order: string[] = [];
  const writer = {
    commit: vi.fn<FencedWriterPort['commit']>(async (written, fence) => {
      fence(true);
      order.push(`commit ${written.map(kindOf).join(' ')}`);
      return { transactions: 1 };
    }),
  };
  const actions = new DynamoContestStore({} as never, { contests: 'contests', reminders: 'reminders' });
  const store: StorePort = {
    scanContests: async () => options.stored ?? [],
    remindersOf: vi.fn(async (contestId: number) => {
      order.push(`read reminders of ${contestId}`);
      return (options.reminders ?? []).filter((r) => r.contestId === contestId);
    }),
    contestAction: (write) => actions.contestAction(write),
    reminderAction: (update) => actions.reminderAction(update),
    clockAction: (clock, updatedAt) => actions.clockAction(clock, updatedAt),
  };
  const entries = options.entries ?? [{ id: 1, startTimeSeconds: START }];
  const handler = createHandler({
    env: {
      CONTESTS_TABLE_NAME: 'contests',
      REMINDERS_TABLE_NAME: 'reminders',
      COORDINATION_TABLE_NAME: 'coordination',
      LEASE_DURATION_SECONDS: '10',
      ...options.env,
    },
    coordination: { open: () => ({ lease, writer }) },
    store,
    fetchReply: async () => {
      if (options.fail !== undefined) throw options.fail;
      return codeforcesReply({
        contests: entries.map((e) => ({ name: `Round ${e.id}`, type: 'CF', phase: 'BEFORE', frozen: false, durationSeconds: 7200, ...e })),
        listedIds: entries.map((e) => e.id),
        invalid: 0,
        unscheduled: 0,
        attempts: 1,
        latencyMs: 5,
      });
    },
    write: () => undefined,
  });
  const invoke = async (event: unknown): Promise<RunSummary> => {
    try {
      return await handler(event, { getRemainingTimeInMillis: () => 60_000 });
    } catch (error) {
      const summary = (error as { summary?: RunSummary }).summary;
      if (summary === undefined) throw error;
      return summary;
    }
  };
  return { lease, writer, store, order, invoke };
}

function kindOf(action: TransactAction): string {
  if (action.Put !== undefined) return Number(action.Put.Item?.contestId) === 0 ? 'clock' : `put:${String(action.Put.Item?.contestId)}`;
  if (action.Delete !== undefined) return `delete:${String(action.Delete.Key?.contestId)}`;
  return `update:${String(action.Update?.Key?.contestId)}/${String(action.Update?.Key?.userId)}`;
}

const scheduled = { source: 'aws.events', 'detail-type': 'Scheduled Event', time: '2026-11-29T14:30:00Z' };
const lost = () => Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });

describe('the sync on the wrapper: release', () => {
  it('marks the interval done in the release and reports success', async () => {
    const h = harness(
      async () => true,
      async () => false,
      { stored: [storedRound1, clockNow()] },
    );
    const summary = await h.invoke(scheduled);
    expect(summary).toMatchObject({ outcome: 'succeeded', fence: 9, interval });
    expect(h.writer.commit).not.toHaveBeenCalled();
    expect(h.lease.release).toHaveBeenCalledWith(
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
    const h = harness(
      async () => {
        calls += 1;
        if (calls === 1) throw lost();
        return false;
      },
      async () => true,
    );
    expect(await h.invoke(scheduled)).toMatchObject({ outcome: 'succeeded' });
    expect(h.lease.releaseLanded).toHaveBeenCalledTimes(1);
  });

  it('an error, then a refusal, and the read-back shows another run: lease-lost, not success', async () => {
    let calls = 0;
    const release = async () => {
      calls += 1;
      if (calls === 1) throw lost();
      return false;
    };
    const h = harness(release, async () => false, { stored: [storedRound1, clockNow()] });
    expect(await h.invoke(scheduled)).toMatchObject({ outcome: 'failed', reason: 'lease-lost' });
  });

  it('a release that keeps failing after a sync that wrote nothing: failed (the interval is not marked done, so it is retried)', async () => {
    const failing = async (): Promise<boolean> => {
      throw lost();
    };
    const h = harness(failing, async () => false, { stored: [storedRound1, clockNow()] });
    const summary = await h.invoke(scheduled);
    expect(summary).toMatchObject({ outcome: 'failed', reason: 'lease', error: expect.stringMatching(/release failed: TimeoutError/) });
    expect(h.lease.release).toHaveBeenCalledTimes(3);
  });

  it('a release that keeps failing after the last data write marked the interval done: succeeded (the lease lapses)', async () => {
    const h = harness(async () => {
      throw lost();
    });
    expect(await h.invoke(scheduled)).toMatchObject({ outcome: 'succeeded', fence: 9 });
    expect(h.writer.commit).toHaveBeenCalled();
  });

  it('a dry run takes no lease and writes nothing, not even a run record', async () => {
    const h = harness();
    const summary = await h.invoke({ interval, dryRun: true });
    expect(summary).toMatchObject({ outcome: 'succeeded', dryRun: true, changes: { write: [expect.objectContaining({ contestId: 1 })] } });
    expect(summary.fence).toBeUndefined();
    expect(h.lease.acquire).not.toHaveBeenCalled();
    expect(h.lease.release).not.toHaveBeenCalled();
    expect(h.writer.commit).not.toHaveBeenCalled();
  });

  it('a contender that meets contention it cannot clear skips as lease-held with the reason, never fails', async () => {
    const h = harness();
    vi.mocked(h.lease.acquire).mockResolvedValueOnce({
      acquired: false,
      reason: 'lease-held',
      holder: 'unknown',
      fence: undefined,
      contention: 'DynamoDB contention did not clear within 4 attempts (last: TransactionConflictException)',
    });
    const summary = await h.invoke(scheduled);
    expect(summary).toMatchObject({
      outcome: 'skipped',
      reason: 'lease-held',
      holder: 'unknown',
      detail: expect.stringMatching(/TransactionConflict/),
    });
    expect(summary.holderExpiresAt).toBeUndefined();
    expect(summary.counts).toMatchObject({ contestsFetched: 0, heartbeats: 0 });
  });
});

describe('the sync on the wrapper: what it writes, in which order', () => {
  const moved = { ...storedRound1, startTimeSeconds: START - 3600, confirmedStart: START - 3600, dueStart: START - 3600 };
  const reminder = (userId: string, extra: Partial<ReminderItem> = {}): ReminderItem => ({
    contestId: 1,
    userId,
    minutesBefore: 10,
    remindAt: START - 3600 - 600,
    dueAt: START - 3600 - 600,
    dueStart: START - 3600,
    dueShard: 0,
    intent: `intent-${userId}`,
    expiresAt: storedRound1.expiresAt,
    ...extra,
  });

  it('the contest first (with its event, one transaction), then its reminders read and moved, then the clock marking the interval done', async () => {
    const h = harness(
      async () => true,
      async () => false,
      { stored: [moved, clockNow()], reminders: [reminder('a'), reminder('b')] },
    );
    const summary = await h.invoke(scheduled);
    expect(summary).toMatchObject({ outcome: 'succeeded', counts: { contestsWritten: 1, remindersMoved: 2, transactions: 3 } });
    expect(h.order).toEqual(['commit put:1', 'read reminders of 1', 'commit update:1/a update:1/b', 'commit clock']);
    // The move of a reminder is conditional on the intent as read: a reminder the app set again meanwhile is not re-timed by this read.
    const update = h.writer.commit.mock.calls[1]![0][0]!.Update!;
    expect(update.ConditionExpression).toContain('intent = :intent');
    expect(update.ExpressionAttributeValues).toMatchObject({ ':intent': 'intent-a' });
  });

  it('a moved reminder takes its byDue partition from the stack’s DUE_SHARDS (contestId mod it)', async () => {
    const h = harness(
      async () => true,
      async () => false,
      { stored: [moved, clockNow()], reminders: [reminder('a')], env: { DUE_SHARDS: '4' } },
    );
    expect(await h.invoke(scheduled)).toMatchObject({ outcome: 'succeeded', counts: { remindersMoved: 1 } });
    const update = h.writer.commit.mock.calls[1]![0][0]!.Update!;
    expect(update.ExpressionAttributeValues).toMatchObject({ ':dueShard': 1 });
  });

  it('a change no reminder follows: the contest, its event and the clock marking the interval done in one transaction', async () => {
    const h = harness(
      async () => true,
      async () => false,
      { stored: [storedRound1, clockNow()], entries: [{ id: 1, startTimeSeconds: START, name: 'Round 1 (renamed)' }] },
    );
    const fenceCheck = vi.spyOn(h.lease, 'fenceCheck');
    const summary = await h.invoke(scheduled);
    expect(summary).toMatchObject({ outcome: 'succeeded', counts: { contestsWritten: 1, transactions: 1 } });
    expect(h.order).toEqual(['commit put:1 clock']);
    expect(fenceCheck.mock.calls.at(-1)?.[1]).toMatchObject({ doneInterval: '2026-11-29T14:00:00Z' });
  });

  it('a reminder update refused by a race (a claim, the app) is dropped, the rest committed, its contest handed over with the clock', async () => {
    const h = harness(
      async () => true,
      async () => false,
      { stored: [moved, clockNow()], reminders: [reminder('a'), reminder('b')] },
    );
    let refusedOnce = false;
    h.writer.commit.mockImplementation(async (written, fence) => {
      const raced = written.find((action) => action.Update?.Key?.userId === 'a');
      if (!refusedOnce && raced !== undefined) {
        refusedOnce = true;
        throw new FencedWriteError('a write was refused by its condition', { refused: [raced] });
      }
      fence(true);
      h.order.push(`commit ${written.map(kindOf).join(' ')}`);
      return { transactions: 1 };
    });
    const fenceCheck = vi.spyOn(h.lease, 'fenceCheck');
    const summary = await h.invoke(scheduled);
    expect(summary).toMatchObject({ outcome: 'succeeded', counts: { remindersRaced: 1 } });
    expect(h.order).toEqual(['commit put:1', 'read reminders of 1', 'commit update:1/b', 'commit clock']);
    expect(fenceCheck.mock.calls.at(-1)?.[1]?.handoff).toContain('1');
  });

  it('resolves a handed-over contest once its reminders were read again', async () => {
    const vanished = { ...storedRound1, contestId: 7, url: 'x', vanishedAt: 1, missingSyncs: 1, remindersPaused: 'vanished' as const };
    delete (vanished as Partial<ContestItem>).dueStart;
    const h = harness(
      async () => true,
      async () => false,
      { stored: [storedRound1, vanished, clockNow()], handoff: ['7'] },
    );
    expect(await h.invoke(scheduled)).toMatchObject({ outcome: 'succeeded', counts: { contestsVanished: 1, contestsRechecked: 1 } });
    expect(vi.mocked(h.lease.release).mock.calls[0]?.[1].resolved).toEqual(['7']);
  });

  it('an undated reply that is not stale is dated by the fetch: the reply clock moves, so delivery sees fresh evidence', async () => {
    const h = harness(
      async () => true,
      async () => false,
      { stored: [storedRound1] },
    );
    const before = Math.floor(Date.now() / 1000);
    expect(await h.invoke(scheduled)).toMatchObject({ outcome: 'succeeded' });
    const clock = h.writer.commit.mock.calls.flatMap((call) => [...call[0]]).find((action) => action.Put?.Item?.contestId === 0);
    const madeAt = Number(clock?.Put?.Item?.replyMadeAt);
    expect(madeAt).toBeGreaterThanOrEqual(before);
    expect(madeAt).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it('a stale reply (made before the newest applied one) is never applied: counted, named, the handoff kept', async () => {
    const clock: ReplyClockItem = { contestId: 0, replyMadeAt: START - 100, updatedAt: 'x' };
    const h = harness(
      async () => true,
      async () => false,
      {
        stored: [{ ...storedRound1, remindersPaused: 'held' }, clock],
        handoff: ['1'],
        entries: [{ id: 1, startTimeSeconds: START + 99_999, relativeTimeSeconds: -200_000 }],
      },
    );
    const summary = await h.invoke(scheduled);
    expect(summary).toMatchObject({
      outcome: 'succeeded',
      counts: { repliesStale: 1, contestsWritten: 0 },
      stale: { madeAt: new Date((START - 100_001) * 1000).toISOString(), newestApplied: new Date((START - 100) * 1000).toISOString() },
    });
    expect(h.writer.commit).not.toHaveBeenCalled();
    expect(vi.mocked(h.lease.release).mock.calls[0]?.[1].resolved).toEqual([]);
  });

  it('the source failing: a contest with reminders due before the next sync could see a change is paused first, those reminders then, without marking the interval done; the run fails in phase codeforces', async () => {
    const { CodeforcesError } = await import('../../../lambda/sources/codeforces/errors.js');
    const fail = new CodeforcesError('http', 'Codeforces answered 503 three times', { attempts: 3, retryable: true });
    const soon = reminder('a', { dueAt: Math.floor(Date.now() / 1000) + 600 });
    const h = harness(
      async () => true,
      async () => false,
      { stored: [moved, clockNow()], reminders: [soon, reminder('b')], fail },
    );
    const fenceCheck = vi.spyOn(h.lease, 'fenceCheck');
    const summary = await h.invoke(scheduled);
    expect(summary).toMatchObject({ outcome: 'failed', reason: 'codeforces', counts: { remindersPaused: 1, transactions: 3 } });
    expect(h.order).toEqual(['read reminders of 1', 'commit put:1', 'commit update:1/a', 'commit clock']);
    const paused = h.writer.commit.mock.calls[0]![0][0]!.Put!.Item!;
    expect(paused).toMatchObject({ remindersPaused: 'held' });
    expect(paused.dueStart).toBeUndefined();
    expect(fenceCheck.mock.calls.every(([, extras]) => extras?.doneInterval === undefined)).toBe(true);
  });
});
