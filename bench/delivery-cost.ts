/**
 * What the reminder delivery job adds to the monthly bill (list prices), from what the bench
 * measures of it: the idle minute's requests, and the requests and transactions per reminder
 * delivered. Pure: no I/O. docs/performance.md shows the table.
 */
import { PRICES } from '../local/prices.js';
import { usd, type CostRow } from './cost.js';

export { usd };

/** A minute schedule: 60 × 24 × 365 / 12 invocations a month. */
export const MINUTE_RUNS_PER_MONTH = (60 * 24 * 365) / 12; // 43,800

/** EventBridge custom events on a bus: $1.00 per million (64 KB chunks); us-east-1 list price. */
export const EVENTBRIDGE_CUSTOM_EVENT_PER_MILLION = 1.0;

export interface DeliveryCostInputs {
  runsPerMonth: number;
  remindersPerMonth: number;
  /** Measured: DynamoDB requests of an idle minute (the precheck's Query). */
  idleRequests: number;
  /** Measured: fenced transactions per reminder (1/49 when batched). */
  transactionsPerReminder: number;
  /** Measured: the rule's gate ConditionChecks per reminder (1/49 for claims under one bucket key; up to 1 for one reminder per key). */
  gateChecksPerReminder: number;
  memoryMb: number;
  /** Assumed billed duration of an idle minute in AWS (one Query). */
  idleBilledSeconds: number;
  /** Assumed billed duration per reminder delivered (from the local rate, with margin). */
  billedSecondsPerReminder: number;
  /** Bytes an invocation prints (summary and EMF lines) plus Lambda's platform lines. */
  logBytesPerRun: number;
  metricSeries: number;
  alarms: number;
  /** Outbox records per relay invocation (its event source mapping's batch size). */
  relayBatch: number;
}

/**
 * Write units per reminder on AWS: the claim (a transactional update of an item under 1 KB: 2),
 * its outbox item (transactional put: 2), the byDue entry the claim removes (1), the share of the
 * lease's ConditionCheck (transactional: 2 per transaction), and the share of its bucket gate's
 * ConditionCheck (the rule: 2 per bucket key per transaction, for a gate under 1 KB).
 */
export function writeUnitsPerReminder(transactionsPerReminder: number, gateChecksPerReminder = 0): number {
  return 2 + 2 + 1 + 2 * transactionsPerReminder + 2 * gateChecksPerReminder;
}

/** What the rule adds per reminder: its gate's ConditionCheck, shared by the claims under its bucket key in a transaction. */
export function ruleWriteUnitsPerReminder(gateChecksPerReminder: number): number {
  return 2 * gateChecksPerReminder;
}

const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 2 });

export function deliveryMonthlyCost(inputs: DeliveryCostInputs, prices = PRICES): CostRow[] {
  const runs = inputs.runsPerMonth;
  const reminders = inputs.remindersPerMonth;
  const gb = inputs.memoryMb / 1024;
  const gbSeconds = runs * gb * inputs.idleBilledSeconds + reminders * gb * inputs.billedSecondsPerReminder;
  const relayInvocations = Math.ceil(reminders / inputs.relayBatch);
  // An idle Query reads nothing: DynamoDB bills its minimum, 0.5 read units (eventually consistent).
  const idleReadUnits = runs * inputs.idleRequests * 0.5;
  const perReminder = writeUnitsPerReminder(inputs.transactionsPerReminder, inputs.gateChecksPerReminder);
  const wru = reminders * perReminder;
  const logGb = (runs * inputs.logBytesPerRun) / 1e9;
  return [
    {
      service: 'Lambda (delivery, relay)',
      what: `${fmt(runs)} minute invocations × ${inputs.memoryMb} MB × ${inputs.idleBilledSeconds} s idle, + ${inputs.billedSecondsPerReminder * 1000} ms per reminder; ${fmt(relayInvocations)} relay invocations`,
      monthlyUsd: gbSeconds * prices.lambdaArmGbSecond + ((runs + relayInvocations) / 1e6) * prices.lambdaRequestPerMillion,
    },
    {
      service: 'DynamoDB on-demand (delivery)',
      what: `idle minute: ${inputs.idleRequests} Queries (0.5 read units each) × ${fmt(runs)}; per reminder ${fmt(perReminder)} write units (claim 2, outbox item 2, byDue entry 1, lease check 2/${fmt(1 / inputs.transactionsPerReminder)}, gate check 2/${fmt(1 / inputs.gateChecksPerReminder)}) × ${fmt(reminders)}; stream reads by Lambda are free`,
      monthlyUsd: (idleReadUnits * prices.dynamoReadRequestUnitPerMillion + wru * prices.dynamoWriteRequestUnitPerMillion) / 1e6,
    },
    {
      service: 'EventBridge (bus)',
      what: `${fmt(reminders)} ReminderDue events put by the relay, $${EVENTBRIDGE_CUSTOM_EVENT_PER_MILLION.toFixed(2)} per million; rules' deliveries to SQS or Lambda carry no EventBridge charge`,
      monthlyUsd: (reminders / 1e6) * EVENTBRIDGE_CUSTOM_EVENT_PER_MILLION,
    },
    {
      service: 'CloudWatch (delivery)',
      what: `${inputs.metricSeries} metric series and ${inputs.alarms} alarms of the job; ${fmt(logGb * 1000)} MB of logs ingested`,
      monthlyUsd:
        inputs.metricSeries * prices.cloudwatchMetricMonth + inputs.alarms * prices.cloudwatchAlarmMonth + logGb * prices.logsIngestionGb,
    },
  ];
}
