/**
 * The local SQS queue (local/door/queue-standin.ts) as the template declares it, refusing what SQS
 * refuses: a FIFO queue without content-based deduplication that an EventBridge rule targets
 * refuses every event (the bus stand-in dead-letters them), as the template check says it would;
 * SendMessage and SendMessageBatch through the AWS SDK, refused and answered as SQS documents;
 * FIFO deduplication within 5 minutes; the event source mapping's partial batch responses and
 * the redrive policy.
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { App, Duration, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { wiringRefusals } from '../../lib/wiring.js';
import { rulesFromTemplate, startBusStandin, type BusStandin } from '../../local/bus-standin.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/dynamodb-local.js';
import { queueFromTemplate, startQueueStandin, type QueueDefinition, type QueueStandin } from '../../local/door/queue-standin.js';

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

interface Wired {
  template: { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> };
  ids: { bus: string; queue: string; deadLetters: string };
}

/** A bus, a rule taking every `app` event to a FIFO queue (message group `g`) with a dead-letter queue, and a function reading the queue. */
function wiredStack(queueProps: Partial<sqs.QueueProps>, reportBatchItemFailures = true): Wired {
  const app = new App(); // no wiring checks: the point is a template AWS would refuse
  const stack = new Stack(app, 'Wired');
  const bus = new events.EventBus(stack, 'Bus');
  const deadLetters = new sqs.Queue(stack, 'DeadLetters');
  const redrive = new sqs.Queue(stack, 'Redrive', { fifo: true });
  const queue = new sqs.Queue(stack, 'Feed', {
    fifo: true,
    visibilityTimeout: Duration.minutes(6),
    deadLetterQueue: { queue: redrive, maxReceiveCount: 3 },
    ...queueProps,
  });
  new events.Rule(stack, 'ToFeed', {
    eventBus: bus,
    eventPattern: { source: ['app'] },
    targets: [new targets.SqsQueue(queue, { messageGroupId: 'g', deadLetterQueue: deadLetters })],
  });
  const consumer = new lambda.Function(stack, 'Consumer', {
    runtime: lambda.Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline('exports.handler = async () => ({})'),
    timeout: Duration.minutes(1),
  });
  consumer.addEventSource(new SqsEventSource(queue, { batchSize: 10, reportBatchItemFailures }));
  const template = app.synth().getStackByName('Wired').template as Wired['template'];
  const idOf = (prefix: string, type: string) =>
    Object.keys(template.Resources).find((id) => id.startsWith(prefix) && template.Resources[id]!.Type === type)!;
  return {
    template,
    ids: {
      bus: idOf('Bus', 'AWS::Events::EventBus'),
      queue: idOf('Feed', 'AWS::SQS::Queue'),
      deadLetters: idOf('DeadLetters', 'AWS::SQS::Queue'),
    },
  };
}

async function queueOf(
  definition: QueueDefinition,
  consume: (records: SQSRecord[]) => Promise<any> = async () => ({}),
  now?: () => number,
) {
  const queue = await startQueueStandin(definition, consume, now === undefined ? {} : { now });
  closing.push(() => queue.close());
  return queue;
}

async function busTo(wired: Wired, queue: QueueStandin, faults = {}): Promise<BusStandin> {
  const bus = await startBusStandin({
    rules: rulesFromTemplate(wired.template, wired.ids.bus),
    targets: { [wired.ids.queue]: async (event, target) => queue.fromRule(JSON.stringify(event), target.sqsParameters) },
    retries: 1,
    retryDelayMs: 1,
    faults,
  });
  closing.push(() => bus.close());
  return bus;
}

