/** packInOrder: consecutive groups under a count and a byte budget, order kept. */
import { describe, expect, it } from 'vitest';
import { packInOrder } from '@contest-sync/scheduled-singleton';

describe('packInOrder', () => {
  const bytes = (n: number) => n;

  it('cuts at the count, keeping order', () => {
    expect(packInOrder([1, 1, 1, 1, 1], { maxCount: 2, maxBytes: 100 }, bytes)).toEqual([[1, 1], [1, 1], [1]]);
  });

  it('cuts before the item that would pass the byte budget; an item over the budget alone gets its own group', () => {
    expect(packInOrder([40, 40, 30, 120, 10], { maxCount: 10, maxBytes: 100 }, bytes)).toEqual([[40, 40], [30], [120], [10]]);
  });

  it('packs nothing into no group', () => {
    expect(packInOrder([], { maxCount: 1, maxBytes: 1 }, bytes)).toEqual([]);
  });
});
