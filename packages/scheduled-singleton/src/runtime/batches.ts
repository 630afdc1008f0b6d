/**
 * Consecutive groups under two limits, a count and a byte budget: how a fenced commit of many
 * claims is cut into transactions, and how the relay cuts outbox records into PutEvents requests.
 * Order is kept (the relay checkpoints at the first record still failed). An item larger than the
 * budget alone gets a group of its own: the callers' own size checks refuse such items earlier.
 */
export function packInOrder<T>(items: readonly T[], limits: { maxCount: number; maxBytes: number }, bytesOf: (item: T) => number): T[][] {
  const groups: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = bytesOf(item);
    if (current.length > 0 && (current.length >= limits.maxCount || bytes + size > limits.maxBytes)) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}
