/**
 * Events to an app outside AWS as signed webhooks (docs/events.md, "Webhooks"): an EventBridge rule
 * takes every event of the product into a queue; the relay (lambda/webhooks/) posts each to the
 * operator's endpoint, signed with the secret kept in Secrets Manager, at most `rate` a second,
 * retried with a growing delay for about a day, then dead-lettered (alarmed).
 */
import { CfnOutput, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { Names } from 'aws-cdk-lib';
import { acknowledgeDeadLetterQueue, acknowledgeQueueConsumer, acknowledgeWebhookSecret } from '../door-nag.js';
import { WEBHOOK_ENV, WEBHOOK_TIMINGS } from '../../lambda/webhooks/contract.js';
import { doorEntry, doorFunction } from './door.js';

/** What the webhook rule takes: every event of the product. */
export const WEBHOOK_EVENT_PATTERN = { source: [{ prefix: 'contest-sync.' }] };

/** Relay invocations at once; the endpoint's rate is shared between them. */
export const WEBHOOK_CONCURRENCY = 2;

export interface WebhooksProps {
  readonly url: string;
  readonly ratePerSecond: number;
  readonly bus: events.IEventBus;
  readonly alarmTopic: sns.ITopic;
  readonly logRetention: logs.RetentionDays;
}

export class Webhooks extends Construct {
  public readonly queue: sqs.Queue;
  public readonly deadLetters: sqs.Queue;
  public readonly secret: secretsmanager.Secret;
  public readonly relay: NodejsFunction;
  public readonly alarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: WebhooksProps) {
    super(scope, id);
    this.deadLetters = new sqs.Queue(this, 'DeadLetters', { enforceSSL: true, retentionPeriod: Duration.days(14) });
    this.queue = new sqs.Queue(this, 'Queue', {
      enforceSSL: true,
      // At least the relay's timeout (Lambda refuses less), six times it as Lambda asks.
      visibilityTimeout: Duration.seconds(WEBHOOK_TIMINGS.visibilityTimeoutSeconds),
      retentionPeriod: Duration.days(2),
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: WEBHOOK_TIMINGS.maxReceiveCount },
    });
    // `current` signs every request; during a rotation `previous` signs it too (docs/runbook.md).
    this.secret = new secretsmanager.Secret(this, 'Secret', {
      description: 'contest-sync webhook signing secret: {"current": ..., "previous"?: ...} (docs/runbook.md)',
      generateSecretString: { secretStringTemplate: '{}', generateStringKey: 'current', excludePunctuation: true, passwordLength: 48 },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.relay = doorFunction(this, 'Relay', {
      entry: doorEntry('webhooks/handler.ts'),
      description: 'contest-sync webhooks: posts the bus events, signed, to the app (docs/events.md)',
      timeout: Duration.seconds(WEBHOOK_TIMINGS.relayTimeoutSeconds),
      logRetention: props.logRetention,
      environment: {
        [WEBHOOK_ENV.url]: props.url,
        [WEBHOOK_ENV.secretArn]: this.secret.secretArn,
        [WEBHOOK_ENV.ratePerSecond]: String(props.ratePerSecond / WEBHOOK_CONCURRENCY),
        [WEBHOOK_ENV.queueUrl]: this.queue.queueUrl,
      },
    });
    this.relay.addToRolePolicy(
      new iam.PolicyStatement({ sid: 'SigningSecret', actions: ['secretsmanager:GetSecretValue'], resources: [this.secret.secretArn] }),
    );
    // Partial batch responses: what the relay did not send, or could not deliver, comes back alone.
    const mapping = { batchSize: WEBHOOK_TIMINGS.batchSize, maxConcurrency: WEBHOOK_CONCURRENCY, reportBatchItemFailures: true };
    this.relay.addEventSource(new SqsEventSource(this.queue, mapping));
    const eventDeadLetters = new sqs.Queue(this, 'EventDeadLetters', { enforceSSL: true, retentionPeriod: Duration.days(14) });
    new events.Rule(this, 'AllEvents', {
      description: 'Every event of contest-sync, to the webhook relay',
      eventBus: props.bus,
      eventPattern: WEBHOOK_EVENT_PATTERN as unknown as events.EventPattern,
      targets: [
        new targets.SqsQueue(this.queue, { retryAttempts: 185, maxEventAge: Duration.hours(24), deadLetterQueue: eventDeadLetters }),
      ],
    });
    this.alarm = new cloudwatch.Alarm(this, 'DeadLetterAlarm', {
      alarmDescription: 'Webhooks were given up after about a day of retries (docs/runbook.md, "Webhooks not delivered").',
      metric: this.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.alarm.addAlarmAction(new actions.SnsAction(props.alarmTopic));
    acknowledgeQueueConsumer(this.relay, this.relay.node.findChild(`SqsEventSource:${Names.nodeUniqueId(this.queue.node)}`));
    acknowledgeDeadLetterQueue(this.deadLetters);
    acknowledgeDeadLetterQueue(eventDeadLetters, true);
    acknowledgeWebhookSecret(this.secret);
    new CfnOutput(scope, 'WebhookSecretArn', { value: this.secret.secretArn, description: 'The webhook signing secret (docs/runbook.md)' });
    new CfnOutput(scope, 'WebhookDeadLetterQueueUrl', { value: this.deadLetters.queueUrl, description: 'Webhooks given up' });
  }
}
