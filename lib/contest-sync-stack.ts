/**
 * The one stack of contest-sync (docs/design.md): the data tables, the sync job (a
 * ScheduledSingletonJob: function, schedule, deploy-time run, failure queue, grants, alarms), the
 * alarm topic and dashboard, the table names as SSM parameters, and tags. Environment-agnostic:
 * `cdk synth` needs no AWS account or credentials. It reads no CDK context: lib/app.ts does and
 * passes the validated config in. cdk-nag acknowledgements live in ./nag.ts.
 */
import { CfnOutput, Duration, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  ENV,
  EVENT_SOURCES,
  LEASE_PK,
  MAX_DUE_SHARDS,
  METRIC,
  METRICS_NAMESPACE,
  RUN_PK_PREFIX,
  SERVICE_NAME,
} from '../lambda/contract.js';
import type { ContestSyncConfig } from './config.js';
import { DataTables } from './constructs/data-tables.js';
import { Door } from './constructs/door.js';
import { Monitoring } from './constructs/monitoring.js';
import { Webhooks } from './constructs/webhooks.js';
import { OutboxDelivery, ScheduledSingletonJob, type JobAlarm } from '@contest-sync/scheduled-singleton/cdk';
import { CONTEST_EVENT_SCHEMAS } from '../lambda/contests/event-schemas.js';
import { DELIVERY_ENV } from '../lambda/delivery/env.js';
import { REMINDER_DUE_DETAIL_SCHEMA, deliveryLeaseKey, deliveryRunRecordPrefix } from '../lambda/delivery/schema.js';
import { EVENT_WINDOWS } from '../lambda/event-windows.js';
import { REMINDERS_BY_DUE_INDEX } from './constructs/data-tables.js';
import { MIGRATION_MARKER_PK } from '../lambda/migration/keys.js';
import {
  MIGRATION_ACTIONS,
  MIGRATION_GATE_ACTIONS,
  SYNC_DUE_INDEX_ACTIONS,
  TABLE_ACTIONS,
  TABLE_ROLES,
  type TableRole,
} from './table-access.js';

export const STACK_ID = 'ContestSync';
export { EVENT_SOURCES };
export const APP_TAG = 'contest-sync';
/** The `stage` tag and SSM path segment of the stage "" (stack `ContestSync`). */
export const DEFAULT_STAGE_NAME = 'default';

/** `ContestSync` for the default stage, `ContestSync-<stage>` otherwise: stages deploy side by side. */
export function stackNameOf(stage: string): string {
  return stage === '' ? STACK_ID : `${STACK_ID}-${stage}`;
}

/** The SSM parameter that holds a table's name: `/contest-sync/<stage>/tables/<role>`. */
export function tableParameterName(stage: string, role: TableRole): string {
  return `/${APP_TAG}/${stage === '' ? DEFAULT_STAGE_NAME : stage}/tables/${role}`;
}

export interface ContestSyncStackProps extends StackProps {
  readonly config: ContestSyncConfig;
}

/**
 * The function's shareable console test events, by name, in the order the console lists them.
 * Each payload is `events/<name>.json` (the one copy: deployed by ConsoleTestEvents, read by
 * `npm start -- --event "$(cat events/<name>.json)"`, and parsed by test/infra/console-test-events.test.ts).
 */
export const CONSOLE_TEST_EVENTS = [
  'scheduled-tick',
  'sync',
  'dry-run',
  'rerun-interval',
  'force-rerun-interval',
  // Act on every held change now (docs/design.md, "A reply is evidence").
  'accept-held',
  // A new event: its name here, its payload in events/<name>.json, its invocation in the test.
] as const;

/** The delivery job's console test events (events/<name>.json), deployed like the sync's. */
export const DELIVERY_CONSOLE_TEST_EVENTS = ['delivery-tick', 'delivery-now', 'delivery-dry-run'] as const;

/**
 * What the delivery job may send to the data tables: the Query on byDue, the claim, the contests'
 * read (names, URLs, `dueStart`) and the claim transaction's ConditionCheck on each contest (the
 * rule: docs/delivery.md).
 */
