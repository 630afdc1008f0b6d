/**
 * What an unchanged hourly sync asks of DynamoDB, counted on the wire by the counting proxy
 * (local/dynamo-proxy.ts) in front of DynamoDB Local: the acquire, the read of what is stored, and
 * the release — which carries the reply clock, the run record and the interval marked done in one
 * fenced transaction (docs/performance.md, "Steady state").
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { replyClockId } from '../../lambda/contests/model.js';
import { startDynamoProxy, type DynamoProxy } from '../../local/dynamo-proxy.js';
import type { CodeforcesStandin } from '../../local/codeforces-standin.js';
import { snapshot } from '../support/contests.js';
import { localHandler } from '../support/handler.js';
import { scheduledEvent } from '../support/processes.js';
import type { TestTables } from '../support/tables.js';
import { useWorld } from '../support/world.js';

let standin: CodeforcesStandin;
let tables: TestTables;
let proxy: DynamoProxy;

useWorld('unchanged-sync', (world) => {
  ({ standin, tables } = world);
});

beforeEach(async () => {
  proxy = await startDynamoProxy(tables.endpoint);
});

afterEach(async () => {
  await proxy.close();
});

const clockKey = () => ({ contestId: replyClockId('codeforces') });
const readClock = async () =>
  (await tables.doc.send(new GetCommand({ TableName: tables.names.contests, Key: clockKey(), ConsistentRead: true }))).Item;
const thisHour = () => new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');

describe('an unchanged hourly sync', () => {
  it('makes 3 requests: acquire, the Scan of what is stored, and a release that writes the reply clock', async () => {
    const { invoke } = localHandler({ ...tables, endpoint: proxy.endpoint }, standin.baseUrl);
    // The first sync stores the list; the second sweeps the byDue partitions above the setting once
    // more (a clock that recorded none: retired-shards.ts), so that the byDue setting is recorded as ensured.
    expect((await invoke({})).summary).toMatchObject({ outcome: 'succeeded' });
    expect((await invoke({})).summary).toMatchObject({ outcome: 'succeeded' });
    // An hour later: the same list, and a reply clock an hour old (the hourly run records the reply as applied).
    const before = await readClock();
    const hourOld = Number(before?.replyMadeAt) - 3_600;
    await tables.doc.send(
      new UpdateCommand({
        TableName: tables.names.contests,
        Key: clockKey(),
        UpdateExpression: 'SET replyMadeAt = :old',
        ExpressionAttributeValues: { ':old': hourOld },
      }),
    );
    const stored = await snapshot(tables);
    proxy.reset();

    const { summary } = await invoke(scheduledEvent(thisHour()));

    expect(summary).toMatchObject({ outcome: 'succeeded', source: 'schedule' });
    expect(summary?.counts).toMatchObject({ contestsWritten: 0, transactions: 0 });
    // On the wire: acquire, Scan, and one TransactWriteItems (the release, the run record, the clock).
    expect(Object.fromEntries(proxy.counts)).toEqual({ UpdateItem: 1, Scan: 1, TransactWriteItems: 1 });
    expect(proxy.total()).toBe(3);
    // The clock was written all the same: the reply is recorded as applied, so a stale one is known later.
    expect(Number((await readClock())?.replyMadeAt)).toBeGreaterThan(hourOld + 3_000);
    expect(await snapshot(tables)).toEqual(stored);
    // And the interval is done: its duplicate is refused by the acquire alone.
    proxy.reset();
    expect((await invoke(scheduledEvent(thisHour()))).summary).toMatchObject({ outcome: 'skipped', reason: 'already-done' });
    expect(Object.fromEntries(proxy.counts)).toEqual({ UpdateItem: 1 });
  });
});
