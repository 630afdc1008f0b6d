/**
 * The app's door (docs/api.md): the HTTP API (a JWT authorizer for the operator's OIDC issuer, or
 * a Cognito user pool when none is named; stage throttling, CORS for the named origins only,
 * access logs) and its function; the calendar (the door table, the private feed bucket, the FIFO
 * feed queue fed by the bus's contest events and the API, the builder); their alarms.
 */
import { CfnOutput, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer, HttpUserPoolAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { Names, Stack } from 'aws-cdk-lib';
import { fileURLToPath } from 'node:url';
import { BUNDLING, findProject } from '@contest-sync/scheduled-singleton/cdk';
import { API_ROUTES } from '../../lambda/api/contract.js';
import { CALENDAR_ENV, CONTESTS_GROUP } from '../../lambda/calendar/contract.js';
import { EVENT_SOURCES } from '../../lambda/contract.js';
import type { ContestSyncConfig } from '../config.js';
import {
  acknowledgeApiFunction,
  acknowledgeDeadLetterQueue,
  acknowledgeFeedBucket,
  acknowledgeFeedObjects,
  acknowledgePublicRoute,
  acknowledgeQueueConsumer,
  acknowledgeQuickStartUserPool,
} from '../door-nag.js';
import { CONTESTS_BY_PLATFORM_START_INDEX, REMINDERS_BY_USER_INDEX, type DataTables } from './data-tables.js';

/** What the door's functions send, beyond the write path's own grant (lib/table-access.ts): the IAM test checks used = granted. */
export const DOOR_ACTIONS = {
  api: {
    contestsIndex: ['dynamodb:Query'],
    door: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
    // ListBucket: a missing feed answers 404, not 403 (S3 hides absence from a role that cannot list).
    feeds: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
    queue: ['sqs:SendMessage'],
  },
  builder: {
    door: ['dynamodb:GetItem', 'dynamodb:PutItem'],
    reminders: ['dynamodb:Query'],
    remindersByUser: ['dynamodb:Query'],
    // It writes and removes feed objects, never reads one (so it needs no ListBucket either).
    feeds: ['s3:PutObject', 's3:DeleteObject'],
    queue: ['sqs:SendMessage'],
  },
} as const;

export interface DoorProps {
  readonly config: ContestSyncConfig;
  readonly tables: DataTables;
  readonly bus: events.IEventBus;
  readonly alarmTopic: sns.ITopic;
  /**
   * The EventBridge sources of the contest events the calendar is built from: every source's sync job's.
   * @default [EVENT_SOURCES.contests]
   */
  readonly contestEventSources?: readonly string[];
}

export const doorEntry = (path: string): string => fileURLToPath(new URL(`../../lambda/${path}`, import.meta.url));

/** A bundled Node.js 22 function as the jobs' (ESM, arm64, JSON logs, its own log group). */
export function doorFunction(
  scope: Construct,
  id: string,
  props: { entry: string; description: string; timeout: Duration; logRetention: logs.RetentionDays; environment: Record<string, string> },
): NodejsFunction {
  const project = findProject(props.entry);
  const logGroup = new logs.LogGroup(scope, `${id}Logs`, { retention: props.logRetention, removalPolicy: RemovalPolicy.DESTROY });
  // Its own role: its log group and what the construct grants, no managed policy.
  const role = new iam.Role(scope, `${id}Role`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: props.description,
  });
  logGroup.grantWrite(role);
  return new NodejsFunction(scope, id, {
    role,
    description: props.description,
    entry: props.entry,
    handler: 'handler',
    ...(project === undefined ? {} : { projectRoot: project.projectRoot, depsLockFilePath: project.depsLockFilePath }),
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.ARM_64,
    memorySize: 256,
    timeout: props.timeout,
    logGroup,
    loggingFormat: lambda.LoggingFormat.JSON,
    tracing: lambda.Tracing.DISABLED,
    environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
    bundling: { ...BUNDLING, mainFields: [...BUNDLING.mainFields], externalModules: [] },
  });
}

