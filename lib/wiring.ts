/**
 * Wirings between AWS services that AWS documents as refused, checked on the synthesized template
 * (docs/stack.md, "Wirings AWS refuses"). CloudFormation deploys most of them without a word and
 * the service then refuses every delivery: an EventBridge rule whose target is a FIFO queue
 * without content-based deduplication deploys, and every event it matches is refused by SQS,
 * retried and dead-lettered; no local stand-in shows it unless it is told what AWS does. Each rule
 * names the documentation it follows. `wiringRefusals` reads a template; `addWiringChecks` runs it
 * on every synthesis as a CDK validation plugin, reported (and failing `cdk synth`) like cdk-nag.
 */
import { readFileSync } from 'node:fs';
import { Validations, type App, type IPolicyValidationPlugin, type PolicyValidationPluginReport } from 'aws-cdk-lib';

/** The documentation a rule follows. */
export interface AwsDoc {
  title: string;
  url: string;
}

/** A wiring AWS refuses: which rule, the resource it is found on, and what is wrong. */
export interface WiringRefusal {
  rule: string;
  logicalId: string;
  /** Where in the resource (for the validation report), e.g. `/Properties/Targets/0`. */
  location: string;
  problem: string;
  doc: AwsDoc;
}

interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
}

/** The value at `path` in a template's JSON, or undefined. */
export function at(value: unknown, ...path: string[]): unknown {
  return path.reduce<unknown>(
    (node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined),
    value,
  );
}
type Resources = Record<string, Resource>;
export interface Template {
  Resources?: Resources;
}

export const AWS_DOCS = {
  sqsParameters: {
    title: 'Amazon EventBridge API Reference — SqsParameters',
    url: 'https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_SqsParameters.html',
  },
  sendMessage: {
    title: 'Amazon SQS API Reference — SendMessage',
    url: 'https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html',
  },
  eventBridgeSqsPermissions: {
    title: 'Amazon EventBridge User Guide — Using resource-based policies for Amazon EventBridge (Amazon SQS permissions)',
    url: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html',
  },
  sqsKeyManagement: {
    title: 'Amazon SQS Developer Guide — Key management (compatibility between event sources from AWS services and encrypted queues)',
    url: 'https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html',
  },
  snsKeyManagement: {
    title: 'Amazon SNS Developer Guide — Managing Amazon SNS encryption keys and costs (compatibility with AWS services)',
    url: 'https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html',
  },
  sqsDeadLetterQueues: {
    title: 'Amazon SQS Developer Guide — Using dead-letter queues in Amazon SQS',
    url: 'https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html',
  },
  createQueue: {
    title: 'Amazon SQS API Reference — CreateQueue',
    url: 'https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html',
  },
  lambdaWithSqs: {
    title: 'AWS Lambda Developer Guide — Using Lambda with Amazon SQS',
    url: 'https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html',
  },
  createEventSourceMapping: {
    title: 'AWS Lambda API Reference — CreateEventSourceMapping',
    url: 'https://docs.aws.amazon.com/lambda/latest/api/API_CreateEventSourceMapping.html',
  },
} as const satisfies Record<string, AwsDoc>;

/** The logical id a `{ Ref }` or `{ "Fn::GetAtt": [id, attr] }` names, if it names one. */
export function referenced(value: unknown): string | undefined {
  const ref = (value as { Ref?: unknown } | null)?.Ref;
  if (typeof ref === 'string') return ref;
  const getAtt = (value as { 'Fn::GetAtt'?: unknown } | null)?.['Fn::GetAtt'];
  return Array.isArray(getAtt) && typeof getAtt[0] === 'string' ? getAtt[0] : undefined;
}

/** A queue of the template as its properties declare it, with SQS's documented defaults (CreateQueue). */
export interface QueueShape {
  logicalId: string;
  fifo: boolean;
  contentBasedDeduplication: boolean;
  /** Seconds (default 30). */
  visibilityTimeout: number;
  /** What `KmsMasterKeyId` names: an alias, or the logical id of a key of the template. */
  kmsKey?: { alias: string } | { logicalId: string };
  deadLetterQueue?: string;
}

