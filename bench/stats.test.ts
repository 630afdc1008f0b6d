import { describe, expect, it } from 'vitest';
import { addCounts, median, percentile, ratio, round, sortedCounts, summarize, total } from './stats.js';
import { addConsumed, type Capacity } from '../local/counting-client.js';
import { describeCounts, markdownTable } from './report.js';

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('returns observed values: p50 and p99 of 1..100 are 50 and 99', () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
  });

  it('does not depend on input order and does not sort the input in place', () => {
    const samples = [5, 1, 4, 2, 3];
    expect(percentile(samples, 50)).toBe(3);
    expect(samples).toEqual([5, 1, 4, 2, 3]);
  });

  it('p99 of fewer than 100 samples is the maximum; one sample is every percentile', () => {
    expect(percentile([3, 9, 1, 7], 99)).toBe(9);
    expect(percentile([42], 1)).toBe(42);
    expect(percentile([42], 99)).toBe(42);
  });

  it('the smallest p picks the minimum', () => {
    expect(percentile([10, 20, 30], 0.1)).toBe(10);
  });

  it('rejects no samples and p outside (0, 100]', () => {
    expect(() => percentile([], 50)).toThrow(RangeError);
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], Number.NaN)).toThrow(RangeError);
  });
});

describe('median', () => {
  it('is the middle sample, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });

  it('rejects no samples', () => {
    expect(() => median([])).toThrow(RangeError);
  });
});

describe('summarize', () => {
  it('gives count, p50, p99 and max rounded to 0.01 ms', () => {
    expect(summarize([1.234, 2.345, 3.456])).toEqual({ count: 3, p50Ms: 2.35, p99Ms: 3.46, maxMs: 3.46 });
  });
});

describe('ratio and round', () => {
  it('divides and rounds', () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(1, 3)).toBe(0.33);
    expect(ratio(2, 3, 3)).toBe(0.667);
  });

  it('is null when dividing by zero', () => {
    expect(ratio(5, 0)).toBeNull();
  });

  it('rounds half away from zero for positives', () => {
    expect(round(1.005 * 100, 0)).toBe(100);
    expect(round(2.5, 0)).toBe(3);
    expect(round(0.125, 2)).toBe(0.13);
  });
});

describe('request counts', () => {
  it('totals, merges maps and objects, and sorts for stable JSON', () => {
    expect(total({ UpdateItem: 2, Scan: 1 })).toBe(3);
    expect(total({})).toBe(0);
    const into = addCounts(
      { UpdateItem: 1 },
      new Map([
        ['UpdateItem', 2],
        ['Scan', 1],
      ]),
    );
    addCounts(into, { Scan: 1 });
    expect(into).toEqual({ UpdateItem: 3, Scan: 2 });
    expect(Object.keys(sortedCounts(into))).toEqual(['Scan', 'UpdateItem']);
    expect(describeCounts({ UpdateItem: 2, Scan: 1 })).toBe('Scan 1, UpdateItem 2');
  });
});

describe('addConsumed (ReturnConsumedCapacity TOTAL)', () => {
  const empty = (): Capacity => ({ read: 0, write: 0, total: 0, byOperation: {} });

  it('uses Read/WriteCapacityUnits when DynamoDB returns them', () => {
    const capacity = empty();
    addConsumed(capacity, 'TransactWriteItems', [
      { TableName: 'a', CapacityUnits: 6, ReadCapacityUnits: 2, WriteCapacityUnits: 4 },
      { TableName: 'b', CapacityUnits: 2, WriteCapacityUnits: 2 },
    ]);
    expect(capacity).toEqual({ read: 2, write: 6, total: 8, byOperation: { TransactWriteItems: 8 } });
  });

  it('attributes bare CapacityUnits by operation', () => {
    const capacity = empty();
    addConsumed(capacity, 'Scan', { TableName: 'c', CapacityUnits: 1.5 });
    addConsumed(capacity, 'UpdateItem', { TableName: 'c', CapacityUnits: 1 });
    addConsumed(capacity, 'DescribeTable', undefined);
    expect(capacity).toEqual({ read: 1.5, write: 1, total: 2.5, byOperation: { Scan: 1.5, UpdateItem: 1 } });
  });
});

describe('markdownTable', () => {
  it('renders a header, a separator and rows, escaping pipes and showing null as a dash', () => {
    expect(
      markdownTable(
        ['a', 'b'],
        [
          [1, 'x|y'],
          [null, 'z'],
        ],
      ),
    ).toBe(['| a | b |', '| --- | --- |', '| 1 | x\\|y |', '| – | z |'].join('\n'));
  });
});