export const DELIVERY_ACTIONS = {
  remindersIndex: ['dynamodb:Query'],
  reminders: ['dynamodb:UpdateItem'],
  contests: ['dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem'],
} as const;

/** The payloads of CONSOLE_TEST_EVENTS, read from events/ at synth time. */
export function consoleTestEventPayloads(names: readonly string[] = CONSOLE_TEST_EVENTS): Record<string, unknown> {
  return Object.fromEntries(
    names.map((name) => [name, JSON.parse(readFileSync(new URL(`../events/${name}.json`, import.meta.url), 'utf8')) as unknown]),
  );
}

/**
 * Logical ids of the alarms as first deployed (before they moved into ScheduledSingletonJob), so
 * that an update changes them in place instead of replacing them (and their state history).
 */
const ALARM_LOGICAL_IDS: Record<JobAlarm, string> = {
  noSuccess: 'MonitoringNoSuccessfulSync07F0FE74',
  runFailed: 'MonitoringSyncFailed90F9C025',
  functionErrors: 'MonitoringFunctionErrors40FB895E',
  failureQueueMessages: 'MonitoringFailureQueueMessages023E853C',
  leaseLost: 'MonitoringLeaseLost29779930',
};

export class ContestSyncStack extends Stack {
  public readonly config: ContestSyncConfig;
  public readonly tables: DataTables;
  public readonly sync: ScheduledSingletonJob;
  public readonly monitoring: Monitoring;
  /**
   * Where the jobs' events go (docs/events.md): the outbox table and its stream, the relay, the
   * bus the app subscribes to, its schema registry, the delivery alarms. A job publishes with
   * `outbox: { delivery: stack.events, source: EVENT_SOURCES.<job>, schemas }`.
   */
  public readonly events: OutboxDelivery;
  public readonly tableParameters: Record<TableRole, ssm.StringParameter>;
  /** Reminder delivery, one job per byDue shard (docs/delivery.md). */
  public readonly delivery: ScheduledSingletonJob[];
  /** The app's door: the HTTP API and the calendar (docs/api.md). */
  public readonly door: Door;
  /** Signed webhooks to the operator's endpoint, if one is named (docs/events.md). */
  public readonly webhooks?: Webhooks;

  constructor(scope: Construct, id: string, props: ContestSyncStackProps) {
    const stageTag = props.config.stage === '' ? DEFAULT_STAGE_NAME : props.config.stage;
    super(scope, id, {
      description: 'contest-sync: scheduled, lease-guarded sync of Codeforces contests into DynamoDB',
      // Stack tags: CloudFormation puts them on every resource that takes tags, including the ones
      // CDK renders without a tag manager (the trigger's provider role and function).
      tags: { app: APP_TAG, stage: stageTag },
      ...props,
    });
    const { config } = props;
    this.config = config;

    // Construct ids and paths of the tables are their logical ids: never change them.
    this.tables = new DataTables(this, 'Tables');
    this.monitoring = new Monitoring(this, 'Monitoring', { config });
    this.events = new OutboxDelivery(this, 'Events', {
      // The windows a redrive relies on, set together (lambda/event-windows.ts, docs/events.md).
      retentionDays: EVENT_WINDOWS.outboxRetentionDays,
      maxRecordAge: Duration.seconds(EVENT_WINDOWS.maxRecordAgeSeconds),
      deadLetterRetention: Duration.seconds(EVENT_WINDOWS.deadLetterRetentionSeconds),
      metrics: { namespace: METRICS_NAMESPACE, service: `${SERVICE_NAME}-events` },
      alarmTopic: this.monitoring.topic,
      logRetention: config.logRetentionDays,
    });
    this.sync = this.syncJob(config);
    for (const [alarm, logicalId] of Object.entries(ALARM_LOGICAL_IDS) as [JobAlarm, string][]) {
      (this.sync.alarms[alarm].node.defaultChild as cloudwatch.CfnAlarm).overrideLogicalId(logicalId);
    }
    this.monitoring.addDashboard(this.sync);
    this.monitoring.addDelivery(this.events);

    // One job per byDue shard; each also serves the partitions a larger setting left rows in.
    this.delivery = Array.from({ length: config.dueShards }, (_, shard) => this.deliveryJob(shard, config));
    this.monitoring.addReminderDelivery(this.delivery);
    const bus = this.events.eventBus;
    this.door = new Door(this, 'Door', { config, tables: this.tables, bus, alarmTopic: this.monitoring.topic });
    this.gateReminderWrites(this.door.apiFunction);
    if (config.webhookUrl !== '') {
      const { webhookUrl: url, webhookRatePerSecond: ratePerSecond, logRetentionDays: logRetention } = config;
      this.webhooks = new Webhooks(this, 'Webhooks', { url, ratePerSecond, bus, alarmTopic: this.monitoring.topic, logRetention });
    }

    // Where the app (and other stacks) read the table names of this stage.
    this.tableParameters = this.addTableParameters(config);

    // Also in the template, on every resource with a tag manager.
    Tags.of(this).add('app', APP_TAG);
    Tags.of(this).add('stage', stageTag);
    this.addOutputs(config);
  }

