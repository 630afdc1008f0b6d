/**
 * Wirings AWS refuses (lib/wiring.ts), on synthesized templates: the product's stack (with and
 * without webhooks) has none; a stack in which a FIFO queue without content-based deduplication
 * is an EventBridge target fails synthesis, reported in the validation report like cdk-nag; and
 * each documented refusal the check knows is found on the smallest template that has it, and not
 * on the same template wired as AWS accepts.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { CONTEXT_KEYS } from '../../lib/config.js';
import { addWiringChecks, WIRING_PLUGIN_NAME, wiringRefusals, type Template } from '../../lib/wiring.js';
import { synthTemplate } from '../../local/template.js';

describe("the product's stack", () => {
  it.each([
    ['as configured by default', {}],
    ['with webhooks', { [CONTEXT_KEYS.webhookUrl]: 'https://app.example.com/hooks' }],
  ])('wires no two services in a way AWS refuses (%s)', async (_what, context) => {
    const { template } = await synthTemplate({ bundle: false, context });
    expect(wiringRefusals(template).map((r) => `${r.rule} at ${r.logicalId}: ${r.problem}`)).toEqual([]);
  });
});

/** A stack whose rule targets a FIFO queue, synthesized with the wiring checks. */
function synthFifoTarget(queueProps: sqs.QueueProps): { error: unknown; report: any } {
  const outdir = mkdtempSync(join(tmpdir(), 'contest-sync-wiring-'));
  const app = new App({ outdir });
  addWiringChecks(app);
  const stack = new Stack(app, 'Wired');
  const queue = new sqs.Queue(stack, 'Feed', { fifo: true, ...queueProps });
  new events.Rule(stack, 'ToFeed', {
    eventPattern: { source: ['contest-sync.contests'] },
    targets: [new targets.SqsQueue(queue, { messageGroupId: 'contests' })],
  });
  let error: unknown;
  try {
    app.synth();
  } catch (caught) {
    error = caught;
  }
  return { error, report: JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) };
}

describe('a synthesized stack with a FIFO queue as an EventBridge target', () => {
  it('fails synthesis without content-based deduplication, naming the rule, the queue and the documentation', () => {
    const { error, report } = synthFifoTarget({});
    expect(String(error)).toMatch(/validation/i);
    const plugin = report.pluginReports.find((p: { pluginName: string }) => p.pluginName === WIRING_PLUGIN_NAME);
    expect(plugin.conclusion).toBe('failure');
    const [violation] = plugin.violations;
    expect(violation.ruleName).toBe('AwsWiring-EventBridgeFifoTargetDeduplication');
    expect(violation.description).toMatch(
      /^ToFeed[0-9A-F]{8} targets the FIFO queue Feed[0-9A-F]{8}, which has no content-based deduplication/,
    );
    expect(violation.suggestedFix).toContain('https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_SqsParameters.html');
    expect(violation.violatingConstructs.map((c: { constructPath: string }) => c.constructPath)).toEqual(['Wired/ToFeed/Resource']);
  });

  it('synthesizes with content-based deduplication', () => {
    const { error, report } = synthFifoTarget({ contentBasedDeduplication: true });
    expect(error).toBeUndefined();
    expect(report.pluginReports).toEqual([]);
  });
});

/** The smallest templates: `bad` has the refusal, `good` is the same wired as AWS accepts. */
const getAtt = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
const eventsMaySend = (queue: string) => ({
  Type: 'AWS::SQS::QueuePolicy',
  Properties: {
    Queues: [{ Ref: queue }],
    PolicyDocument: {
      Statement: [{ Effect: 'Allow', Principal: { Service: 'events.amazonaws.com' }, Action: 'sqs:SendMessage', Resource: getAtt(queue) }],
    },
  },
});
const rule = (target: Record<string, unknown>) => ({
  Type: 'AWS::Events::Rule',
  Properties: { EventPattern: { source: ['x'] }, Targets: [{ Id: 'T', ...target }] },
});
const fn = (timeout: number) => ({ Type: 'AWS::Lambda::Function', Properties: { Timeout: timeout } });
const mapping = (props: Record<string, unknown>) => ({
  Type: 'AWS::Lambda::EventSourceMapping',
  Properties: { EventSourceArn: getAtt('Q'), FunctionName: { Ref: 'F' }, ...props },
});
const queue = (props: Record<string, unknown> = {}) => ({ Type: 'AWS::SQS::Queue', Properties: props });
const key = (services: string[]) => ({
  Type: 'AWS::KMS::Key',
  Properties: {
    KeyPolicy: {
      Statement: [{ Effect: 'Allow', Principal: { Service: services }, Action: ['kms:Decrypt', 'kms:GenerateDataKey*'], Resource: '*' }],
    },
  },
});

