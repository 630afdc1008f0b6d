/**
 * ScheduledSingletonJob: one Lambda function that runs a job exclusively once per schedule
 * interval with the package's runtime part (`scheduledSingleton`, `runExclusively`), and
 * everything around it:
 *
 *   - the function (Node.js 22, arm64, ESM bundle built with the adopter's esbuild, no Docker),
 *     its own role (no managed policy), its own log group (JSON logs, retention);
 *   - the EventBridge schedule (pausable: the rule stays, disabled), a deploy-time run
 *     (triggers.Trigger on the published version), async retries and max event age, one SQS
 *     failure queue (Lambda on-failure destination and the rule target's DLQ, TLS only);
 *   - the coordination table (created, or passed in so that several jobs share one), with grants
 *     scoped by `dynamodb:LeadingKeys` to the job's own lease item and run records;
 *   - the standard alarms on the metrics the wrapper emits (no success in N periods, runs failed,
 *     lease lost) and on Lambda and SQS (function errors, failure queue messages), on an SNS topic
 *     (created, or passed in); optionally a dashboard of the same metrics.
 *
 * The function receives the JOB_ENV variables of the contract (table, lease key, run-record prefix,
 * timing, period, metrics namespace and service; names overridable) besides `environment`: the
 * wrapper reads exactly those. Props are typed and validated at synth time with the runtime's own
 * timing rules; the construct never reads CDK context.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as triggers from 'aws-cdk-lib/triggers';
import { Construct } from 'constructs';
import { JOB_ENV, METRIC, type JobEnvNames } from '../contract.js';
import { ScheduledSingletonJobError } from '../runtime/errors.js';
import { leaseTiming, minimumFunctionTimeoutMs } from '../runtime/timing.js';
import { acknowledgeJobNagFindings } from './acknowledge.js';
import { ConsoleTestEvents } from './console-test-events.js';
import { AT_LEAST_ONE, BUNDLING, findProject, serviceMetric } from './function-parts.js';
import type { DetailSchema, OutboxDelivery } from './outbox-delivery.js';

/** A job's events: where they go, under which source, with which schemas (see OutboxDelivery). */
export interface JobOutbox {
  /** The outbox, its relay and bus (one OutboxDelivery may serve several jobs, each its own source). */
  readonly delivery: OutboxDelivery;
  /** The EventBridge `source` of the job's events, e.g. `contest-sync.reminders` (not `aws.`). */
  readonly source: string;
  /**
   * JSON Schema (draft 4) of each detail-type's `detail`, published in the bus's schema registry.
   * @default none: no schema is published
   */
  readonly schemas?: Readonly<Record<string, DetailSchema>>;
}

/** Defaults of the async invocation: Lambda keeps an event this long (retries included). */
export const ASYNC_MAX_EVENT_AGE = Duration.hours(2);
export const ASYNC_RETRY_ATTEMPTS = 2;

/** Bounds the runtime's lease timing (`leaseTiming`) imposes on a job. */
export const JOB_LIMITS = {
  /** A crashed run's lease must lapse before Lambda's first async retry (about a minute later). */
  maxLeaseSeconds: 50,
  /** The function timeout leaves this many lease durations of room (heartbeat every lease/3). */
  minTimeoutToLeaseRatio: 3,
  /** The deploy-time run waits inside a provider function that itself stops at 15 minutes. */
  maxTimeoutSeconds: 840,
  /** Extra time the deploy-time run waits beyond the function timeout. */
  triggerTimeoutMarginSeconds: 30,
} as const;

/** Environment variable names the construct sets on the function (the contract's; override per job if needed). */
export { JOB_ENV };

export type JobAlarm = 'noSuccess' | 'runFailed' | 'functionErrors' | 'failureQueueMessages' | 'leaseLost';

/**
 * Where the job's metrics go: the construct sets both on the function (JOB_ENV), the wrapper emits
 * under them, and the alarms read them. The metric names are the contract's (METRIC), not settable.
 */
export interface JobMetrics {
  /** EMF namespace. */
  readonly namespace: string;
  /** Value of the `service` dimension every metric carries (Powertools' default dimension). */
  readonly service: string;
  /**
   * Accepted for compatibility; only the contract's names are possible.
   * @default METRIC.runSucceeded
   */
  readonly runSucceeded?: typeof METRIC.runSucceeded;
  /** @default METRIC.runFailed */
  readonly runFailed?: typeof METRIC.runFailed;
  /** @default METRIC.leaseLost */
  readonly leaseLost?: typeof METRIC.leaseLost;
}

