/**
 * The AWS part of the chaos fault plan: the seeded per-worker policy keeps its bursts below the
 * retry budgets the checker's contention rule relies on, and a contention-only plan has no other fault.
 */
import { describe, expect, it } from 'vitest';
import { awsFaultPolicy, contentionOnlyPlan, planTrial, Random, type AwsFaults } from './faults.js';

const AWS: AwsFaults = {
  contentionOnly: true,
  rates: { conflict: 0.5, throughputExceeded: 0.15, throttling: 0.15, internalError: 0.15, dropAfterApply: 0 },
  maxBurst: 3,
  maxReadBurst: 2,
  holdChance: 0,
  holdMs: { min: 0, max: 0 },
};

describe('chaos AWS fault plan', () => {
  it('injects bursts of at most maxBurst faults per kind of request, at most one throttle each, conflicts only on plain writes', () => {
    const policy = awsFaultPolicy(
      AWS,
      new Random(42),
      (r) => r.operation,
      () => true,
    );
    for (const operation of ['UpdateItem', 'TransactWriteItems', 'GetItem', 'Scan']) {
      let burst: string[] = [];
      let longest = 0;
      let injected = 0;
      for (let i = 0; i < 2_000; i += 1) {
        const fault = policy({ operation, body: {} });
        if (fault === undefined) {
          burst = [];
          continue;
        }
        injected += 1;
        burst.push(fault);
        longest = Math.max(longest, burst.length);
        expect(burst.filter((f) => f === 'throttling' || f === 'throughput-exceeded').length).toBeLessThanOrEqual(1);
        if (operation !== 'UpdateItem') expect(fault).not.toBe('conflict');
        expect(fault).not.toBe('drop-after-apply');
      }
      expect(longest).toBe(operation === 'Scan' ? 2 : 3);
      expect(injected).toBeGreaterThan(500);
    }
  });

  it('counts requests that meet a transaction lock in the burst, and injects nothing more until one goes through', () => {
    const policy = awsFaultPolicy(
      { ...AWS, rates: { ...AWS.rates, conflict: 1 } },
      new Random(5),
      (r) => r.operation,
      () => true,
    );
    const update = (locked: boolean) => policy({ operation: 'UpdateItem', body: {}, locked });
    expect([update(true), update(false), update(false), update(true), update(false), update(false)]).toEqual([
      undefined, // locked: conflicts anyway, counts as 1
      'conflict',
      'conflict', // 3: burst full
      undefined, // locked again: still full, nothing injected
      undefined, // goes through: the burst ends
      'conflict',
    ]);
  });

  it('injects nothing once turned off (the quiet phase)', () => {
    const policy = awsFaultPolicy(
      { ...AWS, rates: { ...AWS.rates, conflict: 1 } },
      new Random(1),
      (r) => r.operation,
      () => false,
    );
    expect(Array.from({ length: 50 }, () => policy({ operation: 'UpdateItem', body: {} }))).toEqual(Array(50).fill(undefined));
  });

  it('draws AWS faults from their own stream: the rest of a seed’s plan is unchanged', () => {
    const off = planTrial(7, { workers: 8, baseTimeMs: 1_750_000_000_000 });
    const on = planTrial(7, { workers: 8, baseTimeMs: 1_750_000_000_000, aws: true });
    expect(off.aws).toBeUndefined();
    expect(on.aws).toBeDefined();
    if (on.aws?.contentionOnly !== true) expect({ ...on, aws: undefined }).toEqual({ ...off, aws: undefined });
  });

  it('a contention-only plan has no signal, contender, failing Codeforces reply, DynamoDB delay or dropped connection', () => {
    const plan = contentionOnlyPlan(planTrial(3, { workers: 8, baseTimeMs: 1_750_000_000_000 }));
    expect(plan.aws?.contentionOnly).toBe(true);
    expect(plan.aws?.rates.dropAfterApply).toBe(0);
    expect(plan.leaseSeconds).toBe(9);
    expect(plan.dynamoDelays).toEqual([]);
    expect(plan.workers.every((w) => w.fault.kind === 'none' && w.contenders.length === 0)).toBe(true);
    expect(plan.codeforces.every((f) => f.kind === 'ok' || (f.kind === 'slow' && f.delayMs <= 5_000))).toBe(true);
    const share = Array.from(
      { length: 200 },
      (_, seed) => planTrial(seed, { workers: 4, baseTimeMs: 0, aws: true }).aws?.contentionOnly,
    ).filter(Boolean).length;
    expect(share).toBeGreaterThan(30);
    expect(share).toBeLessThan(90);
  });
});

describe('chaos delivery plan', () => {
  const baseTimeMs = Date.UTC(2026, 0, 1, 12, 30, 15);

  it('leaves the rest of a seed plan as it is without delivery, and calms delivery workers in contention-only trials', () => {
    for (let seed = 1; seed <= 50; seed += 1) {
      const without = planTrial(seed, { workers: 8, baseTimeMs, aws: true });
      const { delivery, ...rest } = planTrial(seed, { workers: 8, baseTimeMs, aws: true, deliveryWorkers: 6 });
      expect(rest).toEqual(without);
      expect(delivery?.workers).toHaveLength(6);
      if (without.aws?.contentionOnly === true)
        expect(delivery!.workers.every((w) => w.fault.kind === 'none' && w.contenders.length === 0)).toBe(true);
    }
  });

  it('draws past minute ticks that repeat (duplicates), console runs, faults, and both clock ages', () => {
    const plans = Array.from({ length: 50 }, (_, seed) => planTrial(seed, { workers: 8, baseTimeMs, deliveryWorkers: 6 }).delivery!);
    const workers = plans.flatMap((plan) => plan.workers);
    const ticks = workers.flatMap((w) => (w.event.kind === 'schedule' ? [w.event.interval] : []));
    expect(ticks.every((interval) => Date.parse(interval) < baseTimeMs && Date.parse(interval) % 60_000 === 0)).toBe(true);
    expect(
      plans.some(
        (plan) =>
          new Set(plan.workers.flatMap((w) => (w.event.kind === 'schedule' ? [w.event.interval] : []))).size <
          plan.workers.filter((w) => w.event.kind === 'schedule').length,
      ),
    ).toBe(true);
    expect(workers.some((w) => w.event.kind === 'console')).toBe(true);
    expect(new Set(workers.map((w) => w.fault.kind))).toEqual(
      new Set(['none', 'kill', 'kill-holder', 'stop-holder', 'stop', 'stop-at-write']),
    );
    expect(new Set(plans.map((plan) => plan.clockAgeSeconds))).toEqual(new Set([300, 7200]));
  });
});
