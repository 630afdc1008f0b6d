/**
 * The in-memory lease and writer of `@contest-sync/scheduled-singleton/testing`: the shared contract
 * (the DynamoDB adapters pass the same suite on DynamoDB Local), and what the store records.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCoordination, MemoryFencedWriter, MemoryLease } from '@contest-sync/scheduled-singleton/testing';
import { leaseContract } from './lease-contract.js';

let store = new MemoryCoordination();
leaseContract('in memory', () => ({
  open: (key, timing, now) => {
    const lease = new MemoryLease({ key, timing, now, store });
    return { lease, writer: new MemoryFencedWriter(store) };
  },
  table: 'data',
  read: async (pk) => store.puts('data').findLast((item) => item.pk === pk),
}));

describe('MemoryCoordination', () => {
  it('refuses a lease action it did not issue', async () => {
    store = new MemoryCoordination();
    const writer = new MemoryFencedWriter(store);
    await expect(
      writer.commit([{ Put: { TableName: 'data', Item: { pk: 'x' } } }], () => ({
        ConditionCheck: { TableName: 't', Key: {}, ConditionExpression: 'x' },
      })),
    ).rejects.toThrow(/not issued by a MemoryLease/);
    expect(store.transactions).toEqual([]);
  });
});