  /** The sync: the hourly job on the package's construct, its environment, its table grants, its outbox. */
  private syncJob(config: ContestSyncConfig): ScheduledSingletonJob {
    return new ScheduledSingletonJob(this, 'Sync', {
      description: 'Syncs Codeforces contests into DynamoDB under a lease (contest-sync)',
      roleDescription: 'contest-sync function: its log group, its failure queue, and the listed DynamoDB actions only',
      scheduleDescription: config.schedulePaused
        ? 'Scheduled contest sync - PAUSED (context contestSync:schedulePaused)'
        : 'Scheduled contest sync (one logical sync per interval)',
      entry: fileURLToPath(new URL('../lambda/sync/handler.ts', import.meta.url)),
      schedule: events.Schedule.expression(config.scheduleExpression),
      periodMinutes: config.scheduleRateMinutes,
      paused: config.schedulePaused,
      leaseKey: LEASE_PK,
      runRecordPrefix: RUN_PK_PREFIX,
      coordinationTable: this.tables.coordination,
      leaseDuration: Duration.seconds(config.leaseDurationSeconds),
      timeout: Duration.seconds(config.functionTimeoutSeconds),
      logRetention: config.logRetentionDays,
      logLevel: config.logLevel,
      environment: {
        [ENV.contestsTable]: this.tables.contests.tableName,
        [ENV.remindersTable]: this.tables.reminders.tableName,
        [ENV.coordinationTable]: this.tables.coordination.tableName,
        [ENV.codeforcesApiUrl]: config.codeforcesApiUrl,
        [ENV.leaseDurationSeconds]: String(config.leaseDurationSeconds),
        [ENV.finishedRetentionDays]: String(config.finishedRetentionDays),
        [ENV.scheduleRateMinutes]: String(config.scheduleRateMinutes),
        [ENV.missingSyncsBeforeDelete]: String(config.missingSyncsBeforeDelete),
        [ENV.acceptHeldAfterReplies]: String(config.acceptHeldAfterReplies),
        [ENV.dueShards]: String(config.dueShards),
        // The upgrade's copy source: while its marker is not done, the sync copies (docs/runbook.md).
        [ENV.legacyContestsTable]: this.tables.legacyContests.tableName,
        [ENV.legacyRemindersTable]: this.tables.legacyReminders.tableName,
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_LOG_LEVEL: config.logLevel,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      },
      // The data tables (lib/table-access.ts); the job adds the Coordination grant itself.
      statements: [
        ...(['contests', 'reminders'] as const).map(
          (role) =>
            new iam.PolicyStatement({
              sid: `${role[0]!.toUpperCase()}${role.slice(1)}Table`,
              actions: [...TABLE_ACTIONS[role]],
              resources: [this.tables.byRole()[role].tableArn],
            }),
        ),
        // The sweep of byDue partitions a lowered DUE_SHARDS retired (docs/delivery.md).
        new iam.PolicyStatement({
          sid: 'RemindersDueIndex',
          actions: [...SYNC_DUE_INDEX_ACTIONS],
          resources: [`${this.tables.reminders.tableArn}/index/${REMINDERS_BY_DUE_INDEX}`],
        }),
        ...this.migrationStatements(),
      ],
      deployRunAfter: [this.tables],
      metrics: {
        namespace: METRICS_NAMESPACE,
        service: SERVICE_NAME,
        runSucceeded: METRIC.runSucceeded,
        runFailed: METRIC.runFailed,
        leaseLost: METRIC.leaseLost,
      },
      alarmTopic: this.monitoring.topic,
      noSuccessPeriods: 2,
      alarmDescriptions: ALARM_DESCRIPTIONS(config),
      // What it changed, as events (docs/events.md, "Contest events").
      outbox: { delivery: this.events, source: EVENT_SOURCES.contests, schemas: CONTEST_EVENT_SCHEMAS },
      consoleTestEvents: consoleTestEventPayloads(),
    });
  }

