/**
 * A local SQS queue (SQS does not run here), as the synthesized template declares it
 * (`queueFromTemplate`: the AWS::SQS::Queue's properties and the Lambda event source mapping that
 * reads it). An HTTP server answers the AWS SDK's `SendMessage` and `SendMessageBatch` (AWS JSON
 * 1.0); `fromRule` is what an EventBridge rule's SQS target sends. Both refuse what SQS refuses,
 * each rule with the documentation it follows:
 *
 *   - Amazon SQS API Reference — SendMessage
 *     https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html
 *     a body of 1 character to the queue's MaximumMessageSize (1 MiB by default and at most), in
 *     the characters XML allows (InvalidMessageContents); on a FIFO queue a MessageGroupId, and a
 *     MessageDeduplicationId unless the queue has ContentBasedDeduplication (then the SHA-256 of
 *     the body), each 1 to 128 alphanumeric or punctuation characters; no per-message DelaySeconds;
 *     on a standard queue no MessageDeduplicationId.
 *   - Amazon SQS API Reference — SendMessageBatch
 *     https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html
 *     1 to 10 entries, distinct ids of up to 80 alphanumerics, hyphens and underscores, all bodies
 *     together within MaximumMessageSize; an entry refused alone is answered in `Failed`.
 *   - Amazon SQS Developer Guide — Exactly-once processing in Amazon SQS
 *     https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-exactly-once-processing.html
 *     a message whose deduplication id was sent in the last 5 minutes is accepted and not delivered
 *     (per queue, or per message group with DeduplicationScope messageGroup).
 *   - Amazon SQS Developer Guide — Using dead-letter queues in Amazon SQS
 *     https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 *     a message received maxReceiveCount times without being deleted moves to the dead-letter queue.
 *   - AWS Lambda Developer Guide — Using Lambda with Amazon SQS (and "Handling errors for an SQS
 *     event source in Lambda": partial batch responses)
 *     https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html
 *     batches of at most the mapping's BatchSize, a FIFO group in order; `batchItemFailures` is
 *     read only with ReportBatchItemFailures (otherwise a returned batch is deleted whole); a throw
 *     returns the whole batch.
 *
 * What differs, on purpose: a message handed back is received again at once, not after the
 * visibility timeout, and one batch is consumed at a time; a queue without a redrive policy gives
 * a message up after 10 receives (SQS keeps it until its retention period).
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { queueShape, referenced } from '../../lib/wiring.js';

/** SQS's largest message, and the default of MaximumMessageSize (SendMessage, CreateQueue). */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;
/** The FIFO deduplication interval (Exactly-once processing in Amazon SQS). */
export const FIFO_DEDUPLICATION_MS = 5 * 60_000;
const MAX_BATCH_ENTRIES = 10;
const RECEIVES_WITHOUT_REDRIVE = 10;

/** What SQS's behaviour depends on, as the template declares the queue. */
export interface QueueDefinition {
  logicalId: string;
  fifo: boolean;
  contentBasedDeduplication: boolean;
  deduplicationScope: 'queue' | 'messageGroup';
  maximumMessageSize: number;
  delaySeconds: number;
  /** The redrive policy's, if the queue has a dead-letter queue. */
  maxReceiveCount?: number;
  /** The Lambda event source mapping that reads it, if one does. */
  mapping?: { batchSize: number; reportBatchItemFailures: boolean };
}

interface CfnResource {
  Type: string;
  Properties?: Record<string, any>;
}

/** The queue `logicalId` of a synthesized template, with SQS's and Lambda's documented defaults. */
export function queueFromTemplate(template: { Resources: Record<string, CfnResource> }, logicalId: string): QueueDefinition {
  const shape = queueShape(template.Resources, logicalId);
  if (shape === undefined) throw new Error(`${logicalId} is not a queue of the template`);
  const p = template.Resources[logicalId]!.Properties ?? {};
  const mapping = Object.values(template.Resources).find(
    (r) => r.Type === 'AWS::Lambda::EventSourceMapping' && referenced(r.Properties?.EventSourceArn) === logicalId,
  )?.Properties;
  const maxReceiveCount = p.RedrivePolicy?.maxReceiveCount;
  return {
    logicalId,
    fifo: shape.fifo,
    contentBasedDeduplication: shape.contentBasedDeduplication,
    deduplicationScope: p.DeduplicationScope === 'messageGroup' ? 'messageGroup' : 'queue',
    maximumMessageSize: Number(p.MaximumMessageSize ?? SQS_MAX_MESSAGE_BYTES),
    delaySeconds: Number(p.DelaySeconds ?? 0),
    ...(maxReceiveCount === undefined ? {} : { maxReceiveCount: Number(maxReceiveCount) }),
    ...(mapping === undefined
      ? {}
      : {
          mapping: {
            batchSize: Number(mapping.BatchSize ?? 10),
            reportBatchItemFailures: ((mapping.FunctionResponseTypes as string[] | undefined) ?? []).includes('ReportBatchItemFailures'),
          },
        }),
  };
}

