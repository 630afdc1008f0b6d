/**
 * Subscribing to the events (docs/events.md): a rule on the bus matching a source and its
 * detail-types, targeting the consumer function (with retries and a dead-letter queue), and the
 * tables the consumer needs (idempotency records with their TTL, the in-app inbox).
 */
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { BUNDLING } from '@contest-sync/scheduled-singleton/cdk';
import { DEAD_LETTER_RETENTION_SECONDS } from './windows.js';

export interface EventsConsumerProps {
  readonly bus: events.IEventBus;
  readonly source: string;
  readonly detailTypes: readonly string[];
}

export class EventsConsumer extends Construct {
  readonly rule: events.Rule;
  readonly function: NodejsFunction;
  readonly idempotency: dynamodb.Table;
  readonly inbox: dynamodb.Table;
  readonly deadLetters: sqs.Queue;

  constructor(scope: Construct, id: string, props: EventsConsumerProps) {
    super(scope, id);
    const table = (name: string, key: string, ttl?: string) =>
      new dynamodb.Table(this, name, {
        partitionKey: { name: key, type: dynamodb.AttributeType.STRING },
        ...(name === 'Inbox' ? { sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING } } : {}),
        billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        ...(ttl !== undefined ? { timeToLiveAttribute: ttl } : {}),
        removalPolicy: RemovalPolicy.DESTROY,
      });
    // Powertools' record layout: key `id`, TTL `expiration`.
    this.idempotency = table('Idempotency', 'id', 'expiration');
    this.inbox = table('Inbox', 'pk');
    // Events the consumer could not take: kept as long as the product keeps its own dead letters
    // (./windows.ts). Replaying one follows the redrive's rule: not past the dedupe window, and not
    // a ReminderDue whose start has passed (docs/events.md, "Windows").
    this.deadLetters = new sqs.Queue(this, 'DeadLetters', {
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      retentionPeriod: Duration.seconds(DEAD_LETTER_RETENTION_SECONDS),
    });
    // Its own role and log group: no managed policy, no account-wide log permissions.
    const role = new iam.Role(this, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    const logGroup = new logs.LogGroup(this, 'LogGroup', { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    logGroup.grantWrite(role);
    this.function = new NodejsFunction(this, 'Function', {
      entry: fileURLToPath(new URL('./handler.ts', import.meta.url)),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.seconds(30),
      role,
      logGroup,
      tracing: lambda.Tracing.DISABLED,
      // Events the function still fails after Lambda's async retries.
      deadLetterQueue: this.deadLetters,
      environment: { IDEMPOTENCY_TABLE_NAME: this.idempotency.tableName, INBOX_TABLE_NAME: this.inbox.tableName },
      bundling: { ...BUNDLING, mainFields: [...BUNDLING.mainFields], externalModules: [] },
    });
    this.idempotency.grant(this.function, 'dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem');
    this.inbox.grant(this.function, 'dynamodb:PutItem');
    this.rule = new events.Rule(this, 'Rule', {
      eventBus: props.bus,
      description: `${props.detailTypes.join(', ')} from ${props.source}`,
      eventPattern: { source: [props.source], detailType: [...props.detailTypes] },
    });
    this.rule.addTarget(
      new targets.LambdaFunction(this.function, { retryAttempts: 8, maxEventAge: Duration.hours(24), deadLetterQueue: this.deadLetters }),
    );
    const pinned = 'Pinned to nodejs22.x with the bundle target, upgraded together on purpose.';
    Validations.of(this.function).acknowledge(
      { id: 'AwsSolutions-L1', reason: pinned },
      { id: 'Serverless-LambdaLatestVersion', reason: pinned },
      {
        id: 'Serverless-LambdaTracing',
        reason: 'One DynamoDB write per event, logged; traces would add X-Ray permissions for nothing read.',
      },
    );
    const store = 'The dead-letter store itself (rule target DLQ and function DLQ), read by an operator; nothing behind it.';
    Validations.of(this.deadLetters).acknowledge(
      { id: 'AwsSolutions-SQS3', reason: store },
      { id: 'Serverless-SQSRedrivePolicy', reason: store },
    );
  }
}