  /**
   * The upgrade's copy (lambda/migration/, MIGRATION_ACTIONS): the previous tables read, the new
   * Reminders' copies put, the marker and the delivery shards' leases in Coordination (their keys
   * only; the job's own lease and run records are the construct's grant).
   */
  private migrationStatements(): iam.PolicyStatement[] {
    const { legacyContests, legacyReminders, reminders, coordination } = this.tables;
    const keys = (leadingKeys: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': leadingKeys } });
    return [
      new iam.PolicyStatement({
        sid: 'MigrationLegacyTables',
        actions: [...MIGRATION_ACTIONS.legacy],
        resources: [legacyContests.tableArn, legacyReminders.tableArn],
      }),
      new iam.PolicyStatement({
        sid: 'MigrationReminderCopies',
        actions: [...MIGRATION_ACTIONS.reminders],
        resources: [reminders.tableArn],
      }),
      new iam.PolicyStatement({
        sid: 'MigrationMarker',
        actions: [...MIGRATION_ACTIONS.marker],
        resources: [coordination.tableArn],
        conditions: keys([MIGRATION_MARKER_PK]),
      }),
      new iam.PolicyStatement({
        sid: 'MigrationShardLeases',
        actions: [...MIGRATION_ACTIONS.shardLeases],
        resources: [coordination.tableArn],
        conditions: keys(Array.from({ length: MAX_DUE_SHARDS }, (_, shard) => deliveryLeaseKey(shard))),
      }),
    ];
  }

  /**
   * The upgrade (docs/runbook.md, "Upgrading to qualified keys"): the HTTP API's reminder writes
   * wait for the copy (503 `migrating`): it learns that the upgrade
   * applies from the previous tables' names (it is granted nothing on them) and reads the marker,
   * its one key in Coordination, until it says `done`.
   */
  private gateReminderWrites(fn: lambda.Function): void {
    // The copy waits for the functions that write beside it to run this release's code (the API's
    // gate, the delivery jobs on the new tables).
    this.sync.deployRun?.executeAfter(fn, ...this.delivery.map((job) => job.function));
    const { legacyContests, legacyReminders, coordination } = this.tables;
    fn.addEnvironment(ENV.legacyContestsTable, legacyContests.tableName);
    fn.addEnvironment(ENV.legacyRemindersTable, legacyReminders.tableName);
    fn.addEnvironment(ENV.coordinationTable, coordination.tableName);
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'MigrationMarker',
        actions: [...MIGRATION_GATE_ACTIONS],
        resources: [coordination.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [MIGRATION_MARKER_PK] } },
      }),
    );
  }

  /** Where the app (and other stacks) read the table names of this stage: one SSM parameter per table. */
  private addTableParameters(config: ContestSyncConfig): Record<TableRole, ssm.StringParameter> {
    return Object.fromEntries(
      TABLE_ROLES.map((role) => {
        const parameter = new ssm.StringParameter(this, `${role[0]!.toUpperCase()}${role.slice(1)}TableParameter`, {
          parameterName: tableParameterName(config.stage, role),
          stringValue: this.tables.byRole()[role].tableName,
          description: `contest-sync ${config.stage === '' ? DEFAULT_STAGE_NAME : config.stage}: name of the ${role} table`,
        });
        return [role, parameter];
      }),
    ) as Record<TableRole, ssm.StringParameter>;
  }

  /** The stack's outputs (their ids are the output names: never change them). */
  private addOutputs(config: ContestSyncConfig): void {
    const output = (id: string, value: string, description: string) => new CfnOutput(this, id, { value, description });
    output('ContestsTableName', this.tables.contests.tableName, 'Contests table (read by the app)');
    output('RemindersTableName', this.tables.reminders.tableName, 'Reminders table (written by the app)');
    output('CoordinationTableName', this.tables.coordination.tableName, 'Lease and run records');
    output(
      'LegacyContestsTableName',
      this.tables.legacyContests.tableName,
      'Contests of the previous release (numeric keys): what the upgrade copies',
    );
    output(
      'LegacyRemindersTableName',
      this.tables.legacyReminders.tableName,
      'Reminders of the previous release (numeric keys): what the upgrade copies',
    );
    for (const role of TABLE_ROLES) {
      output(
        `${role[0]!.toUpperCase()}${role.slice(1)}TableParameterName`,
        this.tableParameters[role].parameterName,
        `SSM parameter holding the ${role} table name`,
      );
    }
    output('FunctionName', this.sync.function.functionName, 'Sync function (console "Test" runs a sync now)');
    output(
      'ScheduleRuleName',
      this.sync.schedule.ruleName,
      `EventBridge rule of the schedule (${config.schedulePaused ? 'PAUSED' : 'enabled'}; pause with -c contestSync:schedulePaused=true)`,
    );
    output('LogGroupName', this.sync.logGroup.logGroupName, 'Function logs: one summary line per invocation (aws logs tail)');
    output('FailureQueueUrl', this.sync.failureQueue.queueUrl, 'Failed async invocations and undeliverable schedule events');
    output('AlarmTopicArn', this.monitoring.topic.topicArn, 'Alarm notifications');
    output('EventBusName', this.events.eventBus.eventBusName, 'EventBridge bus of the events the app subscribes to (docs/events.md)');
    output('EventBusArn', this.events.eventBus.eventBusArn, 'Its ARN, for rules in other stacks');
    output(
      'OutboxTableName',
      this.events.table.tableName,
      `Outbox of the events, kept ${EVENT_WINDOWS.outboxRetentionDays} days: what npm run redrive reads (docs/runbook.md, "Events not delivered")`,
    );
    output(
      'EventsDeadLetterQueueUrl',
      this.events.deadLetterQueue.queueUrl,
      'Outbox batches given up after every retry (docs/runbook.md, "Events not delivered")',
    );
    output('DashboardName', this.monitoring.dashboard.dashboardName, 'CloudWatch dashboard');
    output(
      'DeliveryFunctionName',
      this.delivery[0]!.function.functionName,
      'Reminder delivery function of shard 0 (console "Test" delivers what is due now)',
    );
  }

  /**
   * The delivery job of one byDue shard: every minute, its own lease (each shard is its own
   * singleton, so shards run side by side), its events through the shared outbox.
   */
  private deliveryJob(shard: number, config: ContestSyncConfig): ScheduledSingletonJob {
    const { reminders, contests } = this.tables;
    return new ScheduledSingletonJob(this, shard === 0 ? 'Delivery' : `Delivery${shard}`, {
      description: `Delivers due reminders of byDue shard ${shard} as ReminderDue events, each once (contest-sync)`,
      roleDescription:
        'contest-sync reminder delivery: its log group, its failure queue, the byDue query, the claim, contest reads and checks, its outbox keys',
      scheduleDescription: config.schedulePaused
        ? 'Reminder delivery - PAUSED (context contestSync:schedulePaused)'
        : 'Reminder delivery, every minute',
      entry: fileURLToPath(new URL('../lambda/delivery/handler.ts', import.meta.url)),
      schedule: events.Schedule.rate(Duration.minutes(1)),
      periodMinutes: 1,
      paused: config.schedulePaused,
      leaseKey: deliveryLeaseKey(shard),
      runRecordPrefix: deliveryRunRecordPrefix(shard),
      coordinationTable: this.tables.coordination,
      leaseDuration: Duration.seconds(30),
      timeout: Duration.seconds(120),
      logRetention: config.logRetentionDays,
      logLevel: config.logLevel,
      environment: {
        [DELIVERY_ENV.contestsTable]: contests.tableName,
        [DELIVERY_ENV.remindersTable]: reminders.tableName,
        [DELIVERY_ENV.dueShard]: String(shard),
        [DELIVERY_ENV.dueShards]: String(config.dueShards),
        POWERTOOLS_LOG_LEVEL: config.logLevel,
      },
      statements: [
        new iam.PolicyStatement({
          sid: 'RemindersDueIndex',
          actions: [...DELIVERY_ACTIONS.remindersIndex],
          resources: [`${reminders.tableArn}/index/${REMINDERS_BY_DUE_INDEX}`],
        }),
        new iam.PolicyStatement({ sid: 'RemindersClaim', actions: [...DELIVERY_ACTIONS.reminders], resources: [reminders.tableArn] }),
        new iam.PolicyStatement({ sid: 'ContestsReadCheck', actions: [...DELIVERY_ACTIONS.contests], resources: [contests.tableArn] }),
      ],
      deployRunAfter: [this.tables],
      metrics: { namespace: METRICS_NAMESPACE, service: `reminder-delivery-${shard}` },
      alarmTopic: this.monitoring.topic,
      noSuccessPeriods: 10,
      outbox: {
        delivery: this.events,
        source: shard === 0 ? EVENT_SOURCES.reminders : `${EVENT_SOURCES.reminders}.${shard}`,
        schemas: { ReminderDue: REMINDER_DUE_DETAIL_SCHEMA },
      },
      consoleTestEvents: consoleTestEventPayloads(DELIVERY_CONSOLE_TEST_EVENTS),
    });
  }
}

