/** The delivery job's cost model (bench/delivery-cost.ts). */
import { describe, expect, it } from 'vitest';
import { PRICES } from '../local/prices.js';
import {
  MINUTE_RUNS_PER_MONTH,
  deliveryMonthlyCost,
  ruleWriteUnitsPerReminder,
  writeUnitsPerReminder,
  type DeliveryCostInputs,
} from './delivery-cost.js';

const inputs: DeliveryCostInputs = {
  runsPerMonth: MINUTE_RUNS_PER_MONTH,
  remindersPerMonth: 100_000,
  idleRequests: 1,
  transactionsPerReminder: 1 / 49,
  gateChecksPerReminder: 1 / 49,
  memoryMb: 256,
  idleBilledSeconds: 0.1,
  billedSecondsPerReminder: 0.005,
  logBytesPerRun: 2000,
  metricSeries: 5,
  alarms: 5,
  relayBatch: 100,
};

describe('delivery cost model', () => {
  it('a minute schedule is 43,800 runs a month', () => {
    expect(MINUTE_RUNS_PER_MONTH).toBe(43_800);
  });
  it('bills about 5 write units per reminder batched, 7 one per transaction', () => {
    expect(writeUnitsPerReminder(1 / 49)).toBeCloseTo(5.04, 2);
    expect(writeUnitsPerReminder(1)).toBe(7);
  });
  it("adds the rule's gate check, 2 write units shared by the claims under one bucket key in a transaction", () => {
    expect(ruleWriteUnitsPerReminder(1 / 49)).toBeCloseTo(0.041, 3);
    expect(writeUnitsPerReminder(1 / 49, 1 / 49)).toBeCloseTo(5.08, 2);
    // One reminder per bucket key: a check each, 33 claims per transaction.
    expect(writeUnitsPerReminder(1 / 33, 1)).toBeCloseTo(7.06, 2);
    expect(writeUnitsPerReminder(1, 1)).toBe(9);
  });
  it('the idle minutes cost their Query only: 43,800 × 0.5 read units', () => {
    const idle = deliveryMonthlyCost({ ...inputs, remindersPerMonth: 0 });
    const dynamo = idle.find((row) => row.service.startsWith('DynamoDB'))!;
    expect(dynamo.monthlyUsd).toBeCloseTo((43_800 * 0.5 * PRICES.dynamoReadRequestUnitPerMillion) / 1e6, 10);
    expect(idle.find((row) => row.service.startsWith('EventBridge'))!.monthlyUsd).toBe(0);
  });
  it('grows with reminders by their writes and events', () => {
    const rows = deliveryMonthlyCost(inputs);
    const more = deliveryMonthlyCost({ ...inputs, remindersPerMonth: 1_100_000 });
    const delta = (service: string) =>
      more.find((r) => r.service.startsWith(service))!.monthlyUsd - rows.find((r) => r.service.startsWith(service))!.monthlyUsd;
    expect(delta('DynamoDB')).toBeCloseTo(
      (1_000_000 * writeUnitsPerReminder(1 / 49, 1 / 49) * PRICES.dynamoWriteRequestUnitPerMillion) / 1e6,
      6,
    );
    expect(delta('EventBridge')).toBeCloseTo(1.0, 6);
  });
});