/** An error SQS answers, with the code the SDK throws by. */
export class SqsError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = code;
  }
}

/** One message as a sender gives it. */
export interface OutgoingMessage {
  body: string;
  groupId?: string;
  deduplicationId?: string;
  delaySeconds?: number;
}

/** The characters a message may hold (SendMessage: #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF). */
const NOT_ALLOWED = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
/** MessageGroupId and MessageDeduplicationId: alphanumerics and punctuation, 1 to 128. */
const FIFO_ID = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

/** SendMessage's documented refusals of one message on `queue`, or undefined when SQS takes it. */
export function refusal(queue: QueueDefinition, message: OutgoingMessage): SqsError | undefined {
  const bytes = Buffer.byteLength(message.body, 'utf8');
  if (message.body.length === 0) return new SqsError('MissingParameter', 'The request must contain the parameter MessageBody.');
  if (NOT_ALLOWED.test(message.body)) return new SqsError('InvalidMessageContents', 'Invalid characters found.');
  if (bytes > queue.maximumMessageSize)
    return new SqsError(
      'InvalidParameterValue',
      `One or more parameters are invalid. Reason: Message must be shorter than ${queue.maximumMessageSize} bytes.`,
    );
  if (!queue.fifo) {
    return message.deduplicationId === undefined
      ? undefined
      : new SqsError('InvalidParameterValue', 'The request include parameter MessageDeduplicationId that is not valid for this queue type');
  }
  if (message.groupId === undefined) return new SqsError('MissingParameter', 'The request must contain the parameter MessageGroupId.');
  if (!FIFO_ID.test(message.groupId))
    return new SqsError(
      'InvalidParameterValue',
      'MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.',
    );
  if (message.deduplicationId === undefined && !queue.contentBasedDeduplication)
    return new SqsError(
      'InvalidParameterValue',
      'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly',
    );
  if (message.deduplicationId !== undefined && !FIFO_ID.test(message.deduplicationId))
    return new SqsError(
      'InvalidParameterValue',
      'MessageDeduplicationId can only include alphanumeric and punctuation characters. 1 to 128 in length.',
    );
  if (message.delaySeconds !== undefined && message.delaySeconds !== 0)
    return new SqsError(
      'InvalidParameterValue',
      'Value for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.',
    );
  return undefined;
}