export class Door extends Construct {
  public readonly api: apigw.HttpApi;
  public readonly stage: apigw.HttpStage;
  public readonly apiFunction: NodejsFunction;
  public readonly builder: NodejsFunction;
  public readonly table: dynamodb.Table;
  public readonly feeds: s3.Bucket;
  public readonly feedQueue: sqs.Queue;
  public readonly feedDeadLetters: sqs.Queue;
  /** Contest events EventBridge could not put on the feed queue. */
  public readonly eventDeadLetters: sqs.Queue;
  public readonly accessLogs: logs.LogGroup;
  public readonly userPool?: cognito.UserPool;
  public readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: DoorProps) {
    super(scope, id);
    const { config, tables } = props;
    // Users' feed tokens (hashed) and what was published: kept if the stack is deleted, like the data tables.
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.feeds = new s3.Bucket(this, 'Feeds', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.feedDeadLetters = new sqs.Queue(this, 'FeedDeadLetters', { fifo: true, enforceSSL: true, retentionPeriod: Duration.days(14) });
    // FIFO: one worker per feed, in order. Deduplicated on content: an EventBridge rule's target
    // gives no deduplication id (docs/stack.md, "Wirings AWS refuses"); two events' bodies differ.
    this.feedQueue = new sqs.Queue(this, 'FeedQueue', {
      fifo: true,
      contentBasedDeduplication: true,
      enforceSSL: true,
      // byUser is eventually consistent: a rebuild waits a moment for the reminder just written to show.
      deliveryDelay: Duration.seconds(3),
      visibilityTimeout: Duration.seconds(6 * 60),
      deadLetterQueue: { queue: this.feedDeadLetters, maxReceiveCount: 5 },
    });
    const environment = {
      [CALENDAR_ENV.contestsTable]: tables.contests.tableName,
      [CALENDAR_ENV.remindersTable]: tables.reminders.tableName,
      [CALENDAR_ENV.doorTable]: this.table.tableName,
      [CALENDAR_ENV.feedBucket]: this.feeds.bucketName,
      [CALENDAR_ENV.feedQueueUrl]: this.feedQueue.queueUrl,
      // Rows the API makes due spread over the delivery jobs as the sync's do (docs/delivery.md).
      [CALENDAR_ENV.dueShards]: String(config.dueShards),
    };
    this.apiFunction = doorFunction(this, 'ApiFunction', {
      entry: doorEntry('api/handler.ts'),
      description: 'contest-sync HTTP API: contests, reminders, calendar feeds (docs/api.md)',
      timeout: Duration.seconds(10),
      logRetention: config.logRetentionDays,
      environment,
    });
    this.builder = doorFunction(this, 'Builder', {
      entry: doorEntry('calendar/handler.ts'),
      description: 'contest-sync calendar: folds published contest events and rebuilds feeds (docs/api.md)',
      timeout: Duration.seconds(60),
      logRetention: config.logRetentionDays,
      environment,
    });
    this.grant(tables);
    const source = new SqsEventSource(this.feedQueue, { batchSize: 10, reportBatchItemFailures: true });
    this.builder.addEventSource(source);
    this.eventDeadLetters = new sqs.Queue(this, 'EventDeadLetters', { enforceSSL: true, retentionPeriod: Duration.days(14) });
    new events.Rule(this, 'ContestEventsToFeeds', {
      description: 'The contest events the product published, to the calendar builder (in order)',
      eventBus: props.bus,
      eventPattern: { source: [...(props.contestEventSources ?? [EVENT_SOURCES.contests])] },
      targets: [
        new targets.SqsQueue(this.feedQueue, {
          messageGroupId: CONTESTS_GROUP,
          retryAttempts: 185,
          maxEventAge: Duration.hours(24),
          deadLetterQueue: this.eventDeadLetters,
        }),
      ],
    });
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention: config.logRetentionDays, removalPolicy: RemovalPolicy.DESTROY });
    ({ api: this.api, stage: this.stage, userPool: this.userPool } = this.httpApi(config));
    this.alarm(props.alarmTopic);
    this.acknowledge(source);
    new CfnOutput(scope, 'ApiUrl', { value: this.stage.url, description: 'The HTTP API (docs/api.md)' });
    new CfnOutput(scope, 'ApiFunctionName', { value: this.apiFunction.functionName, description: 'The HTTP API function' });
    new CfnOutput(scope, 'FeedDeadLetterQueueUrl', {
      value: this.feedDeadLetters.queueUrl,
      description: 'Feed builds given up (docs/runbook.md)',
    });
    if (this.userPool !== undefined)
      new CfnOutput(scope, 'UserPoolId', { value: this.userPool.userPoolId, description: 'The API’s issuer when none is named' });
  }

  private acknowledge(source: SqsEventSource): void {
    acknowledgeApiFunction(this.apiFunction);
    acknowledgeQueueConsumer(this.builder, this.builder.node.findChild(`SqsEventSource:${Names.nodeUniqueId(this.feedQueue.node)}`));
    void source;
    acknowledgeDeadLetterQueue(this.feedDeadLetters);
    acknowledgeDeadLetterQueue(this.eventDeadLetters, true);
    const bucketId = Stack.of(this).resolve(Stack.of(this).getLogicalId(this.feeds.node.defaultChild as s3.CfnBucket)) as string;
    for (const fn of [this.apiFunction, this.builder]) acknowledgeFeedObjects(fn.role!.node.findChild('DefaultPolicy'), bucketId);
    acknowledgeFeedBucket(this.feeds);
    for (const route of this.api.node.children.filter((c) => c instanceof apigw.HttpRoute)) {
      if (/^(GET--calendar|GET--openapi)/.test(route.node.id)) acknowledgePublicRoute(route);
    }
    acknowledgePublicRoute(this.node.findChild('DefaultRoute'));
    if (this.userPool !== undefined) acknowledgeQuickStartUserPool(this.userPool);
  }

  /** Exactly what each function sends (DOOR_ACTIONS; the write path's own list for the API). */
  private grant(tables: DataTables): void {
    const allow = (fn: lambda.IFunction, sid: string, actions: readonly string[], resources: string[]) =>
      fn.addToRolePolicy(new iam.PolicyStatement({ sid, actions: [...actions], resources }));
    const objects = [this.feeds.arnForObjects('feeds/*')];
    tables.grantReminderWritePath(this.apiFunction);
    allow(this.apiFunction, 'ContestsShown', DOOR_ACTIONS.api.contestsIndex, [
      `${tables.contests.tableArn}/index/${CONTESTS_BY_PLATFORM_START_INDEX}`,
    ]);
    allow(this.apiFunction, 'DoorTable', DOOR_ACTIONS.api.door, [this.table.tableArn]);
    allow(this.apiFunction, 'FeedObjects', DOOR_ACTIONS.api.feeds, objects);
    allow(this.apiFunction, 'FeedQueue', DOOR_ACTIONS.api.queue, [this.feedQueue.queueArn]);
    allow(this.builder, 'DoorTable', DOOR_ACTIONS.builder.door, [this.table.tableArn]);
    allow(this.builder, 'ReminderUsers', DOOR_ACTIONS.builder.reminders, [tables.reminders.tableArn]);
    allow(this.builder, 'UserReminders', DOOR_ACTIONS.builder.remindersByUser, [
      `${tables.reminders.tableArn}/index/${REMINDERS_BY_USER_INDEX}`,
    ]);
    allow(this.builder, 'FeedObjects', DOOR_ACTIONS.builder.feeds, objects);
    allow(this.builder, 'FeedQueue', DOOR_ACTIONS.builder.queue, [this.feedQueue.queueArn]);
    this.apiFunction.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'FeedListing',
        actions: ['s3:ListBucket'],
        resources: [this.feeds.bucketArn],
        conditions: { StringLike: { 's3:prefix': ['feeds/*'] } },
      }),
    );
  }

  private authorizer(config: ContestSyncConfig): { authorizer: apigw.IHttpRouteAuthorizer; userPool?: cognito.UserPool } {
    if (config.jwtIssuer !== '') {
      return {
        authorizer: new HttpJwtAuthorizer('Jwt', config.jwtIssuer, { jwtAudience: [...config.jwtAudience], authorizerName: 'jwt' }),
      };
    }
    const userPool = new cognito.UserPool(this, 'Users', {
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      passwordPolicy: { minLength: 12, requireDigits: true, requireLowercase: true, requireUppercase: true, requireSymbols: true },
      mfa: cognito.Mfa.OPTIONAL,
      mfaSecondFactor: { otp: true, sms: false },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const client = userPool.addClient('App', { authFlows: { userSrp: true }, generateSecret: false });
    return { authorizer: new HttpUserPoolAuthorizer('Jwt', userPool, { userPoolClients: [client], authorizerName: 'jwt' }), userPool };
  }

  private httpApi(config: ContestSyncConfig): { api: apigw.HttpApi; stage: apigw.HttpStage; userPool?: cognito.UserPool } {
    const { authorizer, userPool } = this.authorizer(config);
    const api = new apigw.HttpApi(this, 'Api', {
      description: 'contest-sync: contests, reminders, calendar feeds (docs/api.md)',
      createDefaultStage: false,
      ...(config.corsOrigins.length === 0
        ? {}
        : {
            corsPreflight: {
              allowOrigins: [...config.corsOrigins],
              allowMethods: [apigw.CorsHttpMethod.GET, apigw.CorsHttpMethod.PUT, apigw.CorsHttpMethod.POST, apigw.CorsHttpMethod.DELETE],
              allowHeaders: ['authorization', 'content-type', 'if-none-match'],
              exposeHeaders: ['etag'],
              maxAge: Duration.hours(1),
            },
          }),
    });
    const integration = new HttpLambdaIntegration('Function', this.apiFunction, {
      payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
    });
    for (const route of API_ROUTES) {
      api.addRoutes({
        path: route.path,
        methods: [apigw.HttpMethod[route.method]],
        integration,
        authorizer: route.auth === 'jwt' ? authorizer : new apigw.HttpNoneAuthorizer(),
      });
    }
    // Whatever no route takes reaches the function without a token: it answers 404 or 405 there.
    new apigw.HttpRoute(this, 'DefaultRoute', {
      httpApi: api,
      routeKey: apigw.HttpRouteKey.DEFAULT,
      integration,
      authorizer: new apigw.HttpNoneAuthorizer(),
    });
    const stage = new apigw.HttpStage(this, 'Stage', {
      httpApi: api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: config.apiThrottleRate, burstLimit: config.apiThrottleBurst },
      accessLogSettings: { destination: new apigw.LogGroupLogDestination(this.accessLogs), format: ACCESS_LOG_FORMAT },
    });
    return { api, stage, ...(userPool === undefined ? {} : { userPool }) };
  }

  /** 5xx answers, slow answers, feed builds given up. */
  private alarm(topic: sns.ITopic): void {
    const dimensionsMap = { ApiId: this.api.apiId, Stage: '$default' };
    const metric = (metricName: string, statistic: string) =>
      new cloudwatch.Metric({ namespace: 'AWS/ApiGateway', metricName, dimensionsMap, statistic, period: Duration.minutes(5) });
    const define = (id: string, description: string, props: Omit<cloudwatch.AlarmProps, 'alarmDescription'>) => {
      const alarm = new cloudwatch.Alarm(this, id, { alarmDescription: description, ...props });
      alarm.addAlarmAction(new actions.SnsAction(topic));
      this.alarms.push(alarm);
    };
    define(
      'Api5xx',
      'The HTTP API answered 5xx (docs/runbook.md, "The app\'s door"): read the function\'s "failed" and "unexpected error" lines.',
      {
        metric: metric('5xx', 'Sum'),
        threshold: 5,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      },
    );
    define('ApiLatencyAlarm', 'The HTTP API is slow: p99 over 2 s for 15 minutes (docs/runbook.md, "The app\'s door").', {
      metric: metric('Latency', 'p99'),
      threshold: 2000,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    define('FeedDeadLettersAlarm', 'Feed builds were given up after 5 attempts (docs/runbook.md, "The app\'s door").', {
      metric: this.feedDeadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }
}

/** One JSON line per request: who, what, how it ended, how long (no token, no body). */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    time: '$context.requestTime',
    ip: '$context.identity.sourceIp',
    method: '$context.httpMethod',
    route: '$context.routeKey',
    status: '$context.status',
    latencyMs: '$context.responseLatency',
    integrationStatus: '$context.integrationStatus',
    authorizerError: '$context.authorizer.error',
    sub: '$context.authorizer.claims.sub',
    bytes: '$context.responseLength',
  }),
);