export function queueShape(resources: Resources, logicalId: string): QueueShape | undefined {
  const queue = resources[logicalId];
  if (queue?.Type !== 'AWS::SQS::Queue') return undefined;
  const p = queue.Properties ?? {};
  const key = p.KmsMasterKeyId;
  const kmsKey = typeof key === 'string' ? { alias: key } : referenced(key) !== undefined ? { logicalId: referenced(key)! } : undefined;
  const deadLetterQueue = referenced(at(p.RedrivePolicy, 'deadLetterTargetArn'));
  return {
    logicalId,
    fifo: p.FifoQueue === true || p.FifoQueue === 'true',
    contentBasedDeduplication: p.ContentBasedDeduplication === true || p.ContentBasedDeduplication === 'true',
    visibilityTimeout: Number(p.VisibilityTimeout ?? 30),
    ...(kmsKey === undefined ? {} : { kmsKey }),
    ...(deadLetterQueue === undefined ? {} : { deadLetterQueue }),
  };
}

const ofType = (resources: Resources, type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]);

/** Whether a policy document lets the AWS service `service` do `action` (an `Allow` naming the service, the action or a wildcard of it). */
export function allowsService(document: unknown, service: string, action: string): boolean {
  const [prefix] = action.split(':');
  return list((document as { Statement?: unknown })?.Statement).some((s) => {
    const statement = s as { Effect?: string; Principal?: { Service?: unknown } | string; Action?: unknown };
    if (statement.Effect !== 'Allow') return false;
    const principal = statement.Principal;
    const services = typeof principal === 'object' ? list(principal.Service) : [];
    if (principal !== '*' && !services.includes(service)) return false;
    return list(statement.Action).some(
      (a) =>
        a === '*' || a === action || a === `${prefix}:*` || (typeof a === 'string' && a.endsWith('*') && action.startsWith(a.slice(0, -1))),
    );
  });
}

/** Every queue an EventBridge rule sends to (a target, or a target's dead-letter queue), with where. */
function eventBridgeQueues(resources: Resources): { rule: string; location: string; queue: QueueShape; target?: unknown }[] {
  return ofType(resources, 'AWS::Events::Rule').flatMap(([rule, resource]) =>
    list(resource.Properties?.Targets).flatMap((t, index) => {
      const target = t;
      const queue = queueShape(resources, referenced(at(target, 'Arn')) ?? '');
      const dlq = queueShape(resources, referenced(at(target, 'DeadLetterConfig', 'Arn')) ?? '');
      const location = `/Properties/Targets/${index}`;
      return [
        ...(queue === undefined ? [] : [{ rule, location, queue, target }]),
        ...(dlq === undefined ? [] : [{ rule, location: `${location}/DeadLetterConfig`, queue: dlq }]),
      ];
    }),
  );
}

type Check = (resources: Resources) => WiringRefusal[];

/**
 * A FIFO queue as an EventBridge target: SqsParameters says the queue must have content-based
 * deduplication (a rule target has no deduplication id to give, and SendMessage to a FIFO queue
 * without one is refused unless the queue deduplicates on content), and the target must name the
 * message group (SendMessage refuses a FIFO message without MessageGroupId).
 */
