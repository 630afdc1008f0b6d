/**
 * The cdk-nag findings every ScheduledSingletonJob acknowledges, each with the reason a reviewer
 * would ask for (the construct calls this on itself, so a new job's stack is as clean as
 * contest-sync's). Plain aws-cdk-lib `Validations`: no cdk-nag import; `addNagChecks` in
 * `@contest-sync/scheduled-singleton/nag` adds the rule packs.
 */
import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** The parts of a scheduled job whose findings are acknowledged (a ScheduledSingletonJob has them). */
export interface NagJobParts {
  readonly function: IConstruct;
  readonly failureQueue: IConstruct;
  /** @default none: no e-mail subscription */
  readonly emailSubscription?: IConstruct | undefined;
}

function acknowledge(scope: IConstruct, ...rules: { id: string; reason: string }[]): void {
  Validations.of(scope).acknowledge(...rules);
}

/**
 * The findings every ScheduledSingletonJob acknowledges (the construct calls this on itself, so a
 * new job's stack is as clean as contest-sync's).
 */
export function acknowledgeJobNagFindings(job: NagJobParts): void {
  const { function: fn, failureQueue } = job;

  const runtimeReason =
    'The runtime is pinned to nodejs22.x on purpose (a supported LTS runtime): the bundle is built ' +
    'for target node22 and the function code and tests are written against it. Moving to a newer ' +
    'runtime is a deliberate upgrade of bundle target, runtime and tests together, not a drift ' +
    'that a linter should make on its own.';
  acknowledge(
    fn,
    { id: 'AwsSolutions-L1', reason: runtimeReason },
    { id: 'Serverless-LambdaLatestVersion', reason: runtimeReason },
    {
      id: 'Serverless-LambdaDLQ',
      reason:
        'Failed asynchronous invocations go to an SQS on-failure destination (EventInvokeConfig, ' +
        'Serverless-LambdaAsyncFailureDestination passes), which records the error and response ' +
        'along with the event. Configuring a legacy DeadLetterConfig as well would deliver every ' +
        'failure twice.',
    },
  );

  acknowledge(fn, {
    id: 'Serverless-LambdaTracing',
    reason:
      'Tracing is turned off on purpose. The function makes one HTTPS call and a handful of DynamoDB ' +
      'requests an hour, and every one of them is already accounted for in its summary log line ' +
      '(duration, attempts, counts) and metrics; with nothing instrumented, active tracing produced ' +
      'only empty invocation segments while requiring a role statement on every resource. ' +
      'Instrumenting the calls would add the X-Ray SDK to a bundle that has a size budget.',
  });

  const failureQueueReason =
    'This queue is itself the dead-letter store: the Lambda on-failure destination and the ' +
    'EventBridge target DLQ of the job. Nothing consumes it automatically; messages are read by ' +
    'an operator (FailureQueueMessages alarm) and expire after 14 days, so a redrive queue behind ' +
    'it would only hide them one level deeper.';
  acknowledge(
    failureQueue,
    { id: 'AwsSolutions-SQS3', reason: failureQueueReason },
    { id: 'Serverless-SQSRedrivePolicy', reason: failureQueueReason },
  );

  acknowledge(fn, {
    id: 'Annotation::@aws-cdk/aws-lambda:addPermissionsToVersionOrAlias',
    reason:
      'The only resource-based permission is for the EventBridge rule, which invokes the unqualified ' +
      'function. The deploy-time trigger invokes the published version through its own role ' +
      '(identity-based lambda:InvokeFunction on the function ARN with qualifier), so no version or ' +
      'alias needs a resource policy.',
  });

  if (job.emailSubscription !== undefined) acknowledgeEmailSubscription(job.emailSubscription);
}

/** The parts of an OutboxDelivery whose findings are acknowledged. */
export interface NagOutboxParts {
  readonly relay: IConstruct;
  readonly deadLetterQueue: IConstruct;
}

/** The findings every OutboxDelivery acknowledges (it calls this on itself). */
export function acknowledgeOutboxNagFindings(parts: NagOutboxParts): void {
  const runtimeReason =
    'The relay is pinned to nodejs22.x like the jobs it serves: bundle target, runtime and tests ' +
    'move together, as a deliberate upgrade.';
  acknowledge(
    parts.relay,
    { id: 'AwsSolutions-L1', reason: runtimeReason },
    { id: 'Serverless-LambdaLatestVersion', reason: runtimeReason },
    {
      id: 'Serverless-LambdaDLQ',
      reason:
        'The relay is invoked synchronously by its DynamoDB stream event source mapping, never asynchronously: ' +
        'a function DeadLetterConfig would never receive anything. Batches given up after the finite retries go ' +
        "to the mapping's on-failure destination, the DeadLetterQueue, which has an alarm.",
    },
    {
      id: 'Serverless-LambdaTracing',
      reason:
        'Each batch is one PutEvents request or a few, and the relay logs one summary line per batch ' +
        '(delivered, failed, resent, lag) and emits their metrics; active tracing would add X-Ray ' +
        'permissions on every resource for traces nobody reads.',
    },
  );
  const queueReason =
    "This queue is itself the dead-letter store: the outbox stream mapping's on-failure destination " +
    '(the metadata of batches given up). It is read by an operator (DeadLetters alarm, runbook redrive) ' +
    'and keeps messages 14 days; a redrive queue behind it would only hide them one level deeper.';
  acknowledge(
    parts.deadLetterQueue,
    { id: 'AwsSolutions-SQS3', reason: queueReason },
    { id: 'Serverless-SQSRedrivePolicy', reason: queueReason },
  );
}

/** The optional e-mail subscription of an alarm topic. */
export function acknowledgeEmailSubscription(emailSubscription: IConstruct): void {
  acknowledge(emailSubscription, {
    id: 'Serverless-SNSRedrivePolicy',
    reason:
      'This is the optional e-mail subscription of the alarm topic, read by a person. An alarm ' +
      'notification SNS cannot deliver is not work to replay later: the alarm state itself stays ' +
      'visible in CloudWatch and on the dashboard, and a dead-letter queue for it would have no reader.',
  });
}

/**
 * AwsCustomResource's singleton provider function (ConsoleTestEvents): a
 * CDK-managed function that CloudFormation invokes synchronously during deployments.
 */
export function acknowledgeCustomResourceProviderNagFindings(provider: IConstruct): void {
  acknowledge(
    provider,
    {
      id: 'Serverless-LambdaDLQ',
      reason:
        'CloudFormation invokes this provider synchronously during a deployment and waits for its answer: ' +
        'a failed call fails the deployment step, which is where the error is reported and retried. ' +
        'There is no asynchronous invocation whose event could be lost, so a dead-letter target would never receive anything.',
    },
    {
      id: 'Serverless-LambdaTracing',
      reason:
        'The provider makes one EventBridge Schemas call per deployment of the console test events; its ' +
        'outcome is in the CloudFormation events and its own log group. Active tracing would add an ' +
        'X-Ray statement on every resource to the role for traces nobody reads.',
    },
  );
}
