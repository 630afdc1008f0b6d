/**
 * What the deployed stack costs a month on the default hourly schedule, at list price, computed
 * from what one run measurably does: DynamoDB requests and capacity units counted by the bench
 * (steady-state sync), metric series and log bytes taken from the function's own output
 * (bench/run-output.ts), alarms and dashboards counted in the synthesized template. Pure: no I/O.
 */

// The list prices are shared with the simulated year (test/sim/), which must not import bench code.
import { PRICES, PRICES_AS_OF } from '../local/prices.js';

export { PRICES, PRICES_AS_OF };

export const RUNS_PER_MONTH_HOURLY = (24 * 365) / 12; // 730

export interface CostInputs {
  runsPerMonth: number;
  /** Steady-state sync: DynamoDB requests by operation and capacity units as DynamoDB Local reported them. */
  requestsPerRun: Record<string, number>;
  capacityPerRun: Record<string, number>;
  /** Distinct metric series in one run's EMF output. */
  metricSeries: number;
  alarms: number;
  dashboards: number;
  /** Bytes the function prints per run, plus Lambda's own JSON platform lines. */
  functionLogBytesPerRun: number;
  platformLogBytesPerRun: number;
  memoryMb: number;
  /** Billed duration assumed for a run in AWS, and the worst case (every run hits the timeout). */
  billedSeconds: number;
  timeoutSeconds: number;
  logRetentionDays: number;
}

export interface CostRow {
  service: string;
  what: string;
  monthlyUsd: number;
}

/** Write request units per run: transactional writes bill 2 units per item-KB, which DynamoDB Local reports once. */
export function writeUnitsPerRun(capacityPerRun: Record<string, number>): number {
  let units = 0;
  for (const [operation, value] of Object.entries(capacityPerRun)) {
    if (/^(Scan|Query|GetItem|BatchGetItem|TransactGetItems)$/.test(operation)) continue;
    units += operation === 'TransactWriteItems' ? 2 * value : value;
  }
  return units;
}

export function readUnitsPerRun(capacityPerRun: Record<string, number>): number {
  return Object.entries(capacityPerRun)
    .filter(([operation]) => /^(Scan|Query|GetItem|BatchGetItem)$/.test(operation))
    .reduce((sum, [, value]) => sum + value, 0);
}

const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 2 });

export function monthlyCost(inputs: CostInputs, prices = PRICES): CostRow[] {
  const runs = inputs.runsPerMonth;
  const gb = inputs.memoryMb / 1024;
  const gbSeconds = runs * gb * inputs.billedSeconds;
  const worstGbSeconds = runs * gb * inputs.timeoutSeconds;
  const wru = writeUnitsPerRun(inputs.capacityPerRun);
  const rru = readUnitsPerRun(inputs.capacityPerRun);
  const requests = Object.values(inputs.requestsPerRun).reduce((a, b) => a + b, 0);
  const logGb = (runs * (inputs.functionLogBytesPerRun + inputs.platformLogBytesPerRun)) / 1e9;
  const storedLogGb = logGb * (inputs.logRetentionDays / 30);
  return [
    {
      service: 'Lambda',
      what: `${fmt(runs)} invocations × ${inputs.memoryMb} MB × ${inputs.billedSeconds} s = ${fmt(gbSeconds)} GB-s (worst case, every run at the ${inputs.timeoutSeconds} s timeout: ${fmt(worstGbSeconds)} GB-s = $${(worstGbSeconds * prices.lambdaArmGbSecond + (runs / 1e6) * prices.lambdaRequestPerMillion).toFixed(2)})`,
      monthlyUsd: gbSeconds * prices.lambdaArmGbSecond + (runs / 1e6) * prices.lambdaRequestPerMillion,
    },
    {
      service: 'DynamoDB on-demand',
      what: `${requests} requests a run (${Object.entries(inputs.requestsPerRun)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}): ${fmt(wru)} write + ${fmt(rru)} read units a run, × ${fmt(runs)}; storage and PITR of a few hundred KB round to $0`,
      monthlyUsd:
        (runs * wru * prices.dynamoWriteRequestUnitPerMillion) / 1e6 + (runs * rru * prices.dynamoReadRequestUnitPerMillion) / 1e6,
    },
    {
      service: 'CloudWatch metrics',
      what: `${inputs.metricSeries} custom metric series (EMF), each billed as one metric`,
      monthlyUsd: inputs.metricSeries * prices.cloudwatchMetricMonth,
    },
    {
      service: 'CloudWatch alarms',
      what: `${inputs.alarms} standard-resolution alarms`,
      monthlyUsd: inputs.alarms * prices.cloudwatchAlarmMonth,
    },
    {
      service: 'CloudWatch dashboard',
      what: `${inputs.dashboards} dashboard ($0 if the account has no more than 3: always-free tier)`,
      monthlyUsd: inputs.dashboards * prices.cloudwatchDashboardMonth,
    },
    {
      service: 'CloudWatch Logs',
      what: `${fmt(inputs.functionLogBytesPerRun)} B a run from the function + ~${fmt(inputs.platformLogBytesPerRun)} B of Lambda platform lines = ${fmt(logGb * 1000)} MB ingested, kept ${inputs.logRetentionDays} days`,
      monthlyUsd: logGb * prices.logsIngestionGb + storedLogGb * prices.logsStorageGbMonth,
    },
    { service: 'SQS', what: 'failure queue: requests only when a run fails for good (first 1M requests a month free)', monthlyUsd: 0 },
    {
      service: 'EventBridge',
      what: `${fmt(runs)} scheduled events (no charge for scheduled rules)`,
      monthlyUsd: runs * prices.eventBridgeScheduledEvent,
    },
  ];
}

export function totalUsd(rows: CostRow[]): number {
  return rows.reduce((sum, row) => sum + row.monthlyUsd, 0);
}

/** `$0.0046` for small amounts, `$1.50` otherwise. */
export function usd(amount: number): string {
  if (amount === 0) return '$0';
  return amount < 0.01 ? `$${amount.toPrecision(2)}` : `$${amount.toFixed(2)}`;
}