const eventBridgeFifoTargets: Check = (resources) =>
  eventBridgeQueues(resources).flatMap(({ rule, location, queue, target }) => {
    if (!queue.fifo) return [];
    const found: WiringRefusal[] = [];
    if (target === undefined) {
      return [
        {
          rule: 'EventBridgeFifoDeadLetterQueue',
          logicalId: rule,
          location,
          problem: `the dead-letter queue ${queue.logicalId} is FIFO: EventBridge sends it no message group or deduplication id`,
          doc: AWS_DOCS.sendMessage,
        },
      ];
    }
    if (!queue.contentBasedDeduplication)
      found.push({
        rule: 'EventBridgeFifoTargetDeduplication',
        logicalId: rule,
        location,
        problem: `targets the FIFO queue ${queue.logicalId}, which has no content-based deduplication: SQS refuses every event EventBridge sends it`,
        doc: AWS_DOCS.sqsParameters,
      });
    const group = at(target, 'SqsParameters', 'MessageGroupId');
    if (typeof group !== 'string' || group === '')
      found.push({
        rule: 'EventBridgeFifoTargetGroup',
        logicalId: rule,
        location,
        problem: `targets the FIFO queue ${queue.logicalId} without SqsParameters.MessageGroupId`,
        doc: AWS_DOCS.sqsParameters,
      });
    return found;
  });

/** A queue EventBridge sends to must let events.amazonaws.com send (its queue policy); otherwise every delivery is refused. */
const eventBridgeQueuePolicies: Check = (resources) => {
  const policies = ofType(resources, 'AWS::SQS::QueuePolicy');
  return eventBridgeQueues(resources).flatMap(({ rule, location, queue }) => {
    const allowed = policies.some(
      ([, p]) =>
        list(p.Properties?.Queues).some((q) => referenced(q) === queue.logicalId) &&
        allowsService(p.Properties?.PolicyDocument, 'events.amazonaws.com', 'sqs:SendMessage'),
    );
    if (allowed) return [];
    const problem = `sends to ${queue.logicalId}, whose queue policy does not let events.amazonaws.com send to it`;
    return [{ rule: 'EventBridgeQueuePolicy', logicalId: rule, location, problem, doc: AWS_DOCS.eventBridgeSqsPermissions }];
  });
};

/**
 * An encrypted queue EventBridge sends to, or an encrypted topic CloudWatch alarms publish to,
 * needs a customer managed key whose policy lets that service use it: the AWS managed keys
 * (`alias/aws/sqs`, `alias/aws/sns`) cannot be given to another service.
 */
const serviceKeys: Check = (resources) => {
  const keyProblem = (key: QueueShape['kmsKey'], managed: string, service: string): string | undefined => {
    if (key === undefined) return undefined;
    if ('alias' in key)
      return key.alias === managed ? `is encrypted with the AWS managed key ${managed}, which ${service} cannot use` : undefined;
    const policy = resources[key.logicalId]?.Properties?.KeyPolicy;
    if (policy === undefined) return undefined;
    const usable = ['kms:Decrypt', 'kms:GenerateDataKey'].every((action) => allowsService(policy, service, action));
    return usable ? undefined : `is encrypted with the key ${key.logicalId}, whose policy does not let ${service} use it`;
  };
  const queues = eventBridgeQueues(resources).flatMap(({ rule, location, queue }) => {
    const problem = keyProblem(queue.kmsKey, 'alias/aws/sqs', 'events.amazonaws.com');
    return problem === undefined
      ? []
      : [
          {
            rule: 'EventBridgeQueueKey',
            logicalId: rule,
            location,
            problem: `${queue.logicalId} ${problem}`,
            doc: AWS_DOCS.sqsKeyManagement,
          },
        ];
  });
  const topics = ofType(resources, 'AWS::CloudWatch::Alarm').flatMap(([alarm, resource]) =>
    list(resource.Properties?.AlarmActions).flatMap((action, index) => {
      const topic = referenced(action);
      if (topic === undefined || resources[topic]?.Type !== 'AWS::SNS::Topic') return [];
      const raw = resources[topic].Properties?.KmsMasterKeyId;
      const key = typeof raw === 'string' ? { alias: raw } : referenced(raw) === undefined ? undefined : { logicalId: referenced(raw)! };
      const problem = keyProblem(key, 'alias/aws/sns', 'cloudwatch.amazonaws.com');
      return problem === undefined
        ? []
        : [
            {
              rule: 'AlarmTopicKey',
              logicalId: alarm,
              location: `/Properties/AlarmActions/${index}`,
              problem: `the topic ${topic} ${problem}`,
              doc: AWS_DOCS.snsKeyManagement,
            },
          ];
    }),
  );
  return [...queues, ...topics];
};

