/** The cost model (bench/cost.ts): units, and the monthly table from measured inputs. */
import { describe, expect, it } from 'vitest';
import { PRICES, RUNS_PER_MONTH_HOURLY, monthlyCost, readUnitsPerRun, totalUsd, usd, writeUnitsPerRun, type CostInputs } from './cost.js';

const inputs: CostInputs = {
  runsPerMonth: RUNS_PER_MONTH_HOURLY,
  requestsPerRun: { Scan: 1, TransactWriteItems: 1, UpdateItem: 1 },
  capacityPerRun: { Scan: 1, TransactWriteItems: 2, UpdateItem: 1 },
  metricSeries: 5,
  alarms: 5,
  dashboards: 1,
  functionLogBytesPerRun: 1400,
  platformLogBytesPerRun: 600,
  memoryMb: 256,
  billedSeconds: 2,
  timeoutSeconds: 120,
  logRetentionDays: 30,
};

describe('cost model', () => {
  it('bills transactional writes twice; reads are the read operations', () => {
    expect(writeUnitsPerRun(inputs.capacityPerRun)).toBe(5);
    expect(readUnitsPerRun(inputs.capacityPerRun)).toBe(1);
  });

  it('one row per service of the stack, metrics at $0.30 each, the dashboard beyond the free tier', () => {
    const rows = monthlyCost(inputs);
    expect(rows.map((r) => r.service)).toEqual([
      'Lambda',
      'DynamoDB on-demand',
      'CloudWatch metrics',
      'CloudWatch alarms',
      'CloudWatch dashboard',
      'CloudWatch Logs',
      'SQS',
      'EventBridge',
    ]);
    const by = Object.fromEntries(rows.map((r) => [r.service, r.monthlyUsd]));
    expect(RUNS_PER_MONTH_HOURLY).toBe(730);
    expect(by['CloudWatch metrics']).toBeCloseTo(1.5, 10);
    expect(by['CloudWatch alarms']).toBeCloseTo(0.5, 10);
    expect(by['CloudWatch dashboard']).toBe(3);
    // 730 × 0.25 GB × 2 s × price + 730 requests
    expect(by.Lambda).toBeCloseTo(730 * 0.25 * 2 * PRICES.lambdaArmGbSecond + (730 / 1e6) * 0.2, 10);
    expect(by['DynamoDB on-demand']).toBeCloseTo((730 * 5 * 0.625 + 730 * 1 * 0.125) / 1e6, 12);
    expect(by['CloudWatch Logs']).toBeCloseTo(((730 * 2000) / 1e9) * (0.5 + 0.03), 12);
    expect(totalUsd(rows)).toBeCloseTo(
      rows.reduce((s, r) => s + r.monthlyUsd, 0),
      12,
    );
    // the old ~24 series alone would have been $7.20
    expect(monthlyCost({ ...inputs, metricSeries: 24 }).find((r) => r.service === 'CloudWatch metrics')!.monthlyUsd).toBeCloseTo(7.2, 10);
  });

  it('formats dollars', () => {
    expect([usd(0), usd(0.0046), usd(1.5), usd(5.0123)]).toEqual(['$0', '$0.0046', '$1.50', '$5.01']);
  });
});