export interface ScheduledSingletonJobProps {
  /** The handler file (TypeScript or JavaScript), bundled with esbuild; exports `handler`. */
  readonly entry: string;
  /**
   * Exported handler name.
   * @default 'handler'
   */
  readonly handler?: string;
  /**
   * The function's description.
   * @default none
   */
  readonly description?: string;
  /**
   * The role's description.
   * @default what the role may do
   */
  readonly roleDescription?: string;
  /**
   * The rule's description.
   * @default says whether the schedule is paused
   */
  readonly scheduleDescription?: string;
  /**
   * The project the function is bundled from.
   * @default the nearest folder above `entry` (else the current directory) with a lock file (LOCK_FILES)
   */
  readonly projectRoot?: string;
  /**
   * The project's lock file.
   * @default that folder's lock file
   */
  readonly depsLockFilePath?: string;

  /** When the job runs, e.g. `events.Schedule.cron({ minute: '0' })`. */
  readonly schedule: events.Schedule;
  /** Minutes between two scheduled runs: the interval length and the no-success alarm's period. */
  readonly periodMinutes: number;
  /**
   * The rule stays but is disabled, and the no-success alarm sends no notification.
   * @default false
   */
  readonly paused?: boolean;

  /** The job's lease item in the coordination table, e.g. `lease#my-job`. */
  readonly leaseKey: string;
  /** Prefix of the job's run records, e.g. `run#my-job#`. */
  readonly runRecordPrefix: string;
  /**
   * Shared coordination table (partition key `pk`, TTL `ttl`).
   * @default a table created for the job (createCoordinationTable)
   */
  readonly coordinationTable?: dynamodb.ITable;
  /**
   * The DynamoDB actions the job may send to the coordination table.
   * @default COORDINATION_ACTIONS: what DynamoLease and DynamoFencedWriter send
   */
  readonly coordinationActions?: readonly string[];

  /**
   * Lease duration, 2–50 s.
   * @default Duration.seconds(30)
   */
  readonly leaseDuration?: Duration;
  /**
   * Function timeout: at least 3 leases, at most 840 s.
   * @default Duration.seconds(120)
   */
  readonly timeout?: Duration;
  /** @default 256 */
  readonly memorySize?: number;
  /** @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Lambda's application log level filter.
   * @default 'INFO'
   */
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /**
   * The job's own settings; the construct adds the JOB_ENV variables and NODE_OPTIONS.
   * @default none
   */
  readonly environment?: Record<string, string>;
  /**
   * Names of the variables the construct sets (pass the same to the wrapper's `envNames`).
   * @default JOB_ENV
   */
  readonly environmentNames?: Partial<JobEnvNames>;
  /**
   * The work's own data access (its tables), added to the role before the coordination grant.
   * @default none
   */
  readonly statements?: readonly iam.PolicyStatement[];

  /**
   * Run once at deploy time, after `deployRunAfter` (never while `paused`).
   * @default true
   */
  readonly deployRun?: boolean;
  /**
   * What the deploy-time run waits for, besides the coordination table and the role.
   * @default none
   */
  readonly deployRunAfter?: readonly Construct[];
  /**
   * Lambda's async retries of a failed run.
   * @default ASYNC_RETRY_ATTEMPTS (2)
   */
  readonly asyncRetries?: number;
  /**
   * How long Lambda keeps an event, retries included.
   * @default ASYNC_MAX_EVENT_AGE (2 hours)
   */
  readonly maxEventAge?: Duration;

  /** The metrics the job emits (EMF): the alarms read them. */
  readonly metrics: JobMetrics;
  /**
   * Alarm topic.
   * @default a topic created for the job (TLS only)
   */
  readonly alarmTopic?: sns.ITopic;
  /**
   * E-mail subscribed to the created topic (ignored when `alarmTopic` is passed).
   * @default none
   */
  readonly alarmEmail?: string;
  /**
   * Consecutive periods without a successful run before the no-success alarm fires.
   * @default 2
   */
  readonly noSuccessPeriods?: number;
  /**
   * Alarm descriptions (runbook text).
   * @default generic descriptions
   */
  readonly alarmDescriptions?: Partial<Record<JobAlarm, string>>;
  /**
   * Create a CloudWatch dashboard of the job's metrics and alarms (see `widgets()`).
   * @default false
   */
  readonly dashboard?: boolean;
  /**
   * Payloads by name, deployed as the function's shareable console test events (ConsoleTestEvents).
   * @default none
   */
  readonly consoleTestEvents?: Readonly<Record<string, unknown>>;
  /**
   * Effectively-once events (`commit(actions, { events })`): the job writes them to this outbox,
   * PutItem on its own source's keys only, and the delivery puts them on its bus.
   * @default none: a commit with events fails
   */
  readonly outbox?: JobOutbox;
}

