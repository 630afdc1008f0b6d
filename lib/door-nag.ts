/**
 * The cdk-nag findings the door acknowledges (lib/constructs/door.ts, webhooks.ts), each with its
 * reason. Everything else the packs flag on them is fixed in the constructs.
 */
import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

const ack = (scope: IConstruct, ...rules: { id: string; reason: string }[]) => Validations.of(scope).acknowledge(...rules);

const RUNTIME =
  'The runtime is pinned to nodejs22.x on purpose, as the jobs’ (a supported LTS runtime): the bundle is built for node22 and ' +
  'tested against it; moving to a newer runtime is a deliberate upgrade of target, runtime and tests together.';
const TRACING =
  'Tracing is off, as the jobs’ (docs/stack.md, "Tracing"): API Gateway’s access logs and metrics time every request, ' +
  'the function logs each refusal and failure, and the X-Ray SDK would grow a bundle whose cold start is measured.';

/** A function fed by an SQS queue: its failures are the queue's to keep. */
export function acknowledgeQueueConsumer(fn: IConstruct, mapping: IConstruct): void {
  const byQueue =
    'Invoked only by its SQS event source mapping, never asynchronously: a message it fails goes back to the queue and, after ' +
    'the redrive policy’s attempts, to the queue’s dead-letter queue (alarmed). A Lambda DLQ or mapping destination would never receive anything.';
  ack(fn, { id: 'AwsSolutions-L1', reason: RUNTIME }, { id: 'Serverless-LambdaLatestVersion', reason: RUNTIME });
  ack(fn, { id: 'Serverless-LambdaTracing', reason: TRACING }, { id: 'Serverless-LambdaDLQ', reason: byQueue });
  ack(mapping, {
    id: 'Serverless-LambdaEventSourceMappingDestination',
    reason: `${byQueue} (SQS mappings take no on-failure destination.)`,
  });
}

/** The HTTP API's function: invoked synchronously by API Gateway only. */
export function acknowledgeApiFunction(fn: IConstruct): void {
  ack(fn, { id: 'AwsSolutions-L1', reason: RUNTIME }, { id: 'Serverless-LambdaLatestVersion', reason: RUNTIME });
  ack(fn, { id: 'Serverless-LambdaTracing', reason: TRACING });
  ack(fn, {
    id: 'Serverless-LambdaDLQ',
    reason:
      'Invoked synchronously by API Gateway only: a failure is the caller’s answer (a 5xx, alarmed), there is no asynchronous event to keep.',
  });
}

/** A queue that is itself the dead-letter store (`eventTarget`: an EventBridge target's, which nag does not see as one). */
export function acknowledgeDeadLetterQueue(queue: IConstruct, eventTarget = false): void {
  const reason =
    'This queue is itself the dead-letter store of a delivery (alarmed): an operator reads and redrives its messages ' +
    '(docs/runbook.md); a redrive queue behind it would only hide them one level deeper.';
  ack(queue, { id: 'Serverless-SQSRedrivePolicy', reason });
  if (eventTarget) ack(queue, { id: 'AwsSolutions-SQS3', reason });
}

/** Feed objects are written and read per user under one prefix. */
export function acknowledgeFeedObjects(policy: IConstruct, bucketLogicalId: string): void {
  ack(policy, {
    id: `AwsSolutions-IAM5[Resource::<${bucketLogicalId}.Arn>/feeds/*]`,
    reason:
      'Feed objects are named by the SHA-256 of each user’s token, so no fixed list of keys exists: the grant is scoped to the ' +
      'feeds/ prefix of the door’s own bucket, and to the object actions the code sends (test/integration/door-iam.test.ts).',
  });
}

export function acknowledgeFeedBucket(bucket: IConstruct): void {
  ack(bucket, {
    id: 'AwsSolutions-S1',
    reason:
      'The bucket is private and read only by the API function (every read is in the API’s access log and the function’s log); ' +
      'its objects are derived feeds rebuilt on change. Server access logs would add a second bucket that records the same requests.',
  });
}

/** Routes that take no token, by design. */
export function acknowledgePublicRoute(route: IConstruct): void {
  ack(route, {
    id: 'AwsSolutions-APIG4',
    reason:
      'Public by design (docs/api.md): the public calendar, a user’s feed at its secret URL (the token in the path is the ' +
      'credential, as calendar apps cannot send a header), the OpenAPI description, and $default, which only answers 404 or 405.',
  });
}

export function acknowledgeQuickStartUserPool(pool: IConstruct): void {
  ack(
    pool,
    {
      id: 'AwsSolutions-COG2',
      reason:
        'The quick-start issuer used only when the operator names none (docs/api.md): MFA is offered (TOTP) and the app decides ' +
        'whether to require it for its users; production deployments name their own issuer.',
    },
    {
      id: 'AwsSolutions-COG8',
      reason:
        'The quick-start issuer used only when the operator names none: the Plus feature plan (threat protection) is billed per ' +
        'monthly active user; a production deployment names its own issuer, which brings its own protections.',
    },
  );
}

export function acknowledgeWebhookSecret(secret: IConstruct): void {
  ack(secret, {
    id: 'AwsSolutions-SMG4',
    reason:
      'Rotation needs the receiver’s side too (it must learn the new secret), so it is the runbook’s two-step procedure ' +
      '(docs/runbook.md, "Rotate the webhook secret"): the relay signs with both secrets meanwhile, so no event is refused.',
  });
}