/** A FIFO queue's dead-letter queue is FIFO, a standard queue's is standard; a named FIFO queue ends in `.fifo`. */
const queueShapes: Check = (resources) =>
  ofType(resources, 'AWS::SQS::Queue').flatMap(([id, resource]) => {
    const queue = queueShape(resources, id)!;
    const found: WiringRefusal[] = [];
    const dlq = queue.deadLetterQueue === undefined ? undefined : queueShape(resources, queue.deadLetterQueue);
    if (dlq !== undefined && dlq.fifo !== queue.fifo)
      found.push({
        rule: 'SqsDeadLetterQueueType',
        logicalId: id,
        location: '/Properties/RedrivePolicy',
        problem: `is ${queue.fifo ? 'FIFO' : 'standard'}, its dead-letter queue ${dlq.logicalId} is not`,
        doc: AWS_DOCS.sqsDeadLetterQueues,
      });
    const name = resource.Properties?.QueueName;
    if (typeof name === 'string' && queue.fifo !== name.endsWith('.fifo'))
      found.push({
        rule: 'SqsFifoQueueName',
        logicalId: id,
        location: '/Properties/QueueName',
        problem: `is named ${name}: a queue is FIFO exactly when its name ends in .fifo`,
        doc: AWS_DOCS.createQueue,
      });
    return found;
  });

/** A Lambda event source mapping on a queue of the template, and what its rules read. */
interface QueueMapping {
  id: string;
  queue: QueueShape;
  /** The function's timeout (seconds; Lambda's default 3). */
  timeout: number;
  batch: number;
  windowSeconds?: number;
  concurrency?: number;
}

function queueMappingsOf(resources: Resources): QueueMapping[] {
  return ofType(resources, 'AWS::Lambda::EventSourceMapping').flatMap(([id, resource]) => {
    const p = resource.Properties ?? {};
    const queue = queueShape(resources, referenced(p.EventSourceArn) ?? '');
    if (queue === undefined) return [];
    const timeout = Number(resources[referenced(p.FunctionName) ?? '']?.Properties?.Timeout ?? 3);
    const windowSeconds = p.MaximumBatchingWindowInSeconds === undefined ? undefined : Number(p.MaximumBatchingWindowInSeconds);
    const maximum = at(p.ScalingConfig, 'MaximumConcurrency');
    const concurrency = maximum === undefined ? undefined : Number(maximum);
    return [
      {
        id,
        queue,
        timeout,
        batch: Number(p.BatchSize ?? 10),
        ...(windowSeconds === undefined ? {} : { windowSeconds }),
        ...(concurrency === undefined ? {} : { concurrency }),
      },
    ];
  });
}

type MappingRule = (m: QueueMapping) => Omit<WiringRefusal, 'logicalId'> | undefined;

/**
 * A Lambda event source mapping on a queue: the queue's visibility timeout at least the
 * function's timeout (Lambda refuses less); a FIFO queue's batch at most 10 and no batching
 * window; a standard queue's batch at most 10,000, over 10 only with a batching window of at least
 * a second; a maximum concurrency of 2 to 1,000.
 */