export interface QueueStandin {
  /** The queue's URL (the SDK sends to it: give it as the function's queue URL). */
  url: string;
  endpoint: string;
  queue: QueueDefinition;
  /** Messages accepted (those dropped as duplicates included: each was a request SQS took). */
  readonly sent: number;
  /** Accepted messages not delivered: their deduplication id was sent in the last 5 minutes. */
  readonly deduplicated: number;
  /** Messages moved to the dead-letter queue (or given up), as their last receive saw them. */
  readonly deadLetters: SQSRecord[];
  /** Sends one message, as SendMessage does (throws the SqsError SQS answers). */
  send(message: OutgoingMessage): void;
  /** What an EventBridge rule's SQS target sends: the event, the target's MessageGroupId, and no deduplication id. */
  fromRule(body: string, sqsParameters?: { MessageGroupId?: string }): void;
  /** true: messages wait until `hold(false)` (to tell a sender's requests from the consumer's). */
  hold(held: boolean): void;
  /** Resolves once every message sent so far has been consumed, dead-lettered or dropped. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

interface Pending {
  record: SQSRecord;
  group: string;
  visibleAt: number;
  receives: number;
}

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

function recordOf(queue: QueueDefinition, body: string, group: string): SQSRecord {
  const messageId = randomUUID();
  return {
    messageId,
    receiptHandle: messageId,
    body,
    attributes: { ApproximateReceiveCount: '1', ...(queue.fifo ? { MessageGroupId: group } : {}) } as unknown as SQSRecord['attributes'],
    messageAttributes: {},
    md5OfBody: md5(body),
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queue.logicalId}${queue.fifo ? '.fifo' : ''}`,
    awsRegion: 'us-east-1',
  };
}

interface Entry {
  Id?: string;
  MessageBody?: string;
  MessageGroupId?: string;
  MessageDeduplicationId?: string;
  DelaySeconds?: number;
}

const outgoing = (entry: Entry): OutgoingMessage => ({
  body: entry.MessageBody ?? '',
  ...(entry.MessageGroupId === undefined ? {} : { groupId: entry.MessageGroupId }),
  ...(entry.MessageDeduplicationId === undefined ? {} : { deduplicationId: entry.MessageDeduplicationId }),
  ...(entry.DelaySeconds === undefined ? {} : { delaySeconds: entry.DelaySeconds }),
});

/** SendMessageBatch: the request's own refusals (thrown), then each entry's (answered in Failed). */
function sendBatch(standin: QueueStandin, entries: Entry[]): { Successful: unknown[]; Failed: unknown[] } {
  if (entries.length === 0)
    throw new SqsError(
      'AWS.SimpleQueueService.EmptyBatchRequest',
      'There should be at least one SendMessageBatchRequestEntry in the request.',
    );
  if (entries.length > MAX_BATCH_ENTRIES)
    throw new SqsError(
      'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
      `Maximum number of entries per request are ${MAX_BATCH_ENTRIES}.`,
    );
  const ids = entries.map((e) => e.Id ?? '');
  if (ids.some((id) => !/^[A-Za-z0-9_-]{1,80}$/.test(id)))
    throw new SqsError(
      'AWS.SimpleQueueService.InvalidBatchEntryId',
      'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
    );
  if (new Set(ids).size !== ids.length)
    throw new SqsError('AWS.SimpleQueueService.BatchEntryIdsNotDistinct', 'Two or more batch entries in the request have the same Id.');
  const total = entries.reduce((sum, e) => sum + Buffer.byteLength(e.MessageBody ?? '', 'utf8'), 0);
  if (total > standin.queue.maximumMessageSize)
    throw new SqsError(
      'AWS.SimpleQueueService.BatchRequestTooLong',
      `Batch requests cannot be longer than ${standin.queue.maximumMessageSize} bytes.`,
    );
  const answer = { Successful: [] as unknown[], Failed: [] as unknown[] };
  for (const entry of entries) {
    try {
      standin.send(outgoing(entry));
      answer.Successful.push({ Id: entry.Id, MessageId: randomUUID(), MD5OfMessageBody: md5(entry.MessageBody ?? '') });
    } catch (error) {
      if (!(error instanceof SqsError)) throw error;
      answer.Failed.push({ Id: entry.Id, SenderFault: true, Code: error.code, Message: error.message });
    }
  }
  return answer;
}

/** Answers the SDK's SendMessage or SendMessageBatch to this queue's URL (anything else: the error SQS answers). */
function answerSend(standin: QueueStandin, req: IncomingMessage, res: ServerResponse): void {
  let text = '';
  req.on('data', (chunk: Buffer) => (text += chunk.toString()));
  req.on('end', () => {
    const reply = (status: number, body: unknown, code?: string) =>
      res
        .writeHead(status, {
          'content-type': 'application/x-amz-json-1.0',
          ...(code === undefined ? {} : { 'x-amzn-query-error': `${code};Sender` }),
        })
        .end(JSON.stringify(body));
    try {
      const target = req.headers['x-amz-target'];
      const input = JSON.parse(text) as { QueueUrl?: string; Entries?: Entry[] } & Entry;
      if (input.QueueUrl !== standin.url)
        throw new SqsError('AWS.SimpleQueueService.NonExistentQueue', 'The specified queue does not exist.');
      if (target === 'AmazonSQS.SendMessageBatch') return reply(200, sendBatch(standin, input.Entries ?? []));
      if (target !== 'AmazonSQS.SendMessage')
        throw new SqsError('InvalidAction', `the queue stand-in serves SendMessage and SendMessageBatch, not ${String(target)}`);
      standin.send(outgoing(input));
      return reply(200, { MessageId: randomUUID(), MD5OfMessageBody: md5(input.MessageBody ?? '') });
    } catch (error) {
      const code = error instanceof SqsError ? error.code : 'InvalidParameterValue';
      return reply(400, { __type: `com.amazonaws.sqs#${code}`, message: (error as Error).message }, code);
    }
  });
}

/** The queue's messages and its consumer: what SendMessage accepts, delivered as the event source mapping delivers. */
class LocalQueue {
  sent = 0;
  deduplicated = 0;
  readonly deadLetters: SQSRecord[] = [];
  private readonly pending: Pending[] = [];
  private readonly seen = new Map<string, number>();
  private held = false;
  private running: Promise<void> | undefined;

