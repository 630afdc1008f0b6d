/** AWS list prices the cost figures use: `npm run bench` (bench/cost.ts) and `npm run simulate`. */

/**
 * List prices, us-east-1, in USD, as known on PRICES_AS_OF (AWS pricing pages; not fetched from the
 * machine that runs the bench, which has no internet: re-check before quoting them).
 */
export const PRICES_AS_OF = '2026-11-30';
export const PRICES = {
  lambdaRequestPerMillion: 0.2,
  /** arm64, first 7.5 billion GB-s a month. */
  lambdaArmGbSecond: 0.0000133334,
  dynamoWriteRequestUnitPerMillion: 0.625,
  dynamoReadRequestUnitPerMillion: 0.125,
  dynamoStorageGbMonth: 0.25,
  dynamoPitrGbMonth: 0.2,
  /** First 10,000 custom metrics; a metric is one name + dimension set, prorated by the hour. */
  cloudwatchMetricMonth: 0.3,
  /** Standard-resolution alarm, per alarm metric. */
  cloudwatchAlarmMonth: 0.1,
  /** Beyond the 3 dashboards (up to 50 metrics each) of the always-free tier. */
  cloudwatchDashboardMonth: 3.0,
  logsIngestionGb: 0.5,
  logsStorageGbMonth: 0.03,
  sqsRequestPerMillion: 0.4,
  /** Scheduled rules on the default bus: events from AWS services carry no charge. */
  eventBridgeScheduledEvent: 0,
} as const;
