/**
 * The sync on the package's wrapper with in-memory ports: the release paths that are hard to
 * provoke on a real engine (an answer lost on the way back, a release that keeps failing), where
 * the interval is marked done, dry runs, contention, races, and the order the act step writes in.
 * The real lease and store run in test/integration and test/multiprocess.
 */
import { describe, expect, it, vi } from 'vitest';
import { codeforcesReply } from '../../../lambda/sources/codeforces/source.js';
import type { ContestItem, ReminderItem, ReplyClockItem } from '../../../lambda/contests/model.js';
import { createHandler } from '../../../lambda/sources/codeforces/handler.js';
import { DynamoContestStore } from '../../../lambda/sync/store.js';
import type { RunSummary } from '../../../lambda/sync/summary.js';
import type { StorePort } from '../../../lambda/sync/sync.js';
import type { RetiredRow } from '../../../lambda/sync/store.js';
import { bucketOf, contestKeyOf } from '../../../lambda/reminders/table.js';
import { platformIdOf } from '../../../lambda/sources/ids.js';
import { cf } from '../../support/ids.js';
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
  contestId: cf(1),
  platform: 'codeforces',
  platformId: '1',
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
 * over the same list within the skew has nothing to write, not even the clock. It records the
 * byDue setting it ensured (1, the default): no retired shard to sweep.
 */
const CLOCK = 'clock#codeforces';
const clockNow = (): ReplyClockItem => ({ contestId: CLOCK, replyMadeAt: Math.floor(Date.now() / 1000), updatedAt: 'x', dueShards: 1 });

interface Options {
  stored?: (ContestItem | ReplyClockItem)[];
  handoff?: string[];
  reminders?: ReminderItem[];
  /** Rows the byDue index holds in each retired partition. */
  retired?: Record<number, RetiredRow[]>;
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
  const order: string[] = [];
  const lease: LeasePort = {
    acquire: vi.fn(async () => ({ acquired: true as const, lease: held })),
    renew: vi.fn(async (l: HeldLease) => l),
    // The writes a release carries (the reply clock of a run that wrote nothing else) are named in the order.
    release: vi.fn<LeasePort['release']>(async (l, releaseOptions, signal) => {
      const carried = releaseOptions?.actions ?? [];
      if (carried.length > 0) order.push(`release with ${kindsOf(carried)}`);
      return release(l, releaseOptions, signal);
    }),
    releaseLanded: vi.fn(releaseLanded),
    fenceCheck: () => ({ ConditionCheck: { TableName: 'coordination', Key: { pk: 'lease' }, ConditionExpression: 'x' } }),
  };
  const writer = {
    commit: vi.fn<FencedWriterPort['commit']>(async (written, fence) => {
      fence(true);
      order.push(`commit ${kindsOf(written)}`);
      return { transactions: 1 };
    }),
  };
  const actions = new DynamoContestStore({} as never, { contests: 'contests', reminders: 'reminders' });
  const store: StorePort = {
    scanContests: async () => options.stored ?? [],
    remindersOf: vi.fn(async (contestId: string) => {
      order.push(`read reminders of ${platformIdOf(contestId)}`);
      return (options.reminders ?? []).filter((r) => r.contestId === contestId);
    }),
    contestActions: (write) => actions.contestActions(write),
    reminderAction: (update) => actions.reminderAction(update),
    clockAction: (platform, clock, updatedAt) => actions.clockAction(platform, clock, updatedAt),
    retiredRows: vi.fn(async (shard: number) => {
      order.push(`sweep ${shard}`);
      return options.retired?.[shard] ?? [];
    }),
    shardMoveAction: (row, dueShards) => actions.shardMoveAction(row, dueShards),
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

/** Every action the run wrote: its fenced commits, then what its release carried. */
function writtenActions(h: ReturnType<typeof harness>): TransactAction[] {
  return [
    ...h.writer.commit.mock.calls.flatMap((call) => [...call[0]]),
    ...vi.mocked(h.lease.release).mock.calls.flatMap((call) => [...(call[1]?.actions ?? [])]),
  ];
}

/** An action as the order names it: the contest by its Codeforces id, a reminder by its contest and user. */
/** The actions of one write, a contest's 16 bucket gates named once (`gates:` put, `ungates:` deleted). */
function kindsOf(actions: readonly TransactAction[]): string {
  const kinds: string[] = [];
  for (const kind of actions.map(kindOf))
    if (!(kind.startsWith('gates:') || kind.startsWith('ungates:')) || kinds.at(-1) !== kind) kinds.push(kind);
  return kinds.join(' ');
}

function kindOf(action: TransactAction): string {
  const gate = String(action.Put?.Item?.contestId ?? action.Delete?.Key?.contestId);
  if (gate.startsWith('gate#')) return `${action.Put !== undefined ? 'gates' : 'ungates'}:${platformIdOf(gate.slice(5).split('#')[0]!)}`;
  if (action.Put !== undefined)
    return action.Put.Item?.contestId === CLOCK ? 'clock' : `put:${platformIdOf(String(action.Put.Item?.contestId))}`;
  if (action.Delete !== undefined) return `delete:${platformIdOf(String(action.Delete.Key?.contestId))}`;
  const contest = String(action.Update?.Key?.contestKey).split('#')[0]!;
  return `${action.Update?.UpdateExpression === 'SET dueShard = :shard' ? 'move' : 'update'}:${platformIdOf(contest)}/${String(action.Update?.Key?.userId)}`;
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
    expect(summary).toMatchObject({
      outcome: 'succeeded',
      dryRun: true,
      changes: { write: [expect.objectContaining({ contestId: cf(1) })] },
    });
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
    contestId: cf(1),
    contestKey: contestKeyOf(cf(1), userId),
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
    // The contest commits with its 16 bucket gates (a new gate), before its reminders are read.
    expect(h.order).toEqual(['commit put:1 gates:1', 'read reminders of 1', 'commit update:1/a update:1/b', 'commit clock']);
    // The move of a reminder is conditional on the intent as read: a reminder the app set again meanwhile is not re-timed by this read.
    const update = h.writer.commit.mock.calls[1]![0][0]!.Update!;
    expect(update.ConditionExpression).toContain('intent = :intent');
    expect(update.ExpressionAttributeValues).toMatchObject({ ':intent': 'intent-a' });
  });