/** What the coordination table must allow for DynamoLease and DynamoFencedWriter (no Query, no Scan). */
export const COORDINATION_ACTIONS = ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:ConditionCheckItem'] as const;

/** A coordination table as the module expects it: partition key `pk` (S), TTL `ttl`, on demand, PITR. */
export function createCoordinationTable(scope: Construct, id: string): dynamodb.Table {
  return new dynamodb.Table(scope, id, {
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    timeToLiveAttribute: 'ttl',
    // Lease and run records only: nothing of value outlives the stack.
    removalPolicy: RemovalPolicy.DESTROY,
  });
}

/** Minutes of a `rate(...)` expression, or undefined for a `cron(...)` one. */
export function rateMinutes(expression: string): number | undefined {
  const match = /^rate\(\s*(\d+)\s+(minute|minutes|hour|hours|day|days)\s*\)$/.exec(expression);
  if (!match) return undefined;
  const amount = Number(match[1]);
  const unit = match[2] ?? '';
  return unit.startsWith('minute') ? amount : unit.startsWith('hour') ? amount * 60 : amount * 1440;
}

function validate(props: ScheduledSingletonJobProps, leaseSeconds: number, timeoutSeconds: number): void {
  const fail = (what: string): never => {
    throw new ScheduledSingletonJobError(`ScheduledSingletonJob: ${what}`);
  };
  if (!Number.isInteger(props.periodMinutes) || props.periodMinutes < 1 || props.periodMinutes > 1440) {
    fail(`periodMinutes must be an integer from 1 to 1440, got ${props.periodMinutes}`);
  }
  const implied = rateMinutes(props.schedule.expressionString);
  if (implied !== undefined && implied !== props.periodMinutes) {
    fail(`schedule ${props.schedule.expressionString} runs every ${implied} minutes but periodMinutes is ${props.periodMinutes}`);
  }
  if (props.leaseKey === '' || props.runRecordPrefix === '' || props.leaseKey.startsWith(props.runRecordPrefix)) {
    fail(
      `leaseKey (${props.leaseKey}) and runRecordPrefix (${props.runRecordPrefix}) must be non-empty and the lease key outside the prefix`,
    );
  }
  if (!Number.isInteger(leaseSeconds) || leaseSeconds > JOB_LIMITS.maxLeaseSeconds) {
    fail(`leaseDuration must be whole seconds, at most ${JOB_LIMITS.maxLeaseSeconds}, got ${leaseSeconds}`);
  }
  let timing;
  try {
    timing = leaseTiming(leaseSeconds);
  } catch (error) {
    return fail(`leaseDuration: ${(error as Error).message}`);
  }
  if (timeoutSeconds > JOB_LIMITS.maxTimeoutSeconds)
    fail(`timeout must be at most ${JOB_LIMITS.maxTimeoutSeconds}s, got ${timeoutSeconds}s`);
  if (timeoutSeconds < JOB_LIMITS.minTimeoutToLeaseRatio * leaseSeconds) {
    fail(`timeout (${timeoutSeconds}s) must be at least ${JOB_LIMITS.minTimeoutToLeaseRatio} x leaseDuration (${leaseSeconds}s)`);
  }
  if (timeoutSeconds * 1000 <= minimumFunctionTimeoutMs(timing)) {
    fail(
      `timeout (${timeoutSeconds}s) must exceed ${Math.ceil(minimumFunctionTimeoutMs(timing) / 1000)}s: the release margin plus one renewal period`,
    );
  }
  if ((props.noSuccessPeriods ?? 2) < 1) fail('noSuccessPeriods must be at least 1');
}