/** contest-sync's runbook text for each alarm. */
function ALARM_DESCRIPTIONS(config: ContestSyncConfig): Record<JobAlarm, string> {
  return {
    noSuccess:
      `No contest sync succeeded in the last ${2 * config.scheduleRateMinutes} minutes (2 schedule intervals): ` +
      'the Contests table is going stale. First look at the function logs (Logs Insights, filter on ' +
      'outcome/phase) and the SyncFailed / FunctionErrors alarms: a Codeforces outage shows as ' +
      'phase "codeforces", a stuck lease as repeated "lease-held" skips, no log lines at all means ' +
      'the schedule rule is disabled or the function cannot be invoked.',
    runFailed:
      'A contest sync run ended with outcome "failed". First read its summary line in the function ' +
      'logs: the phase (lease, codeforces, store) says where it failed. Scheduled runs are retried ' +
      'by Lambda; a single codeforces failure usually clears on the next interval.',
    functionErrors:
      'The contest sync function threw or timed out (Lambda Errors metric), which the handler does ' +
      'only for invalid events, upstream failures on scheduled runs, or bugs. First search the ' +
      'function logs for level ERROR and "Task timed out"; check the failure queue for the event.',
    failureQueueMessages:
      'Messages are waiting in the contest sync failure queue: scheduled invocations that failed ' +
      'after all Lambda retries (Lambda destination record with the error), or schedule events ' +
      'EventBridge could not deliver. First read a message (SQS console, "Poll for messages") for ' +
      'the error, fix the cause, then purge the queue; messages expire after 14 days.',
    leaseLost:
      'A contest sync run lost its lease mid-run and aborted (another run took over, or heartbeats ' +
      'could not renew it). Occasional losses are safe by design (fenced writes); repeated ones mean ' +
      'runs outlive the lease: first compare Duration with LEASE_DURATION_SECONDS and look for ' +
      'DynamoDB throttling or slow Codeforces responses in the logs.',
  };
}