  it('a moved reminder takes its byDue partition from the stack’s DUE_SHARDS (its bucket mod it)', async () => {
    const h = harness(
      async () => true,
      async () => false,
      { stored: [moved, clockNow()], reminders: [reminder('a')], env: { DUE_SHARDS: '4' } },
    );
    expect(await h.invoke(scheduled)).toMatchObject({ outcome: 'succeeded', counts: { remindersMoved: 1 } });
    const update = h.writer.commit.mock.calls[1]![0][0]!.Update!;
    expect(update.ExpressionAttributeValues).toMatchObject({ ':dueShard': bucketOf('a') % 4 });
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
      h.order.push(`commit ${kindsOf(written)}`);
      return { transactions: 1 };
    });
    const fenceCheck = vi.spyOn(h.lease, 'fenceCheck');
    const summary = await h.invoke(scheduled);
    expect(summary).toMatchObject({ outcome: 'succeeded', counts: { remindersRaced: 1 } });
    expect(h.order).toEqual(['commit put:1 gates:1', 'read reminders of 1', 'commit update:1/b', 'commit clock']);
    expect(fenceCheck.mock.calls.at(-1)?.[1]?.handoff).toContain(cf(1));
  });

  it('resolves a handed-over contest once its reminders were read again', async () => {
    const vanished = {
      ...storedRound1,
      contestId: cf(7),
      platformId: '7',
      url: 'x',
      vanishedAt: 1,
      missingSyncs: 1,
      remindersPaused: 'vanished' as const,
    };
    delete (vanished as Partial<ContestItem>).dueStart;
    const h = harness(
      async () => true,
      async () => false,
      { stored: [storedRound1, vanished, clockNow()], handoff: [cf(7)] },
    );
    expect(await h.invoke(scheduled)).toMatchObject({ outcome: 'succeeded', counts: { contestsVanished: 1, contestsRechecked: 1 } });
    expect(vi.mocked(h.lease.release).mock.calls[0]?.[1].resolved).toEqual([cf(7)]);
  });

  it('an undated reply that is not stale is dated by the fetch: the reply clock moves, so delivery sees fresh evidence', async () => {
    const h = harness(
      async () => true,
      async () => false,
      { stored: [storedRound1] },
    );
    const before = Math.floor(Date.now() / 1000);
    expect(await h.invoke(scheduled)).toMatchObject({ outcome: 'succeeded' });
    const clock = writtenActions(h).find((action) => action.Put?.Item?.contestId === CLOCK);
    const madeAt = Number(clock?.Put?.Item?.replyMadeAt);
    expect(madeAt).toBeGreaterThanOrEqual(before);
    expect(madeAt).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it('a stale reply (made before the newest applied one) is never applied: counted, named, the handoff kept', async () => {
    const clock: ReplyClockItem = { contestId: CLOCK, replyMadeAt: START - 100, updatedAt: 'x', dueShards: 1 };
    const h = harness(
      async () => true,
      async () => false,
      {
        stored: [{ ...storedRound1, remindersPaused: 'held' }, clock],
        handoff: [cf(1)],
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
    // The pause removes the gate: the contest and its bucket gates' deletes in one transaction.
    expect(h.order).toEqual(['read reminders of 1', 'commit put:1 ungates:1', 'commit update:1/a', 'commit clock']);
    const paused = h.writer.commit.mock.calls[0]![0][0]!.Put!.Item!;
    expect(paused).toMatchObject({ remindersPaused: 'held' });
    expect(paused.dueStart).toBeUndefined();
    expect(fenceCheck.mock.calls.every(([, extras]) => extras?.doneInterval === undefined)).toBe(true);
  });
});

describe('the sync on the wrapper: rows a lowered DUE_SHARDS left in retired byDue partitions', () => {
  const clock = (recorded: Partial<ReplyClockItem>): ReplyClockItem => ({ ...clockNow(), ...recorded });
  const clockWritten = (h: ReturnType<typeof harness>) =>
    writtenActions(h).find((action) => action.Put?.Item?.contestId === CLOCK)?.Put?.Item;
  const row = (userId: string, dueShard: number): RetiredRow => ({ contestKey: contestKeyOf(cf(1), userId), userId, dueShard });

  it('lowered from 4 to 1: sweeps partitions 1 to 3, moves each row found into its current one, and records the setting (and the one before, for the next run)', async () => {
    const h = harness(
      async () => true,
      async () => false,
      { stored: [storedRound1, clock({ dueShards: 4 })], retired: { 2: [row('u', 2)] } },
    );
    expect(await h.invoke(scheduled)).toMatchObject({ outcome: 'succeeded', counts: { remindersResharded: 1 } });
    expect(h.order).toEqual(['sweep 1', 'sweep 2', 'commit move:1/u', 'sweep 3', 'commit clock']);
    const move = h.writer.commit.mock.calls[0]![0][0]!.Update!;
    expect(move).toMatchObject({
      Key: { contestKey: contestKeyOf(cf(1), 'u'), userId: 'u' },
      ConditionExpression: 'dueShard = :seen AND attribute_exists(dueAt)',
      ExpressionAttributeValues: { ':shard': 0, ':seen': 2 },
    });
    expect(clockWritten(h)).toMatchObject({ dueShards: 1, retiredDueShards: 4 });
  });

  it('the following run sweeps once more (writers still on the old setting during a deploy), then records nothing retired', async () => {
    const h = harness(
      async () => true,
      async () => false,
      { stored: [storedRound1, clock({ dueShards: 1, retiredDueShards: 4 })] },
    );
    expect(await h.invoke(scheduled)).toMatchObject({ outcome: 'succeeded', counts: { remindersResharded: 0 } });
    // Nothing else written: the clock rides in the release (one request fewer).
    expect(h.order).toEqual(['sweep 1', 'sweep 2', 'sweep 3', 'release with clock']);
    expect(clockWritten(h)).toMatchObject({ dueShards: 1 });
    expect(clockWritten(h)?.retiredDueShards).toBeUndefined();
  });

  it('an unchanged setting sweeps nothing and writes nothing: no extra request', async () => {
    const h = harness(
      async () => true,
      async () => false,
      { stored: [storedRound1, clock({ dueShards: 1 })] },
    );
    expect(await h.invoke(scheduled)).toMatchObject({ outcome: 'succeeded' });
    expect(h.order).toEqual([]);
    expect(h.store.retiredRows).not.toHaveBeenCalled();
  });

  it('a raised setting sweeps nothing; a clock that never recorded one sweeps every partition above the setting', async () => {
    const raised = harness(
      async () => true,
      async () => false,
      { stored: [storedRound1, clock({ dueShards: 2 })], env: { DUE_SHARDS: '4' } },
    );
    expect(await raised.invoke(scheduled)).toMatchObject({ outcome: 'succeeded' });
    expect(raised.store.retiredRows).not.toHaveBeenCalled();
    expect(clockWritten(raised)).toMatchObject({ dueShards: 4 });
    const { dueShards: _recorded, ...before } = clockNow();
    const unknown = harness(
      async () => true,
      async () => false,
      { stored: [storedRound1, before], env: { DUE_SHARDS: '4' } },
    );
    expect(await unknown.invoke(scheduled)).toMatchObject({ outcome: 'succeeded' });
    expect(unknown.order.filter((step) => step.startsWith('sweep'))).toEqual(Array.from({ length: 12 }, (_, i) => `sweep ${i + 4}`));
  });

  it("a platform's first sync (no clock, no stored contest: no due row anywhere) sweeps nothing and records the setting; the next run writes nothing", async () => {
    const first = harness(
      async () => true,
      async () => false,
      { stored: [], env: { DUE_SHARDS: '2' } },
    );
    expect(await first.invoke(scheduled)).toMatchObject({ outcome: 'succeeded' });
    expect(first.store.retiredRows).not.toHaveBeenCalled();
    expect(first.order.filter((step) => step.startsWith('sweep'))).toEqual([]);
    const recorded = clockWritten(first);
    expect(recorded).toMatchObject({ dueShards: 2 });
    expect(recorded?.retiredDueShards).toBeUndefined();
    // A clock copied without a record, or contests stored without a clock: rows may be anywhere.
    const orphans = harness(
      async () => true,
      async () => false,
      { stored: [storedRound1], env: { DUE_SHARDS: '2' } },
    );
    expect(await orphans.invoke(scheduled)).toMatchObject({ outcome: 'succeeded' });
    expect(orphans.order.filter((step) => step.startsWith('sweep'))).toEqual(Array.from({ length: 14 }, (_, i) => `sweep ${i + 2}`));
  });

  it('a move refused because the row changed meanwhile (claimed, moved, set again) is dropped, the others committed', async () => {
    const h = harness(
      async () => true,
      async () => false,
      { stored: [storedRound1, clock({ dueShards: 2 })], retired: { 1: [row('a', 1), row('b', 1)] } },
    );
    let refusedOnce = false;
    h.writer.commit.mockImplementation(async (written, fence) => {
      const raced = written.find((action) => action.Update?.Key?.userId === 'a');
      if (!refusedOnce && raced !== undefined) {
        refusedOnce = true;
        throw new FencedWriteError('a write was refused by its condition', { refused: [raced] });
      }
      fence(true);
      h.order.push(`commit ${kindsOf(written)}`);
      return { transactions: 1 };
    });
    expect(await h.invoke(scheduled)).toMatchObject({ outcome: 'succeeded', counts: { remindersResharded: 1, remindersRaced: 0 } });
    expect(h.order).toEqual(['sweep 1', 'commit move:1/b', 'commit clock']);
  });
});
