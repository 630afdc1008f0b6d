/**
 * The alarm topic and the dashboard of contest-sync (docs/design.md, "Observability"); the alarms are
 * ScheduledSingletonJob's. Metric names come from lambda/contract.ts; every EMF
 * metric carries the Powertools default dimension `service`. The run counts are charted from the
 * summary log lines, not from metrics.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { METRIC } from '../../lambda/contract.js';
import type { ContestSyncConfig } from '../config.js';
import { acknowledgeEmailSubscription } from '../nag.js';
import type { OutboxDelivery, ScheduledSingletonJob } from '@contest-sync/scheduled-singleton/cdk';

export interface MonitoringProps {
  readonly config: ContestSyncConfig;
}

/** Logs Insights: the summary line of each invocation (the only lines with `outcome`). */
const SUMMARY_LINES = 'filter ispresent(outcome)';

type MetricName = (typeof METRIC)[keyof typeof METRIC];

/**
 * contest-sync's alarm topic (created first, so the job's alarms can notify it) and, once the job
 * exists, its dashboard (`addDashboard`). The alarms themselves are the job construct's.
 */
export class Monitoring extends Construct {
  public readonly topic: sns.Topic;
  public dashboard!: cloudwatch.Dashboard;
  /** Set when context `contestSync:alarmEmail` is not empty. */
  public readonly emailSubscription?: sns.Subscription;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const { config } = props;
    this.topic = new sns.Topic(this, 'AlarmTopic', {
      displayName: 'contest-sync alarms',
      enforceSSL: true,
    });
    if (config.alarmEmail !== '') {
      this.emailSubscription = this.topic.addSubscription(new subscriptions.EmailSubscription(config.alarmEmail));
      acknowledgeEmailSubscription(this.emailSubscription);
    }
  }

  /**
   * A row of reminder delivery (docs/delivery.md): reminders due, delivered, deferred and lost a
   * minute, the rows skipped as bad (by reason, newest first: the app must fix them), and the
   * jobs' alarms. From the jobs' summary lines.
   */
  addReminderDelivery(jobs: readonly ScheduledSingletonJob[]): void {
    const logGroupNames = jobs.map((job) => job.logGroup.logGroupName);
    this.dashboard.addWidgets(
      new cloudwatch.LogQueryWidget({
        title: 'Reminders: due, delivered, deferred, lost, bad rows',
        logGroupNames,
        view: cloudwatch.LogQueryVisualizationType.LINE,
        queryLines: [
          SUMMARY_LINES,
          'filter not ispresent(dryRun)',
          'stats sum(counts.due) as due, sum(counts.delivered) as delivered, sum(counts.deferred) as deferred, sum(counts.lost) as lost, max(counts.invalid) as badRows by bin(5m)',
        ],
        width: 10,
      }),
      new cloudwatch.LogQueryWidget({
        title: 'Bad reminder rows (skipped, never claimed): newest runs',
        logGroupNames,
        view: cloudwatch.LogQueryVisualizationType.TABLE,
        queryLines: [
          SUMMARY_LINES,
          'filter counts.invalid > 0',
          'fields @timestamp, counts.invalid as bad, counts.invalidReasons',
          'sort @timestamp desc',
          'limit 10',
        ],
        width: 8,
      }),
      new cloudwatch.AlarmStatusWidget({
        title: 'Reminder delivery alarms',
        alarms: jobs.flatMap((job) => Object.values(job.alarms)),
        width: 6,
      }),
    );
  }

  /**
   * A row of the sources (docs/sources.md, "One job per source"): each source's runs by outcome and
   * failed phase, from its summary lines (no metric series of its own beyond its job's), and each
   * source's alarms, so that the one that keeps failing is seen at once.
   */
  addSources(sources: readonly { label: string; job: ScheduledSingletonJob }[]): void {
    this.dashboard.addWidgets(
      new cloudwatch.LogQueryWidget({
        title: 'Sources: runs by platform and outcome (failed: phase)',
        logGroupNames: sources.map(({ job }) => job.logGroup.logGroupName),
        view: cloudwatch.LogQueryVisualizationType.TABLE,
        queryLines: [SUMMARY_LINES, 'stats count(*) as runs by platform, outcome, phase', 'sort platform asc'],
        width: 12,
      }),
      ...sources.map(
        ({ label, job }) =>
          new cloudwatch.AlarmStatusWidget({ title: `${label} sync alarms`, alarms: Object.values(job.alarms), width: 3 }),
      ),
    );
  }

  /** A row of event delivery (lag, events, dead letters, delivery alarms) on the dashboard. */
  addDelivery(delivery: OutboxDelivery): void {
    this.dashboard.addWidgets(...delivery.widgets());
  }

  addDashboard(job: ScheduledSingletonJob): cloudwatch.Dashboard {
    const { logGroup } = job;
    const emf = (metricName: MetricName, statistic: string, period: Duration, label?: string) =>
      job.metric(metricName, statistic, period, label);
    const graphPeriod = Duration.minutes(5);
    const sum = (name: MetricName) => emf(name, 'Sum', graphPeriod, name);
    // Counts are not metrics (each metric is billed per month): they are charted from the summary
    // lines, so a count added to the summary needs no metric or stack change.
    const query = (title: string, view: 'LINE' | 'TABLE', width: number, lines: string[]) =>
      new cloudwatch.LogQueryWidget({
        title,
        logGroupNames: [logGroup.logGroupName],
        view: cloudwatch.LogQueryVisualizationType[view],
        queryLines: [SUMMARY_LINES, ...lines],
        width,
      });
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
          query('Contests written / unchanged / removed', 'LINE', 12, [
            'filter outcome = "succeeded"',
            'stats sum(counts.contestsWritten) as written, sum(counts.contestsUnchanged) as unchanged, sum(counts.contestsRemoved) as removed by bin(1h)',
          ]),
          query('Skips by reason, failures by phase', 'TABLE', 12, [
            'filter outcome != "succeeded"',
            'fields concat(outcome, " ", coalesce(reason, phase)) as what',
            'stats count(*) as runs, max(@timestamp) as last by what',
            'sort runs desc',
          ]),
        ],
        healthRow(job, graphPeriod),
        [
          // Held changes (docs/design.md, "A reply is evidence"): what replies said that the sync did
          // not act on yet, and what it accepted after enough consecutive replies (or an operator).
          query('Held / accepted changes', 'LINE', 12, [
            'filter outcome = "succeeded" and not ispresent(dryRun)',
            'stats max(counts.contestsHeld) as held, sum(counts.contestsAccepted) as accepted by bin(1h)',
          ]),
          query('Held now (newest run): contest, kind, since', 'TABLE', 12, [
            'filter counts.contestsHeld > 0',
            'fields @timestamp, counts.contestsHeld as held, held.0.contestId as contest, held.0.kind as kind, held.0.since as since, held.0.replies as replies',
            'sort @timestamp desc',
            'limit 10',
          ]),
        ],
        [
          // Stale replies (docs/design.md, "Stale replies"): replies made before the newest one
          // applied (a lagging replica, a cache), never applied.
          query('Stale replies (never applied)', 'LINE', 12, [
            'filter outcome = "succeeded" and not ispresent(dryRun)',
            'stats sum(counts.repliesStale) as stale, sum(counts.remindersPaused) as remindersPaused by bin(1h)',
          ]),
          query('Stale replies: made at, newest applied', 'TABLE', 12, [
            'filter counts.repliesStale > 0',
            'fields @timestamp, stale.madeAt as madeAt, stale.newestApplied as newestApplied',
            'sort @timestamp desc',
            'limit 10',
          ]),
        ],
        [
          // Contest events (docs/events.md, "Contest events"): written to the outbox by the sync;
          // duplicates are a retried change found already written. Raced: reminder updates a
          // claim refused, redone by the next run.
          query('Contest events published / duplicate; reminder updates raced', 'LINE', 24, [
            'filter not ispresent(dryRun)',
            'stats sum(counts.eventsPublished) as published, sum(counts.eventsDuplicate) as duplicate, sum(counts.remindersRaced) as raced by bin(1h)',
          ]),
        ],
        [
          query('Recent runs (summary lines)', 'TABLE', 24, [
            'fields @timestamp, source, interval, message, coalesce(reason, phase) as why, fence, durationMs, counts.contestsWritten as written, error',
            'sort @timestamp desc',
            'limit 20',
          ]),
        ],
      ],
    });
    return this.dashboard;
  }
}

/** The function's errors and throttles, its failure queue and the job's alarms. */
function healthRow(job: ScheduledSingletonJob, graphPeriod: Duration): cloudwatch.IWidget[] {
  const { function: fn, failureQueue } = job;
  return [
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
      left: [
        failureQueue.metricApproximateNumberOfMessagesVisible({
          period: graphPeriod,
          statistic: 'Maximum',
          label: 'Visible messages',
        }),
      ],
      width: 8,
    }),
    new cloudwatch.AlarmStatusWidget({
      title: 'Alarms',
      alarms: Object.values(job.alarms),
      width: 8,
    }),
  ];
}