const putEvents = async (bus: BusStandin, n: number) => {
  const client = new EventBridgeClient({ endpoint: bus.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const entries = Array.from({ length: n }, (_, i) => ({
    Source: 'app',
    DetailType: 'Happened',
    Detail: JSON.stringify({ eventId: `e${i}` }),
  }));
  await client.send(new PutEventsCommand({ Entries: entries }));
  client.destroy();
  await bus.idle();
};

describe('a FIFO queue targeted by an EventBridge rule', () => {
  it('without content-based deduplication refuses every event as SQS does: each is dead-lettered, the consumer gets none', async () => {
    const wired = wiredStack({});
    expect(wiringRefusals(wired.template).map((r) => r.rule)).toEqual(['EventBridgeFifoTargetDeduplication']);
    const consumed: SQSRecord[] = [];
    const queue = await queueOf(queueFromTemplate(wired.template, wired.ids.queue), async (records) => void consumed.push(...records));
    const bus = await busTo(wired, queue);
    await putEvents(bus, 3);
    await queue.idle();
    expect(consumed).toEqual([]);
    expect(bus.failed.map((f) => [f.deadLetterQueue, f.error])).toEqual(
      Array(3).fill([
        wired.ids.deadLetters,
        'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly',
      ]),
    );
  });

  it('with content-based deduplication takes each event once: distinct events differ, a redelivery of one is dropped', async () => {
    const wired = wiredStack({ contentBasedDeduplication: true });
    expect(wiringRefusals(wired.template)).toEqual([]);
    const consumed: SQSRecord[] = [];
    const queue = await queueOf(queueFromTemplate(wired.template, wired.ids.queue), async (records) => void consumed.push(...records));
    const bus = await busTo(wired, queue, { duplicate: 1 }); // every delivery made twice, the same event
    await putEvents(bus, 3);
    await queue.idle();
    expect(consumed.map((r) => JSON.parse(r.body).detail.eventId)).toEqual(['e0', 'e1', 'e2']);
    expect(consumed.every((r) => r.attributes.MessageGroupId === 'g')).toBe(true);
    expect([queue.sent, queue.deduplicated, bus.failed.length]).toEqual([6, 3, 0]);
  });
});

describe('SendMessage and SendMessageBatch through the AWS SDK', () => {
  const fifo: QueueDefinition = {
    logicalId: 'Q',
    fifo: true,
    contentBasedDeduplication: false,
    deduplicationScope: 'queue',
    maximumMessageSize: 1_048_576,
    delaySeconds: 0,
  };
  const client = (queue: QueueStandin) => {
    const sqsClient = new SQSClient({ endpoint: queue.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
    closing.push(async () => sqsClient.destroy());
    return sqsClient;
  };
  const refused = async (send: Promise<unknown>) => {
    const error = await send.then(
      () => undefined,
      (e: unknown) => e as { name: string; message: string },
    );
    return error?.name;
  };

  it.each([
    [
      'a FIFO message without a deduplication id, the queue not deduplicating on content',
      fifo,
      { MessageGroupId: 'g' },
      'InvalidParameterValue',
    ],
    ['a FIFO message without a message group', fifo, { MessageDeduplicationId: 'd' }, 'MissingParameter'],
    [
      'a FIFO message with its own delay',
      fifo,
      { MessageGroupId: 'g', MessageDeduplicationId: 'd', DelaySeconds: 5 },
      'InvalidParameterValue',
    ],
    ['a FIFO message whose group has a space', fifo, { MessageGroupId: 'a b', MessageDeduplicationId: 'd' }, 'InvalidParameterValue'],
    ['a deduplication id on a standard queue', { ...fifo, fifo: false }, { MessageDeduplicationId: 'd' }, 'InvalidParameterValue'],
    [
      'a body over MaximumMessageSize',
      { ...fifo, maximumMessageSize: 1024 },
      { MessageGroupId: 'g', MessageDeduplicationId: 'd', MessageBody: 'x'.repeat(1025) },
      'InvalidParameterValue',
    ],
    [
      'a body with a character XML does not allow',
      fifo,
      { MessageGroupId: 'g', MessageDeduplicationId: 'd', MessageBody: 'a\u0001b' },
      'InvalidMessageContents',
    ],
    ['an empty body', fifo, { MessageGroupId: 'g', MessageDeduplicationId: 'd', MessageBody: '' }, 'MissingParameter'],
  ])('refuses %s', async (_what, definition, input, code) => {
    const queue = await queueOf(definition);
    const send = client(queue).send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'hello', ...input }));
    expect(await refused(send)).toBe(code);
    expect(queue.sent).toBe(0);
  });

  it('refuses a batch of 11, or one with two entries of one id; answers an entry refused alone in Failed', async () => {
    const queue = await queueOf({ ...fifo, contentBasedDeduplication: true });
    const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ Id: `m${i}`, MessageBody: `body ${i}`, MessageGroupId: 'g' }));
    const batch = (Entries: ReturnType<typeof entries>) =>
      client(queue).send(new SendMessageBatchCommand({ QueueUrl: queue.url, Entries }));
    expect(await refused(batch(entries(11)))).toBe('TooManyEntriesInBatchRequest');
    expect(await refused(batch([...entries(1), ...entries(1)]))).toBe('BatchEntryIdsNotDistinct');
    const answer = await batch([...entries(2), { Id: 'nogroup', MessageBody: 'x' } as never]);
    expect([answer.Successful?.map((s) => s.Id), answer.Failed?.map((f) => [f.Id, f.Code, f.SenderFault])]).toEqual([
      ['m0', 'm1'],
      [['nogroup', 'MissingParameter', true]],
    ]);
    expect(
      await refused(client(queue).send(new SendMessageCommand({ QueueUrl: `${queue.url}-other`, MessageBody: 'x', MessageGroupId: 'g' }))),
    ).toBe('QueueDoesNotExist');
  });

  it('delivers a deduplication id once within 5 minutes, and again after', async () => {
    let clock = Date.UTC(2026, 11, 1);
    const consumed: string[] = [];
    const queue = await queueOf(
      fifo,
      async (records) => void consumed.push(...records.map((r) => r.body)),
      () => clock,
    );
    const send = (body: string) =>
      client(queue).send(
        new SendMessageCommand({ QueueUrl: queue.url, MessageBody: body, MessageGroupId: 'g', MessageDeduplicationId: 'same' }),
      );
    await send('first');
    clock += 4 * 60_000;
    await send('within five minutes');
    clock += 61_000;
    await send('after five minutes');
    await queue.idle();
    expect(consumed).toEqual(['first', 'after five minutes']);
    expect([queue.sent, queue.deduplicated]).toEqual([3, 1]);
  });
});

