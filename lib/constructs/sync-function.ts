/**
 * The ContestSync function and everything that invokes it: the EventBridge schedule, the
 * deploy-time trigger, and the async on-failure queue. Its IAM role is built here by hand (no
 * AWSLambdaBasicExecutionRole managed policy) so that it can do exactly three things: write to its
 * own log group, send failed events to its queue, and call the DynamoDB actions listed in
 * ../table-access.ts. X-Ray tracing is off: nothing in the function is instrumented, so active
 * tracing recorded only empty invocation segments and needed a Resource "*" grant (README
 * "Tracing").
 */
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as triggers from 'aws-cdk-lib/triggers';
import { Construct } from 'constructs';
import { ENV, METRICS_NAMESPACE, SERVICE_NAME } from '../../lambda/contract.js';
import { TRIGGER_TIMEOUT_MARGIN_SECONDS, type ContestSyncConfig } from '../config.js';
import { TABLE_ACTIONS, TABLE_LEADING_KEYS, TABLE_ROLES } from '../table-access.js';
import type { DataTables } from './data-tables.js';

const repoPath = (relative: string): string => fileURLToPath(new URL(`../../${relative}`, import.meta.url));

/** Lambda keeps an async event this long (retries included) before it goes to the failure queue. */
export const ASYNC_MAX_EVENT_AGE = Duration.hours(2);
export const ASYNC_RETRY_ATTEMPTS = 2;

/** An ESM bundle has no `require`; some CommonJS dependencies inside the bundle still call it. */
export const ESM_REQUIRE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/** Largest `index.mjs` the function may ship (test/infra/bundle.test.ts fails above it). */
export const BUNDLE_BUDGET_BYTES = 1024 * 1024;

/**
 * How esbuild bundles the function. local/bundle-deps.ts builds with the same settings to attribute the
 * bundle's bytes to dependencies (esbuild metafile).
 */
export const BUNDLING = {
  format: OutputFormat.ESM,
  target: 'node22',
  minify: true,
  sourceMap: true,
  // Stack traces map back to lambda/*.ts; the sources themselves need not ship (smaller map, faster import).
  sourcesContent: false,
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
  externalModules: [],
  forceDockerBundling: false,
} as const satisfies BundlingOptions;

export interface SyncFunctionProps {
  readonly config: ContestSyncConfig;
  readonly tables: DataTables;
}

export class SyncFunction extends Construct {
  public readonly function: NodejsFunction;
  public readonly role: iam.Role;
  public readonly logGroup: logs.LogGroup;
  /** Async invocations that failed after retries, and schedule events EventBridge could not deliver. */
  public readonly failureQueue: sqs.Queue;
  public readonly schedule: events.Rule;
  public readonly deployTrigger: triggers.Trigger;

  constructor(scope: Construct, id: string, props: SyncFunctionProps) {
    super(scope, id);
    const { config, tables } = props;

    this.logGroup = new logs.LogGroup(this, 'LogGroup', {
      retention: config.logRetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'contest-sync function: its log group, its failure queue, and the listed DynamoDB actions only',
    });
    this.logGroup.grantWrite(this.role);
    const byRole = tables.byRole();
    for (const role of TABLE_ROLES) {
      const leadingKeys = TABLE_LEADING_KEYS[role];
      this.role.addToPolicy(
        new iam.PolicyStatement({
          sid: `${role[0]!.toUpperCase()}${role.slice(1)}Table`,
          actions: [...TABLE_ACTIONS[role]],
          resources: [byRole[role].tableArn],
          ...(leadingKeys !== undefined
            ? { conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...leadingKeys] } } }
            : {}),
        }),
      );
    }

    this.failureQueue = new sqs.Queue(this, 'FailureQueue', {
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      retentionPeriod: Duration.days(14),
    });

    this.function = new NodejsFunction(this, 'Function', {
      description: 'Syncs Codeforces contests into DynamoDB under a lease (contest-sync)',
      entry: repoPath('lambda/handler.ts'),
      handler: 'handler',
      projectRoot: repoPath(''),
      depsLockFilePath: repoPath('package-lock.json'),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.seconds(config.functionTimeoutSeconds),
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      // Lambda's own filter at the same level as the logger (context contestSync:logLevel).
      applicationLogLevelV2: lambda.ApplicationLogLevel[config.logLevel],
      tracing: lambda.Tracing.DISABLED,
      environment: {
        [ENV.contestsTable]: tables.contests.tableName,
        [ENV.remindersTable]: tables.reminders.tableName,
        [ENV.coordinationTable]: tables.coordination.tableName,
        [ENV.codeforcesApiUrl]: config.codeforcesApiUrl,
        [ENV.leaseDurationSeconds]: String(config.leaseDurationSeconds),
        [ENV.finishedRetentionDays]: String(config.finishedRetentionDays),
        [ENV.scheduleRateMinutes]: String(config.scheduleRateMinutes),
        [ENV.missingSyncsBeforeDelete]: String(config.missingSyncsBeforeDelete),
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_LOG_LEVEL: config.logLevel,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        NODE_OPTIONS: '--enable-source-maps',
      },
      // The deploy-time trigger invokes a published version; old ones serve nothing once replaced.
      currentVersionOptions: { removalPolicy: RemovalPolicy.DESTROY },
      onFailure: new destinations.SqsDestination(this.failureQueue),
      retryAttempts: ASYNC_RETRY_ATTEMPTS,
      maxEventAge: ASYNC_MAX_EVENT_AGE,
      bundling: { ...BUNDLING, mainFields: [...BUNDLING.mainFields], externalModules: [] },
    });

    // Paused (context contestSync:schedulePaused): the rule and its target stay, disabled.
    this.schedule = new events.Rule(this, 'Schedule', {
      description: config.schedulePaused
        ? 'Scheduled contest sync - PAUSED (context contestSync:schedulePaused)'
        : 'Scheduled contest sync (one logical sync per interval)',
      schedule: events.Schedule.expression(config.scheduleExpression),
      enabled: !config.schedulePaused,
    });
    this.schedule.addTarget(
      new targets.LambdaFunction(this.function, {
        deadLetterQueue: this.failureQueue,
        maxEventAge: ASYNC_MAX_EVENT_AGE,
        retryAttempts: ASYNC_RETRY_ATTEMPTS,
      }),
    );

    // Sync once at deploy time so a fresh stack has data. The function reports Codeforces outages
    // as {outcome:"failed"} instead of throwing, so only a real function error fails the deploy.
    this.deployTrigger = new triggers.Trigger(this, 'DeploySync', {
      handler: this.function,
      executeAfter: [tables, this.role],
      executeOnHandlerChange: true,
      invocationType: triggers.InvocationType.REQUEST_RESPONSE,
      timeout: Duration.seconds(config.functionTimeoutSeconds + TRIGGER_TIMEOUT_MARGIN_SECONDS),
    });
  }
}
