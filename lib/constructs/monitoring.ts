/**
 * Alarms (docs/design.md, "Observability") on an SNS topic, and one dashboard. Metric names come from lambda/contract.ts; every EMF
 * metric carries the Powertools default dimension `service`. The run counts are charted from the
 * summary log lines, not from metrics.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC, METRICS_NAMESPACE, SERVICE_NAME } from '../../lambda/contract.js';
import type { ContestSyncConfig } from '../config.js';

export interface MonitoringProps {
  readonly config: ContestSyncConfig;
  readonly function: lambda.IFunction;
  /** The function's log group: the dashboard charts the summary line's counts from it (Logs Insights). */
  readonly logGroup: logs.ILogGroup;
  readonly failureQueue: sqs.IQueue;
}

/** Logs Insights: the summary line of each invocation (the only lines with `outcome`). */
const SUMMARY_LINES = 'filter ispresent(outcome)';

type MetricName = (typeof METRIC)[keyof typeof METRIC];

export class Monitoring extends Construct {
  public readonly topic: sns.Topic;
  public readonly dashboard: cloudwatch.Dashboard;
  /** Set when context `contestSync:alarmEmail` is not empty. */
  public readonly emailSubscription?: sns.Subscription;
  public readonly alarms: {
    readonly noSuccessfulSync: cloudwatch.Alarm;
    readonly syncFailed: cloudwatch.Alarm;
    readonly functionErrors: cloudwatch.Alarm;
    readonly failureQueueMessages: cloudwatch.Alarm;
    readonly leaseLost: cloudwatch.Alarm;
  };

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const { config, function: fn, logGroup, failureQueue } = props;
    const interval = Duration.minutes(config.scheduleRateMinutes);

    this.topic = new sns.Topic(this, 'AlarmTopic', {
      displayName: 'contest-sync alarms',
      enforceSSL: true,
    });
    if (config.alarmEmail !== '') {
      this.emailSubscription = this.topic.addSubscription(new subscriptions.EmailSubscription(config.alarmEmail));
    }