export class ScheduledSingletonJob extends Construct {
  public readonly function: NodejsFunction;
  public readonly role: iam.Role;
  public readonly logGroup: logs.LogGroup;
  /** Async invocations that failed after retries, and schedule events EventBridge could not deliver. */
  public readonly failureQueue: sqs.Queue;
  public readonly schedule: events.Rule;
  public readonly deployRun?: triggers.Trigger;
  public readonly coordinationTable: dynamodb.ITable;
  public readonly alarmTopic: sns.ITopic;
  /** Set when the construct created the topic with an e-mail subscription. */
  public readonly emailSubscription?: sns.Subscription;
  public readonly alarms: Readonly<Record<JobAlarm, cloudwatch.Alarm>>;
  public readonly leaseDurationSeconds: number;
  public readonly periodMinutes: number;
  public readonly metrics: JobMetrics;
  public readonly dashboard?: cloudwatch.Dashboard;
  public readonly consoleTestEvents?: ConsoleTestEvents;
  /** The job's outbox, when it publishes events. */
  public readonly outbox?: JobOutbox;

  constructor(scope: Construct, id: string, props: ScheduledSingletonJobProps) {
    super(scope, id);
    const leaseSeconds = (props.leaseDuration ?? Duration.seconds(30)).toSeconds();
    const timeoutSeconds = (props.timeout ?? Duration.seconds(120)).toSeconds();
    validate(props, leaseSeconds, timeoutSeconds);
    this.leaseDurationSeconds = leaseSeconds;
    this.periodMinutes = props.periodMinutes;
    this.metrics = props.metrics;
    const paused = props.paused ?? false;

    this.coordinationTable = props.coordinationTable ?? createCoordinationTable(this, 'Coordination');
    this.logGroup = new logs.LogGroup(this, 'LogGroup', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.role = this.createRole(id, props);
    if (props.outbox !== undefined) {
      this.outbox = props.outbox;
      props.outbox.delivery.addEventSource(props.outbox.source, props.outbox.schemas);
      this.role.addToPolicy(props.outbox.delivery.publishStatement(props.outbox.source));
    }
    this.failureQueue = new sqs.Queue(this, 'FailureQueue', {
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      retentionPeriod: Duration.days(14),
    });
    this.function = this.createFunction(props, timeoutSeconds);
    this.schedule = this.createSchedule(id, props, paused);
    // A paused job does not run at deploy time either: a pause stops every automatic run.
    if ((props.deployRun ?? true) && !paused) this.deployRun = this.createDeployRun(props, timeoutSeconds);

    const alarmTopic = this.createAlarmTopic(id, props);
    this.alarmTopic = alarmTopic.topic;
    if (alarmTopic.subscription !== undefined) this.emailSubscription = alarmTopic.subscription;
    this.alarms = this.createAlarms(props, paused);
    if (props.dashboard === true) {
      this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { widgets: [this.widgets()] });
    }
    if (props.consoleTestEvents)
      this.consoleTestEvents = new ConsoleTestEvents(this, 'ConsoleTestEvents', {
        function: this.function,
        events: props.consoleTestEvents,
      });

    acknowledgeJobNagFindings(this);
  }