const CASES: { rule: string; bad: Template['Resources']; good: Template['Resources'] }[] = [
  {
    rule: 'EventBridgeFifoTargetDeduplication',
    bad: { Q: queue({ FifoQueue: true }), P: eventsMaySend('Q'), R: rule({ Arn: getAtt('Q'), SqsParameters: { MessageGroupId: 'g' } }) },
    good: {
      Q: queue({ FifoQueue: true, ContentBasedDeduplication: true }),
      P: eventsMaySend('Q'),
      R: rule({ Arn: getAtt('Q'), SqsParameters: { MessageGroupId: 'g' } }),
    },
  },
  {
    rule: 'EventBridgeFifoTargetGroup',
    bad: { Q: queue({ FifoQueue: true, ContentBasedDeduplication: true }), P: eventsMaySend('Q'), R: rule({ Arn: getAtt('Q') }) },
    good: {
      Q: queue({ FifoQueue: true, ContentBasedDeduplication: true }),
      P: eventsMaySend('Q'),
      R: rule({ Arn: getAtt('Q'), SqsParameters: { MessageGroupId: 'g' } }),
    },
  },
  {
    rule: 'EventBridgeFifoDeadLetterQueue',
    bad: {
      Q: queue(),
      D: queue({ FifoQueue: true, ContentBasedDeduplication: true }),
      P: eventsMaySend('Q'),
      PD: eventsMaySend('D'),
      R: rule({ Arn: getAtt('Q'), DeadLetterConfig: { Arn: getAtt('D') } }),
    },
    good: {
      Q: queue(),
      D: queue(),
      P: eventsMaySend('Q'),
      PD: eventsMaySend('D'),
      R: rule({ Arn: getAtt('Q'), DeadLetterConfig: { Arn: getAtt('D') } }),
    },
  },
  {
    rule: 'EventBridgeQueuePolicy',
    bad: { Q: queue(), R: rule({ Arn: getAtt('Q') }) },
    good: { Q: queue(), P: eventsMaySend('Q'), R: rule({ Arn: getAtt('Q') }) },
  },
  {
    rule: 'EventBridgeQueueKey',
    bad: { Q: queue({ KmsMasterKeyId: 'alias/aws/sqs' }), P: eventsMaySend('Q'), R: rule({ Arn: getAtt('Q') }) },
    good: {
      K: key(['events.amazonaws.com']),
      Q: queue({ KmsMasterKeyId: getAtt('K') }),
      P: eventsMaySend('Q'),
      R: rule({ Arn: getAtt('Q') }),
    },
  },
  {
    rule: 'EventBridgeQueueKey',
    bad: { K: key(['sns.amazonaws.com']), Q: queue({ KmsMasterKeyId: getAtt('K') }), P: eventsMaySend('Q'), R: rule({ Arn: getAtt('Q') }) },
    good: { Q: queue({ SqsManagedSseEnabled: true }), P: eventsMaySend('Q'), R: rule({ Arn: getAtt('Q') }) },
  },
  {
    rule: 'AlarmTopicKey',
    bad: {
      T: { Type: 'AWS::SNS::Topic', Properties: { KmsMasterKeyId: 'alias/aws/sns' } },
      A: { Type: 'AWS::CloudWatch::Alarm', Properties: { AlarmActions: [{ Ref: 'T' }] } },
    },
    good: {
      K: key(['cloudwatch.amazonaws.com']),
      T: { Type: 'AWS::SNS::Topic', Properties: { KmsMasterKeyId: { Ref: 'K' } } },
      A: { Type: 'AWS::CloudWatch::Alarm', Properties: { AlarmActions: [{ Ref: 'T' }] } },
    },
  },
  {
    rule: 'SqsDeadLetterQueueType',
    bad: { D: queue(), Q: queue({ FifoQueue: true, RedrivePolicy: { deadLetterTargetArn: getAtt('D'), maxReceiveCount: 5 } }) },
    good: {
      D: queue({ FifoQueue: true }),
      Q: queue({ FifoQueue: true, RedrivePolicy: { deadLetterTargetArn: getAtt('D'), maxReceiveCount: 5 } }),
    },
  },
  {
    rule: 'SqsFifoQueueName',
    bad: { Q: queue({ FifoQueue: true, QueueName: 'feeds' }) },
    good: { Q: queue({ FifoQueue: true, QueueName: 'feeds.fifo' }) },
  },
  {
    rule: 'LambdaQueueVisibilityTimeout',
    bad: { Q: queue(), F: fn(60), M: mapping({}) },
    good: { Q: queue({ VisibilityTimeout: 360 }), F: fn(60), M: mapping({}) },
  },
  {
    rule: 'LambdaQueueBatch',
    bad: { Q: queue({ FifoQueue: true }), F: fn(3), M: mapping({ BatchSize: 10, MaximumBatchingWindowInSeconds: 5 }) },
    good: { Q: queue({ FifoQueue: true }), F: fn(3), M: mapping({ BatchSize: 10 }) },
  },
  {
    rule: 'LambdaQueueBatch',
    bad: { Q: queue(), F: fn(3), M: mapping({ BatchSize: 100 }) },
    good: { Q: queue(), F: fn(3), M: mapping({ BatchSize: 100, MaximumBatchingWindowInSeconds: 1 }) },
  },
  {
    rule: 'LambdaQueueConcurrency',
    bad: { Q: queue(), F: fn(3), M: mapping({ ScalingConfig: { MaximumConcurrency: 1 } }) },
    good: { Q: queue(), F: fn(3), M: mapping({ ScalingConfig: { MaximumConcurrency: 2 } }) },
  },
];

describe('each refusal the check knows', () => {
  it.each(CASES.map((c, i) => [c.rule, i, c] as const))('%s (case %i): found where AWS refuses it, not where it accepts', (rule, _i, c) => {
    const bad = wiringRefusals({ Resources: c.bad });
    expect(bad.map((r) => r.rule)).toEqual([rule]);
    expect(bad[0]!.doc.url).toMatch(/^https:\/\/docs\.aws\.amazon\.com\//);
    expect(wiringRefusals({ Resources: c.good })).toEqual([]);
  });

  it('reads a duration the way CloudFormation takes it (numbers or strings)', () => {
    const resources = { Q: queue({ VisibilityTimeout: '30' }), F: fn(Duration.minutes(1).toSeconds()), M: mapping({}) };
    expect(wiringRefusals({ Resources: resources }).map((r) => r.rule)).toEqual(['LambdaQueueVisibilityTimeout']);
  });
});