const MAPPING_RULES: readonly MappingRule[] = [
  ({ queue, timeout }) =>
    queue.visibilityTimeout >= timeout
      ? undefined
      : {
          rule: 'LambdaQueueVisibilityTimeout',
          location: '/Properties/EventSourceArn',
          problem: `reads ${queue.logicalId}, whose visibility timeout (${queue.visibilityTimeout} s) is less than the function's timeout (${timeout} s)`,
          doc: AWS_DOCS.lambdaWithSqs,
        },
  ({ queue, batch, windowSeconds }) => {
    const problem = queue.fifo
      ? batch > 10
        ? `takes batches of ${batch} from the FIFO queue ${queue.logicalId} (at most 10)`
        : (windowSeconds ?? 0) > 0
          ? `sets a batching window on the FIFO queue ${queue.logicalId}`
          : undefined
      : batch > 10_000 || (batch > 10 && (windowSeconds ?? 0) < 1)
        ? `takes batches of ${batch} from ${queue.logicalId}: at most 10,000, and over 10 only with a batching window of a second or more`
        : undefined;
    return problem === undefined
      ? undefined
      : { rule: 'LambdaQueueBatch', location: '/Properties/BatchSize', problem, doc: AWS_DOCS.createEventSourceMapping };
  },
  ({ concurrency }) =>
    concurrency === undefined || (concurrency >= 2 && concurrency <= 1000)
      ? undefined
      : {
          rule: 'LambdaQueueConcurrency',
          location: '/Properties/ScalingConfig',
          problem: `sets a maximum concurrency of ${concurrency} (2 to 1,000)`,
          doc: AWS_DOCS.createEventSourceMapping,
        },
];

const queueMappings: Check = (resources) =>
  queueMappingsOf(resources).flatMap((mapping) =>
    MAPPING_RULES.flatMap((rule) => {
      const found = rule(mapping);
      return found === undefined ? [] : [{ ...found, logicalId: mapping.id }];
    }),
  );

const CHECKS: readonly Check[] = [eventBridgeFifoTargets, eventBridgeQueuePolicies, serviceKeys, queueShapes, queueMappings];

export const WIRING_RULES = [
  'EventBridgeFifoTargetDeduplication',
  'EventBridgeFifoTargetGroup',
  'EventBridgeFifoDeadLetterQueue',
  'EventBridgeQueuePolicy',
  'EventBridgeQueueKey',
  'AlarmTopicKey',
  'SqsDeadLetterQueueType',
  'SqsFifoQueueName',
  'LambdaQueueVisibilityTimeout',
  'LambdaQueueBatch',
  'LambdaQueueConcurrency',
] as const;

/** Every wiring of the template that AWS documents as refused. */
export function wiringRefusals(template: Template): WiringRefusal[] {
  const resources = template.Resources ?? {};
  return CHECKS.flatMap((check) => check(resources));
}

export const WIRING_PLUGIN_NAME = 'contest-sync AwsWiring';

/** The checks as a CDK validation plugin: one violation per rule, naming its resources and its documentation. */
export function wiringValidation(): IPolicyValidationPlugin {
  return {
    name: WIRING_PLUGIN_NAME,
    ruleIds: [...WIRING_RULES],
    validate(context): PolicyValidationPluginReport {
      const found = context.templatePaths.flatMap((templatePath) =>
        wiringRefusals(JSON.parse(readFileSync(templatePath, 'utf8')) as Template).map((refusal) => ({ refusal, templatePath })),
      );
      const rules = [...new Set(found.map(({ refusal }) => refusal.rule))];
      const violations = rules.map((rule) => {
        const ofRule = found.filter(({ refusal }) => refusal.rule === rule);
        const { doc } = ofRule[0]!.refusal;
        return {
          ruleName: `AwsWiring-${rule}`,
          description: ofRule.map(({ refusal }) => `${refusal.logicalId} ${refusal.problem}`).join('; '),
          fix: `${doc.title}: ${doc.url}`,
          severity: 'error',
          violatingResources: ofRule.map(({ refusal, templatePath }) => ({
            resourceLogicalId: refusal.logicalId,
            templatePath,
            locations: [refusal.location],
          })),
        };
      });
      return { success: violations.length === 0, violations };
    },
  };
}

/** Runs the wiring checks on every synthesis of `app`: a refused wiring fails it, in the validation report. */
export function addWiringChecks(app: App): void {
  Validations.of(app).addPlugins(wiringValidation());
}
