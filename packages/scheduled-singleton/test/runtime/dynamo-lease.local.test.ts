/**
 * The lease against a real DynamoDB engine (DynamoDB Local), with an injected clock so that
 * expiry is exact. Each case is one of the edges of the lease rules in docs/design.md.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import {
  DynamoLease,
  LeaseLostError,
  itemSizeBytes,
  leaseTiming,
  ledgerRetentionMs,
  ledgerSlots,
  slotOf,
  type LedgerForms,
} from '@contest-sync/scheduled-singleton';
import { localDynamoClient } from '../../../../local/dynamodb-local.js';
import { createTestTables, type TestTables } from '../../../../test/support/tables.js';

let tables: TestTables;
let clock = 1_000_000;
const timing = leaseTiming(10);
let key = 0;

function newLease(): DynamoLease {
  key += 1;
  return new DynamoLease({ doc: tables.doc, table: tables.names.coordination, timing, now: () => clock, key: `lease#test-${key}` });
}

async function leaseItem(lease: DynamoLease) {
  const out = await tables.doc.send(new GetCommand({ TableName: tables.names.coordination, Key: { pk: lease.key }, ConsistentRead: true }));
  return out.Item;
}

beforeAll(async () => {
  tables = await createTestTables('lease');
});

describe('DynamoLease', () => {
  it('acquires a free lease in one write, with fence 1, expiry and a ttl in epoch seconds', async () => {
    const lease = newLease();
    const got = await lease.acquire('run-a', 'console', undefined);
    expect(got).toMatchObject({ acquired: true, lease: { runId: 'run-a', fence: 1, expiresAtMs: clock + 10_000 } });
    const item = await leaseItem(lease);
    expect(item).toMatchObject({ holder: 'run-a', fence: 1, expiresAtMs: clock + 10_000, source: 'console' });
    expect(item?.ttl).toBeGreaterThan(Math.ceil((clock + 10_000) / 1000));
  });

  it('treats its own retried acquisition (first answer lost, SDK retried) as acquired, not as held', async () => {
    const lease = newLease();
    const first = await lease.acquire('run-a', 'console', undefined);
    const retried = await lease.acquire('run-a', 'console', undefined);
    expect(retried).toEqual(first);
    expect(await leaseItem(lease)).toMatchObject({ holder: 'run-a', fence: 1 });
  });

  it('tells a contender who holds the lease and until when, from the failed write', async () => {
    const lease = newLease();
    await lease.acquire('run-a', 'console', undefined);
    const refused = await lease.acquire('run-b', 'console', undefined);
    expect(refused).toEqual({ acquired: false, reason: 'lease-held', holder: 'run-a', expiresAtMs: clock + 10_000, fence: 1 });
  });

  it('treats the expiry instant as expired, and a millisecond before as held', async () => {
    const lease = newLease();
    const start = clock;
    await lease.acquire('run-a', 'console', undefined);
    clock = start + 10_000 - 1;
    expect((await lease.acquire('run-b', 'console', undefined)).acquired).toBe(false);
    clock = start + 10_000;
    const taken = await lease.acquire('run-b', 'console', undefined);
    expect(taken).toMatchObject({ acquired: true, lease: { runId: 'run-b', fence: 2 } });
    clock = start;
  });

  it('does not let a run renew after its lease expired, even if nobody took it', async () => {
    const lease = newLease();
    const start = clock;
    const got = await lease.acquire('run-a', 'console', undefined);
    if (!got.acquired) throw new Error('expected the lease');
    clock = start + 10_000;
    await expect(lease.renew(got.lease)).rejects.toThrow(LeaseLostError);
    await expect(lease.renew(got.lease)).rejects.toThrow(/expired 0 ms ago/);
    clock = start;
  });

  it('renews idempotently: a retry after a renewal that landed but timed out still succeeds', async () => {
    const lease = newLease();
    const got = await lease.acquire('run-a', 'console', undefined);
    if (!got.acquired) throw new Error('expected the lease');
    clock += 1_000;
    await lease.renew(got.lease); // landed; the caller never heard back
    clock += 10;
    const again = await lease.renew(got.lease);
    expect(again.expiresAtMs).toBe(clock + 10_000);
  });

  it('never releases a lease another run took over, and the loser learns who has it', async () => {
    const lease = newLease();
    const start = clock;
    const first = await lease.acquire('run-a', 'console', undefined);
    if (!first.acquired) throw new Error('expected the lease');
    clock = start + 11_000;
    const second = await lease.acquire('run-b', 'console', undefined);
    expect(second.acquired).toBe(true);
    expect(await lease.release(first.lease)).toBe(false);
    expect(await leaseItem(lease)).toMatchObject({ holder: 'run-b', fence: 2 });
    await expect(lease.renew(first.lease)).rejects.toThrow(/taken over by run-b \(fence 2\)/);
    clock = start;
  });

  it('remembers a succeeded interval so that its duplicates are refused in one request', async () => {
    const lease = newLease();
    const interval = new Date(clock).toISOString().replace('.000Z', 'Z');
    const got = await lease.acquire('run-a', 'schedule', interval);
    if (!got.acquired) throw new Error('expected the lease');
    expect(await lease.release(got.lease, { doneInterval: interval })).toBe(true);
    expect(await lease.acquire('run-b', 'schedule', interval)).toEqual({ acquired: false, reason: 'already-done', interval });
    // a console run is not deduplicated by interval
    expect((await lease.acquire('run-c', 'console', undefined)).acquired).toBe(true);
  });

  it('can tell afterwards whether its release landed (for a release whose answer was lost)', async () => {
    const lease = newLease();
    const got = await lease.acquire('run-a', 'console', undefined);
    if (!got.acquired) throw new Error('expected the lease');
    expect(await lease.releaseLanded(got.lease)).toBe(false);
    await lease.release(got.lease, { lastRun: { runId: 'run-a', fence: got.lease.fence } });
    expect(await lease.releaseLanded(got.lease)).toBe(true);
    expect(await lease.release(got.lease)).toBe(false); // the retry is refused: holder is gone
  });

  it('fences data writes: a transaction with the check commits only for the current holder', async () => {
    const lease = newLease();
    const start = clock;
    const first = await lease.acquire('run-a', 'console', undefined);
    if (!first.acquired) throw new Error('expected the lease');
    const put = (id: string) => ({
      Put: { TableName: tables.names.contests, Item: { contestId: id, platform: 'codeforces', startTimeSeconds: 1 } },
    });
    await tables.doc.send(new TransactWriteCommand({ TransactItems: [lease.fenceCheck(first.lease), put('fenced:900001')] }));
    clock = start + 10_000; // expired: even with nobody else holding it, the old holder may not write
    await expect(
      tables.doc.send(new TransactWriteCommand({ TransactItems: [lease.fenceCheck(first.lease), put('fenced:900002')] })),
    ).rejects.toMatchObject({ name: 'TransactionCanceledException' });
    const got = await tables.doc.send(new GetCommand({ TableName: tables.names.contests, Key: { contestId: 'fenced:900002' } }));
    expect(got.Item).toBeUndefined();
    clock = start;
  });

  it('keeps the fence increasing even if the lease item was written by hand without one', async () => {
    const lease = newLease();
    await tables.doc.send(new PutCommand({ TableName: tables.names.coordination, Item: { pk: lease.key, note: 'manual' } }));
    const got = await lease.acquire('run-a', 'console', undefined);
    expect(got).toMatchObject({ acquired: true, lease: { fence: 1 } });
  });
});

describe('DynamoLease: the interval ledger on the item', () => {
  const HOUR = 3_600_000;
  const hourOf = (ms: number) => new Date(Math.floor(ms / HOUR) * HOUR).toISOString().replace('.000Z', 'Z');
  let now = Date.parse('2026-11-30T12:07:00Z');
  const hourly = () => {
    key += 1;
    return new DynamoLease({
      doc: tables.doc,
      table: tables.names.coordination,
      timing,
      now: () => now,
      key: `lease#ledger-${key}`,
      ledgerRetentionMs: ledgerRetentionMs(60),
    });
  };

  it('reads a lease item the earlier release wrote (7 days of hourly slots in a number set) and converts it at the next interval done', async () => {
    const lease = hourly();
    const slots = new Set(Array.from({ length: 168 }, (_, i) => slotOf(hourOf(now - (i + 1) * HOUR))));
    const before = {
      pk: lease.key,
      expiresAtMs: now - 60_000,
      fence: 41,
      acquiredAtMs: now - HOUR,
      renewedAtMs: now - HOUR,
      releasedAtMs: now - HOUR + 30_000,
      source: 'schedule',
      interval: hourOf(now - HOUR),
      ledger: slots,
      handoff: new Set(['2104']),
      lastRun: { runId: 'run-old', outcome: 'succeeded', fence: 41, interval: hourOf(now - HOUR), finishedAtMs: now - HOUR + 30_000 },
      ttl: Math.ceil(now / 1000) + 30 * 86_400,
    };
    await tables.doc.send(new PutCommand({ TableName: tables.names.coordination, Item: before }));
    expect(itemSizeBytes(before)).toBeGreaterThan(1024);
    // A duplicate of the interval the old release marked done is refused from the number set.
    expect(await lease.acquire('dup', 'schedule', hourOf(now - HOUR))).toEqual({
      acquired: false,
      reason: 'already-done',
      interval: hourOf(now - HOUR),
    });
    const got = await lease.acquire('run-new', 'schedule', hourOf(now));
    if (!got.acquired) throw new Error('expected the lease');
    expect(got.lease).toMatchObject({ fence: 42, handoff: new Set(['2104']) });
    expect(got.lease.ledger.has(slotOf(hourOf(now - HOUR)))).toBe(true);
    expect(await lease.release(got.lease, { doneInterval: hourOf(now), lastRun: { runId: 'run-new', fence: 42 } })).toBe(true);
    const after = await leaseItem(lease);
    expect(after).not.toHaveProperty('ledger');
    expect(after).toMatchObject({ doneAtMs: now, handoff: new Set(['2104']), fence: 42 });
    // What the number set held within the retention (5 h 05 min: at 12:07, back to 07:02) is carried
    // over: the five hours from 08:00, two characters each.
    expect(ledgerSlots(after as LedgerForms)).toEqual(new Set([0, 1, 2, 3, 4].map((h) => slotOf(hourOf(now - h * HOUR)))));
    expect(String(after?.done)).toHaveLength(10);
    expect(itemSizeBytes(after!)).toBeLessThan(512);
    for (const interval of [hourOf(now), hourOf(now - HOUR), hourOf(now - 4 * HOUR)]) {
      expect(await lease.acquire('dup', 'schedule', interval)).toEqual({ acquired: false, reason: 'already-done', interval });
    }
    // 07:00's events arrive by 12:05 at the latest: at 12:07 it is no longer deduplicated.
    expect(await lease.acquire('late', 'console', hourOf(now - 5 * HOUR))).toMatchObject({ acquired: true });
  });

  it('refuses a done interval from a final commit; forgets it once no duplicate can arrive; survives a long pause (tokens repeat after 15.6 h)', async () => {
    const lease = hourly();
    const interval = hourOf(now);
    const got = await lease.acquire('run-a', 'schedule', interval);
    if (!got.acquired) throw new Error('expected the lease');
    const put = { Put: { TableName: tables.names.coordination, Item: { pk: `data#${lease.key}` } } };
    await tables.doc.send(new TransactWriteCommand({ TransactItems: [lease.fenceCheck(got.lease, { doneInterval: interval }), put] }));
    expect(await lease.release(got.lease, {})).toBe(true);
    expect(await lease.acquire('dup', 'schedule', interval)).toEqual({ acquired: false, reason: 'already-done', interval });
    const start = now;
    // 936 minutes later the same token names a new minute: the ledger is stale by then, so that interval runs.
    now = start + 936 * 60_000;
    expect(hourOf(now)).not.toBe(interval);
    const later = await lease.acquire('run-b', 'schedule', hourOf(now));
    expect(later).toMatchObject({ acquired: true });
    if (later.acquired) await lease.release(later.lease, {});
    now = start;
  });

  it('costs one write unit to acquire, renew and release with the full ledger of a one-minute job', async () => {
    key += 1;
    let at = Date.parse('2026-11-30T06:00:00Z');
    const retention = ledgerRetentionMs(1);
    const capacity: number[] = [];
    const counted = DynamoDBDocumentClient.from(localDynamoClient(tables.endpoint), { marshallOptions: { removeUndefinedValues: true } });
    counted.middlewareStack.add(
      (next) => async (args) => {
        (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
        const out = await next(args);
        const consumed = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity;
        if (consumed?.CapacityUnits !== undefined) capacity.push(consumed.CapacityUnits);
        return out;
      },
      { step: 'initialize', name: 'consumedCapacity' },
    );
    const lease = new DynamoLease({
      doc: counted,
      table: tables.names.coordination,
      timing,
      now: () => at,
      key: `lease#minute-${key}`,
      ledgerRetentionMs: retention,
    });
    const minute = (ms: number) => new Date(Math.floor(ms / 60_000) * 60_000).toISOString().replace('.000Z', 'Z');
    for (let i = 0; i < 260; i += 1, at += 60_000) {
      const got = await lease.acquire(`run-${i}`, 'schedule', minute(at));
      if (!got.acquired) throw new Error(`minute ${i} refused`);
      if (i === 259) {
        capacity.length = 0;
        await lease.renew(got.lease);
      }
      await lease.release(got.lease, { doneInterval: minute(at), lastRun: { runId: `run-${i}`, fence: got.lease.fence } });
    }
    const item = await leaseItem(lease);
    expect(ledgerSlots(item as LedgerForms).size).toBe(247);
    expect(itemSizeBytes(item!)).toBeLessThan(1024);
    expect(capacity).toEqual([1, 1]); // the renewal and the release of a steady-state item
    capacity.length = 0;
    const got = await lease.acquire('run-last', 'schedule', minute(at));
    expect(got.acquired).toBe(true);
    expect(capacity).toEqual([1]);
  });
});
