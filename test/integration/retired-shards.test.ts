/**
 * A lowered DUE_SHARDS on DynamoDB Local, tables from the synthesized template (docs/delivery.md,
 * "Changing the setting"): reminders set while the stack ran 4 byDue shards, then the stack on 1.
 * The delivery job of the new setting reads only its own partition, so rows left in the retired
 * ones wait for the sync of the new setting, which moves them (and sweeps once more on its
 * following run, for a row a writer still on the old setting put in a retired partition
 * meanwhile). Each reminder is sent exactly once, and none before its due time: the jobs run on a
 * clock moved to each due time in turn.
 */
import { describe, expect, it } from 'vitest';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { EVENT_SOURCES } from '../../lambda/contract.js';
import { DUE_INDEX } from '../../lambda/delivery/dynamo-due.js';
import { replyClockId } from '../../lambda/contests/model.js';
import { createReminderClient } from '../../lambda/reminders/index.js';
import { dueShardOf } from '../../lambda/reminders/table.js';
import { apiContest, scanAll } from '../support/contests.js';
import { deliverAt, outboxEvents } from '../support/delivery.js';
import { localHandler } from '../support/handler.js';
import { cf } from '../support/ids.js';
import { useWorld, type World } from '../support/world.js';

let world: World;
useWorld('retired-shards', (w) => {
  world = w;
});

const T0 = Date.now();
const START = Math.floor(T0 / 1000) + 2 * 3600;
const CONTEST = 2105;

/** The contest as Codeforces lists it at `atMs` (the same start; the reply dated then). */
const listedAt = (atMs: number) => [
  { ...apiContest(CONTEST, 2, {}, T0), relativeTimeSeconds: Math.floor(atMs / 1000) - START, startTimeSeconds: START },
];

/** Users whose bucket falls in each shard of 4, `perShard` each: `shard` → user ids. */
function usersByShard(perShard: number): string[][] {
  const byShard: string[][] = [[], [], [], []];
  for (let i = 0; byShard.some((users) => users.length < perShard); i += 1) {
    const user = `user-${i}`;
    const users = byShard[dueShardOf(user, 4)]!;
    if (users.length < perShard) users.push(user);
  }
  return byShard;
}

/** The sync of a stack with `dueShards`, on a clock `offsetMs` ahead, Codeforces' reply made then. */
async function sync(dueShards: number, offsetMs: number) {
  world.standin.enqueue({ body: { status: 'OK', result: listedAt(Date.now() + offsetMs) } });
  const { invoke } = localHandler(world.tables, world.standin.baseUrl, {
    env: { DUE_SHARDS: String(dueShards) },
    now: () => Date.now() + offsetMs,
  });
  const invoked = await invoke({});
  expect(invoked.summary?.outcome, JSON.stringify(invoked.error?.message)).toBe('succeeded');
  return invoked.summary!;
}

/** The one delivery job of a stack with DUE_SHARDS = 1, on a clock `offsetMs` ahead. */
const deliver = (offsetMs: number) => deliverAt(world.tables, offsetMs, { DUE_SHARDS: '1' });

/** The write path of a stack with `dueShards` (the API function's environment). */
const writePath = (dueShards: number) =>
  createReminderClient({
    dynamo: world.tables.doc,
    tables: { contests: world.tables.names.contests, reminders: world.tables.names.reminders },
    dueShards,
  });

/** The users sent a ReminderDue so far, once per event, sorted. */
async function sentUsers(): Promise<string[]> {
  return (await outboxEvents(world.tables, EVENT_SOURCES.reminders)).map((event) => String(event.detail.userId)).sort();
}

/** The due rows of one byDue partition. */
async function dueIn(shard: number): Promise<string[]> {
  const page = await world.tables.doc.send(
    new QueryCommand({
      TableName: world.tables.names.reminders,
      IndexName: DUE_INDEX,
      KeyConditionExpression: 'dueShard = :shard',
      ExpressionAttributeValues: { ':shard': shard },
    }),
  );
  return (page.Items ?? []).map((item) => String(item.userId)).sort();
}