    const emf = (metricName: MetricName, statistic: string, period: Duration = interval, label?: string) =>
      new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { service: SERVICE_NAME },
        statistic,
        period,
        ...(label === undefined ? {} : { label }),
      });

    const action = new cwActions.SnsAction(this.topic);
    const alarm = (alarmId: string, alarmProps: cloudwatch.AlarmProps): cloudwatch.Alarm => {
      const created = new cloudwatch.Alarm(this, alarmId, alarmProps);
      created.addAlarmAction(action);
      created.addOkAction(action);
      return created;
    };

    this.alarms = {
      noSuccessfulSync: alarm('NoSuccessfulSync', {
        alarmDescription:
          `No contest sync succeeded in the last ${2 * config.scheduleRateMinutes} minutes (2 schedule intervals): ` +
          'the Contests table is going stale. First look at the function logs (Logs Insights, filter on ' +
          'outcome/phase) and the SyncFailed / FunctionErrors alarms: a Codeforces outage shows as ' +
          'phase "codeforces", a stuck lease as repeated "lease-held" skips, no log lines at all means ' +
          'the schedule rule is disabled or the function cannot be invoked.' +
          (config.schedulePaused ? ' PAUSED by context contestSync:schedulePaused: notifications are off.' : ''),
        metric: emf(METRIC.runSucceeded, 'Sum'),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: 2,
        datapointsToAlarm: 2,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
        // A deliberate pause stops the runs this alarm counts: it goes to ALARM after two
        // periods as usual (visible on the dashboard) but notifies no one until resumed.
        actionsEnabled: !config.schedulePaused,
      }),
      syncFailed: alarm('SyncFailed', {
        alarmDescription:
          'A contest sync run ended with outcome "failed". First read its summary line in the function ' +
          'logs: the phase (lease, codeforces, store) says where it failed. Scheduled runs are retried ' +
          'by Lambda; a single codeforces failure usually clears on the next interval.',
        metric: emf(METRIC.runFailed, 'Sum', Duration.minutes(5)),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      functionErrors: alarm('FunctionErrors', {
        alarmDescription:
          'The contest sync function threw or timed out (Lambda Errors metric), which the handler does ' +
          'only for invalid events, upstream failures on scheduled runs, or bugs. First search the ' +
          'function logs for level ERROR and "Task timed out"; check the failure queue for the event.',
        metric: fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      failureQueueMessages: alarm('FailureQueueMessages', {
        alarmDescription:
          'Messages are waiting in the contest sync failure queue: scheduled invocations that failed ' +
          'after all Lambda retries (Lambda destination record with the error), or schedule events ' +
          'EventBridge could not deliver. First read a message (SQS console, "Poll for messages") for ' +
          'the error, fix the cause, then purge the queue; messages expire after 14 days.',
        metric: failureQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      leaseLost: alarm('LeaseLost', {
        alarmDescription:
          'A contest sync run lost its lease mid-run and aborted (another run took over, or heartbeats ' +
          'could not renew it). Occasional losses are safe by design (fenced writes); repeated ones mean ' +
          'runs outlive the lease: first compare Duration with LEASE_DURATION_SECONDS and look for ' +
          'DynamoDB throttling or slow Codeforces responses in the logs.',
        metric: emf(METRIC.leaseLost, 'Sum', Duration.minutes(5)),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    };

    const graphPeriod = Duration.minutes(5);
    const sum = (name: MetricName) => emf(name, 'Sum', graphPeriod, name);
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.days(2),
      widgets: [
        [
          new cloudwatch.GraphWidget({
            title: 'Runs by outcome',
            left: [sum(METRIC.runSucceeded), sum(METRIC.runFailed), sum(METRIC.runSkipped)],
            stacked: true,
            width: 12,
          }),
          new cloudwatch.GraphWidget({
            title: 'Run duration (ms)',
            left: [emf(METRIC.duration, 'p50', graphPeriod, 'p50'), emf(METRIC.duration, 'Maximum', graphPeriod, 'max')],
            width: 12,
          }),
        ],
        [
          // Counts are not metrics (each metric is billed per month): they are charted from the
          // summary lines, so a count added to the summary needs no metric or stack change.
          new cloudwatch.LogQueryWidget({
            title: 'Contests written / unchanged / removed',
            logGroupNames: [logGroup.logGroupName],
            view: cloudwatch.LogQueryVisualizationType.LINE,
            queryLines: [
              SUMMARY_LINES,
              'filter outcome = "succeeded"',
              'stats sum(counts.contestsWritten) as written, sum(counts.contestsUnchanged) as unchanged, sum(counts.contestsRemoved) as removed by bin(1h)',
            ],
            width: 12,
          }),
          new cloudwatch.LogQueryWidget({
            title: 'Skips by reason, failures by phase',
            logGroupNames: [logGroup.logGroupName],
            view: cloudwatch.LogQueryVisualizationType.TABLE,
            queryLines: [
              SUMMARY_LINES,
              'filter outcome != "succeeded"',
              'fields concat(outcome, " ", coalesce(reason, phase)) as what',
              'stats count(*) as runs, max(@timestamp) as last by what',
              'sort runs desc',
            ],
            width: 12,
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Function errors & throttles',
            left: [
              fn.metricErrors({ period: graphPeriod, statistic: 'Sum', label: 'Errors' }),
              fn.metricThrottles({ period: graphPeriod, statistic: 'Sum', label: 'Throttles' }),
            ],
            width: 8,
          }),
          new cloudwatch.GraphWidget({
            title: 'Failure queue depth',
            left: [failureQueue.metricApproximateNumberOfMessagesVisible({ period: graphPeriod, statistic: 'Maximum', label: 'Visible messages' })],
            width: 8,
          }),
          new cloudwatch.AlarmStatusWidget({
            title: 'Alarms',
            alarms: Object.values(this.alarms),
            width: 8,
          }),
        ],
        [
          new cloudwatch.LogQueryWidget({
            title: 'Recent runs (summary lines)',
            logGroupNames: [logGroup.logGroupName],
            view: cloudwatch.LogQueryVisualizationType.TABLE,
            queryLines: [
              SUMMARY_LINES,
              'fields @timestamp, source, interval, message, coalesce(reason, phase) as why, fence, durationMs, counts.contestsWritten as written, error',
              'sort @timestamp desc',
              'limit 20',
            ],
            width: 24,
          }),
        ],
      ],
    });
  }
}