  /** The function's role: its log group, the adopter's statements, and its own coordination items only. */
  private createRole(id: string, props: ScheduledSingletonJobProps): iam.Role {
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: props.roleDescription ?? `${id} job function: its log group, its failure queue, and the listed DynamoDB actions only`,
    });
    this.logGroup.grantWrite(role);
    for (const statement of props.statements ?? []) role.addToPolicy(statement);
    // Only the job's own lease item and run records: jobs sharing the table cannot touch each other's.
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'CoordinationTable',
        actions: [...(props.coordinationActions ?? COORDINATION_ACTIONS)],
        resources: [this.coordinationTable.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [props.leaseKey, `${props.runRecordPrefix}*`] } },
      }),
    );
    return role;
  }

  /** The variables the wrapper reads: the adopter's keep their position, the construct's values win. */
  private environment(props: ScheduledSingletonJobProps): Record<string, string> {
    const envNames: JobEnvNames = { ...JOB_ENV, ...props.environmentNames };
    return {
      ...props.environment,
      [envNames.coordinationTable]: this.coordinationTable.tableName,
      [envNames.leaseDurationSeconds]: String(this.leaseDurationSeconds),
      [envNames.scheduleRateMinutes]: String(props.periodMinutes),
      // The rule's target and the function keep events this long: the ledger remembers twice that.
      [envNames.maxEventAgeSeconds]: String((props.maxEventAge ?? ASYNC_MAX_EVENT_AGE).toSeconds()),
      [envNames.leaseKey]: props.leaseKey,
      [envNames.runRecordPrefix]: props.runRecordPrefix,
      [envNames.metricsNamespace]: props.metrics.namespace,
      [envNames.serviceName]: props.metrics.service,
      ...(props.outbox !== undefined
        ? {
            [envNames.outboxTable]: props.outbox.delivery.table.tableName,
            [envNames.eventSource]: props.outbox.source,
            [envNames.outboxRetentionDays]: String(props.outbox.delivery.retentionDays),
          }
        : {}),
      NODE_OPTIONS: '--enable-source-maps',
    };
  }

  /** The bundled function: Node.js 22 on arm64, JSON logs, failures to the failure queue. */
  private createFunction(props: ScheduledSingletonJobProps, timeoutSeconds: number): NodejsFunction {
    const project = props.projectRoot === undefined || props.depsLockFilePath === undefined ? findProject(props.entry) : undefined;
    const projectRoot = props.projectRoot ?? project?.projectRoot;
    const depsLockFilePath = props.depsLockFilePath ?? project?.depsLockFilePath;
    return new NodejsFunction(this, 'Function', {
      ...(props.description === undefined ? {} : { description: props.description }),
      entry: props.entry,
      handler: props.handler ?? 'handler',
      ...(projectRoot !== undefined ? { projectRoot } : {}),
      ...(depsLockFilePath !== undefined ? { depsLockFilePath } : {}),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 256,
      timeout: Duration.seconds(timeoutSeconds),
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      applicationLogLevelV2: lambda.ApplicationLogLevel[props.logLevel ?? 'INFO'],
      // Nothing is instrumented; active tracing would record empty segments (nothing in the wrapper calls X-Ray).
      tracing: lambda.Tracing.DISABLED,
      environment: this.environment(props),
      // The deploy-time run invokes a published version; old ones serve nothing once replaced.
      currentVersionOptions: { removalPolicy: RemovalPolicy.DESTROY },
      onFailure: new destinations.SqsDestination(this.failureQueue),
      retryAttempts: props.asyncRetries ?? ASYNC_RETRY_ATTEMPTS,
      maxEventAge: props.maxEventAge ?? ASYNC_MAX_EVENT_AGE,
      bundling: { ...BUNDLING, mainFields: [...BUNDLING.mainFields], externalModules: [] },
    });
  }

  /** The schedule's rule (disabled while paused), its events undeliverable to the failure queue. */
  private createSchedule(id: string, props: ScheduledSingletonJobProps, paused: boolean): events.Rule {
    const schedule = new events.Rule(this, 'Schedule', {
      description:
        props.scheduleDescription ?? (paused ? `Scheduled ${id} job - PAUSED` : `Scheduled ${id} job (one logical run per interval)`),
      schedule: props.schedule,
      enabled: !paused,
    });
    const maxEventAge = props.maxEventAge ?? ASYNC_MAX_EVENT_AGE;
    const retryAttempts = props.asyncRetries ?? ASYNC_RETRY_ATTEMPTS;
    schedule.addTarget(new targets.LambdaFunction(this.function, { deadLetterQueue: this.failureQueue, maxEventAge, retryAttempts }));
    return schedule;
  }

  /** The deploy-time run, after the tables, the relay and the role it needs. */
  private createDeployRun(props: ScheduledSingletonJobProps, timeoutSeconds: number): triggers.Trigger {
    return new triggers.Trigger(this, 'DeploySync', {
      handler: this.function,
      executeAfter: [
        ...(props.deployRunAfter ?? []),
        ...(this.coordinationTable instanceof Construct ? [this.coordinationTable] : []),
        // A deploy-time run's events are delivered: the relay reads the stream from its start.
        ...(props.outbox !== undefined ? [props.outbox.delivery] : []),
        this.role,
      ],
      executeOnHandlerChange: true,
      invocationType: triggers.InvocationType.REQUEST_RESPONSE,
      timeout: Duration.seconds(timeoutSeconds + JOB_LIMITS.triggerTimeoutMarginSeconds),
    });
  }

  /** The adopter's topic, or one of the job's own with the optional e-mail subscription. */
  private createAlarmTopic(id: string, props: ScheduledSingletonJobProps): { topic: sns.ITopic; subscription?: sns.Subscription } {
    if (props.alarmTopic !== undefined) return { topic: props.alarmTopic };
    const topic = new sns.Topic(this, 'AlarmTopic', { displayName: `${id} alarms`, enforceSSL: true });
    if (props.alarmEmail === undefined || props.alarmEmail === '') return { topic };
    return { topic, subscription: topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail)) };
  }

  /** A metric the job emits (EMF, dimension `service`). */
  metric(
    metricName: string,
    statistic: string,
    period: Duration = Duration.minutes(this.periodMinutes),
    label?: string,
  ): cloudwatch.Metric {
    return serviceMetric(this.metrics, metricName, statistic, period, label);
  }

  /** Widgets of the job's metrics (runs by outcome, lease lost, duration) and its alarms. */
  widgets(): cloudwatch.IWidget[] {
    const period = Duration.minutes(this.periodMinutes);
    return [
      new cloudwatch.GraphWidget({
        title: 'Runs by outcome',
        left: [
          this.metric(METRIC.runSucceeded, 'Sum', period, 'Succeeded'),
          this.metric(METRIC.runSkipped, 'Sum', period, 'Skipped'),
          this.metric(METRIC.runFailed, 'Sum', period, 'Failed'),
          this.metric(METRIC.leaseLost, 'Sum', period, 'Lease lost'),
        ],
      }),
      new cloudwatch.GraphWidget({
        title: 'Run duration (ms)',
        left: [this.metric(METRIC.duration, 'Average', period, 'Average'), this.metric(METRIC.duration, 'Maximum', period, 'Maximum')],
      }),
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: Object.values(this.alarms) }),
    ];
  }

  private createAlarms(props: ScheduledSingletonJobProps, paused: boolean): Record<JobAlarm, cloudwatch.Alarm> {
    const names = { runSucceeded: METRIC.runSucceeded, runFailed: METRIC.runFailed, leaseLost: METRIC.leaseLost };
    const periods = props.noSuccessPeriods ?? 2;
    const text = props.alarmDescriptions ?? {};
    const scope = new Construct(this, 'Alarms');
    const action = new cwActions.SnsAction(this.alarmTopic);
    const alarm = (alarmId: string, alarmProps: cloudwatch.AlarmProps): cloudwatch.Alarm => {
      const created = new cloudwatch.Alarm(scope, alarmId, alarmProps);
      created.addAlarmAction(action);
      created.addOkAction(action);
      return created;
    };
    const fiveMinutes = Duration.minutes(5);
    const atLeastOne = AT_LEAST_ONE;
    return {
      noSuccess: alarm('NoSuccessfulRun', {
        alarmDescription:
          (text.noSuccess ?? `No run succeeded in the last ${periods * props.periodMinutes} minutes (${periods} schedule intervals).`) +
          (paused ? ' PAUSED: notifications are off.' : ''),
        metric: this.metric(names.runSucceeded, 'Sum'),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: periods,
        datapointsToAlarm: periods,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
        // A deliberate pause stops the runs this alarm counts: it alarms as usual but notifies no one.
        actionsEnabled: !paused,
      }),
      runFailed: alarm('RunFailed', {
        alarmDescription: text.runFailed ?? 'A run ended with outcome "failed": read its summary line in the function logs.',
        metric: this.metric(names.runFailed, 'Sum', fiveMinutes),
        ...atLeastOne,
      }),
      functionErrors: alarm('FunctionErrors', {
        alarmDescription: text.functionErrors ?? 'The function threw or timed out (Lambda Errors metric): search its logs for level ERROR.',
        metric: this.function.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
        ...atLeastOne,
      }),
      failureQueueMessages: alarm('FailureQueueMessages', {
        alarmDescription:
          text.failureQueueMessages ??
          'Messages wait in the failure queue: invocations that failed after every retry. Read one for the error, fix the cause, purge.',
        metric: this.failureQueue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' }),
        ...atLeastOne,
      }),
      leaseLost: alarm('LeaseLost', {
        alarmDescription:
          text.leaseLost ?? 'A run lost its lease mid-run and aborted (safe by design; repeated losses mean runs outlive the lease).',
        metric: this.metric(names.leaseLost, 'Sum', fiveMinutes),
        ...atLeastOne,
      }),
    };
  }
}