async function clock(): Promise<Record<string, unknown> | undefined> {
  const items = await scanAll(world.tables.doc, world.tables.names.contests);
  return items.find((item) => item.contestId === replyClockId('codeforces'));
}

/** Epoch ms offsets from now at which a lead of `minutes` is due (plus a minute). */
const dueOffset = (minutes: number) => (START - 60 * minutes + 60) * 1000 - T0;

describe('DUE_SHARDS lowered from 4 to 1 with reminders in the retired byDue partitions', () => {
  it('the sync of the new setting moves them, the following sync sweeps once more, and each is sent once, none early', async () => {
    // The stack on 4 shards: its sync stores the contest and records the setting it ensured.
    await sync(4, 0);
    expect(await clock()).toMatchObject({ dueShards: 4 });
    // Two users in every shard: one reminded 60 minutes before the start, one 30.
    const [early, late] = [0, 1].map((k) => usersByShard(2).map((users) => users[k]!));
    for (const userId of early!) await writePath(4).setReminder({ contestId: cf(CONTEST), userId, minutesBefore: 60 });
    for (const userId of late!) await writePath(4).setReminder({ contestId: cf(CONTEST), userId, minutesBefore: 30 });
    for (let shard = 0; shard < 4; shard += 1) expect(await dueIn(shard)).toEqual([early![shard]!, late![shard]!].sort());

    // The stack on 1 shard, before its sync has run: its job reads shard 0 only, and sends only what is due.
    await deliver(dueOffset(60));
    expect(await sentUsers()).toEqual([early![0]]);

    // The sync of the new setting moves every row of shards 1..3 into shard 0 and records the lowered setting.
    expect((await sync(1, dueOffset(60))).counts).toMatchObject({ remindersResharded: 6 });
    expect(await clock()).toMatchObject({ dueShards: 1, retiredDueShards: 4 });
    for (const shard of [1, 2, 3]) expect(await dueIn(shard)).toEqual([]);

    // Due now: the 60-minute leads of the moved rows, once; the 30-minute leads are not due yet.
    await deliver(dueOffset(60));
    expect(await sentUsers()).toEqual([...early!].sort());
    await deliver(dueOffset(60));
    expect(await sentUsers()).toEqual([...early!].sort());

    // A writer still on the old setting (an API container of the previous deploy) puts a row in shard 3.
    const straggler = usersByShard(3)[3]![2]!;
    await writePath(4).setReminder({ contestId: cf(CONTEST), userId: straggler, minutesBefore: 45 });
    expect(await dueIn(3)).toEqual([straggler]);
    // The following sync sweeps once more and then records nothing retired.
    expect((await sync(1, dueOffset(50))).counts).toMatchObject({ remindersResharded: 1 });
    expect(await dueIn(3)).toEqual([]);
    expect(await clock()).toMatchObject({ dueShards: 1 });
    expect((await clock())!.retiredDueShards).toBeUndefined();

    // Not before its due time: the 45-minute lead waits for its minute, the 30-minute ones for theirs.
    await deliver(dueOffset(50));
    expect(await sentUsers()).toEqual([...early!].sort());
    await deliver(dueOffset(45));
    expect(await sentUsers()).toEqual([...early!, straggler].sort());
    await deliver(dueOffset(30));
    await deliver(dueOffset(30));
    const everyone = [...early!, ...late!, straggler].sort();
    expect(await sentUsers()).toEqual(everyone);
    expect(new Set(everyone).size).toBe(9);
    for (const shard of [0, 1, 2, 3]) expect(await dueIn(shard)).toEqual([]);

    // An unchanged setting sweeps nothing: the next sync moves no row.
    expect((await sync(1, dueOffset(25))).counts).toMatchObject({ remindersResharded: 0 });
  });
});
