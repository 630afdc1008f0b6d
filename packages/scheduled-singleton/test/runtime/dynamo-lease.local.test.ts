/**
 * The lease against a real DynamoDB engine (DynamoDB Local), with an injected clock so that
 * expiry is exact. Each case is one of the edges of the lease rules in docs/design.md.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoLease, LeaseLostError, leaseTiming } from '@contest-sync/scheduled-singleton';
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