describe('the event source mapping and the redrive policy, as the template declares them', () => {
  it('retries a reported failure until maxReceiveCount, then dead-letters it; a FIFO group never passes it', async () => {
    const wired = wiredStack({ contentBasedDeduplication: true });
    const seen: string[] = [];
    const queue = await queueOf(queueFromTemplate(wired.template, wired.ids.queue), async (records: SQSRecord[]) => {
      seen.push(...records.map((r) => `${r.body}#${r.attributes.ApproximateReceiveCount}`));
      // `bad` fails; it and what follows it in its group are handed back, as the feed builder does.
      const at = records.findIndex((r) => r.body === 'bad');
      return { batchItemFailures: at < 0 ? [] : records.slice(at).map((r) => ({ itemIdentifier: r.messageId })) };
    });
    for (const body of ['ok', 'bad', 'after']) queue.send({ body, groupId: 'g' });
    await queue.idle();
    expect(seen).toEqual(['ok#1', 'bad#1', 'after#1', 'bad#2', 'after#2', 'bad#3', 'after#3']);
    expect(queue.deadLetters.map((r) => r.body)).toEqual(['bad', 'after']);
  });

  it('ignores batchItemFailures when the mapping does not report them (the whole batch is deleted)', async () => {
    const wired = wiredStack({ contentBasedDeduplication: true }, false);
    let calls = 0;
    const queue = await queueOf(queueFromTemplate(wired.template, wired.ids.queue), async (records: SQSRecord[]) => {
      calls += 1;
      return { batchItemFailures: records.map((r) => ({ itemIdentifier: r.messageId })) };
    });
    queue.send({ body: 'once', groupId: 'g' });
    await queue.idle();
    expect([calls, queue.deadLetters.length]).toEqual([1, 0]);
  });
});