  constructor(
    readonly queue: QueueDefinition,
    private readonly consume: (records: SQSRecord[]) => Promise<SQSBatchResponse | void>,
    private readonly now: () => number,
  ) {}

  /** SendMessage: refused as SQS refuses, dropped if its deduplication id was sent in the last 5 minutes, else queued. */
  send(message: OutgoingMessage): void {
    const refused = refusal(this.queue, message);
    if (refused !== undefined) throw refused;
    this.sent += 1;
    const group = message.groupId ?? '';
    if (this.queue.fifo) {
      const id = message.deduplicationId ?? createHash('sha256').update(message.body).digest('hex');
      const key = this.queue.deduplicationScope === 'messageGroup' ? `${group}\u0000${id}` : id;
      if ((this.seen.get(key) ?? -Infinity) > this.now()) {
        this.deduplicated += 1;
        return;
      }
      this.seen.set(key, this.now() + FIFO_DEDUPLICATION_MS);
    }
    const visibleAt = this.now() + 1000 * (message.delaySeconds ?? this.queue.delaySeconds);
    this.pending.push({ record: recordOf(this.queue, message.body, group), group, visibleAt, receives: 0 });
    this.kick();
  }

  hold(held: boolean): void {
    this.held = held;
    this.kick();
  }

  async idle(): Promise<void> {
    while (this.running !== undefined || (!this.held && this.pending.length > 0)) {
      this.kick();
      await this.running;
    }
  }

  private kick(): void {
    if (this.held || this.pending.length === 0) return;
    this.running ??= this.pump().finally(() => {
      this.running = undefined;
      this.kick();
    });
  }

  private async pump(): Promise<void> {
    while (!this.held && this.pending.length > 0) {
      const batch = this.nextBatch();
      if (batch.length > 0) await this.consumeBatch(batch);
      else await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(...this.pending.map((m) => m.visibleAt)) - this.now())));
    }
  }

  /** The next batch: messages now visible, in the order sent; a FIFO group is never passed. */
  private nextBatch(): Pending[] {
    const batch: Pending[] = [];
    const blocked = new Set<string>();
    for (const message of this.pending) {
      if (batch.length === (this.queue.mapping?.batchSize ?? 10)) break;
      if (message.visibleAt > this.now() || blocked.has(message.group)) {
        if (this.queue.fifo) blocked.add(message.group);
        continue;
      }
      batch.push(message);
    }
    return batch;
  }

  /** Hands a batch over, and settles each message as the mapping reads the answer. */
  private async consumeBatch(batch: Pending[]): Promise<void> {
    for (const message of batch) {
      message.receives += 1;
      (message.record.attributes as { ApproximateReceiveCount: string }).ApproximateReceiveCount = String(message.receives);
    }
    let failed: Set<string>;
    try {
      const answer = await this.consume(batch.map((m) => structuredClone(m.record)));
      const reported = this.queue.mapping?.reportBatchItemFailures === true ? (answer?.batchItemFailures ?? []) : [];
      failed = new Set(reported.map((f) => f.itemIdentifier));
    } catch {
      failed = new Set(batch.map((m) => m.record.messageId));
    }
    const maxReceives = this.queue.maxReceiveCount ?? RECEIVES_WITHOUT_REDRIVE;
    for (const message of batch) {
      const again = failed.has(message.record.messageId);
      if (again && message.receives < maxReceives) continue;
      this.pending.splice(this.pending.indexOf(message), 1);
      if (again) this.deadLetters.push(message.record);
    }
  }
}

export async function startQueueStandin(
  queue: QueueDefinition,
  consume: (records: SQSRecord[]) => Promise<SQSBatchResponse | void>,
  options: { name?: string; now?: () => number } = {},
): Promise<QueueStandin> {
  const local = new LocalQueue(queue, consume, options.now ?? Date.now);
  const server = createServer((req, res) => answerSend(standin, req, res));
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const standin: QueueStandin = {
    url: `${endpoint}/000000000000/${options.name ?? `${queue.logicalId}${queue.fifo ? '.fifo' : ''}`}`,
    endpoint,
    queue,
    get sent() {
      return local.sent;
    },
    get deduplicated() {
      return local.deduplicated;
    },
    deadLetters: local.deadLetters,
    send: (message) => local.send(message),
    fromRule: (body, sqsParameters) =>
      local.send({ body, ...(sqsParameters?.MessageGroupId === undefined ? {} : { groupId: sqsParameters.MessageGroupId }) }),
    hold: (held) => local.hold(held),
    idle: () => local.idle(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return standin;
}
