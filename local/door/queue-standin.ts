/**
 * A local FIFO queue (SQS does not run here): an HTTP server answering the AWS SDK's
 * `SendMessage` and `SendMessageBatch` (AWS JSON 1.0) and handing each message, one at a time in
 * the order sent, to its consumer as an SQS record, the way the event source mapping invokes the
 * feed builder with a batch of one. A record its consumer reports failed is retried once.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';

export interface QueueStandin {
  /** The queue's URL (the SDK sends to it: give it as the function's queue URL). */
  url: string;
  endpoint: string;
  /** Messages received. */
  sent: number;
  /** Hands a message to the consumer as if it had been sent (an EventBridge rule's target). */
  enqueue(body: string, group: string): void;
  /** true: messages wait until `hold(false)` (to tell a sender's requests from the consumer's). */
  hold(held: boolean): void;
  /** Resolves once every message sent so far has been consumed. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

interface Entry {
  Id?: string;
  MessageBody: string;
  MessageGroupId?: string;
}

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

function recordOf(body: string, group: string): SQSRecord {
  const messageId = randomUUID();
  return {
    messageId,
    receiptHandle: messageId,
    body,
    attributes: { ApproximateReceiveCount: '1', MessageGroupId: group } as unknown as SQSRecord['attributes'],
    messageAttributes: {},
    md5OfBody: md5(body),
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:local.fifo',
    awsRegion: 'us-east-1',
  };
}

/** Answers the SDK's SendMessage or SendMessageBatch, each message handed to `enqueue`. */
function answerSend(req: IncomingMessage, res: ServerResponse, enqueue: (body: string, group: string) => void): void {
  let text = '';
  req.on('data', (chunk: Buffer) => (text += chunk.toString()));
  req.on('end', () => {
    const batch = req.headers['x-amz-target'] === 'AmazonSQS.SendMessageBatch';
    const input = JSON.parse(text) as { Entries?: Entry[] } & Entry;
    const entries = batch ? (input.Entries ?? []) : [input];
    for (const entry of entries) enqueue(entry.MessageBody, entry.MessageGroupId ?? '');
    const ids = entries.map((entry) => ({ Id: entry.Id, MessageId: randomUUID(), MD5OfMessageBody: md5(entry.MessageBody) }));
    res
      .writeHead(200, { 'content-type': 'application/x-amz-json-1.0' })
      .end(JSON.stringify(batch ? { Successful: ids, Failed: [] } : ids[0]));
  });
}

export async function startQueueStandin(name: string, consume: (records: SQSRecord[]) => Promise<SQSBatchResponse>): Promise<QueueStandin> {
  let chain: Promise<void> = Promise.resolve();
  const consumeOnce = async (record: SQSRecord) => {
    for (let attempt = 1; attempt <= 2; attempt += 1) {
      const { batchItemFailures } = await consume([record]).catch(() => ({ batchItemFailures: [{ itemIdentifier: record.messageId }] }));
      if (batchItemFailures.length === 0) return;
    }
  };
  let held: SQSRecord[] | undefined;
  const standin = {
    sent: 0,
    enqueue(body: string, group: string) {
      standin.sent += 1;
      const record = recordOf(body, group);
      if (held !== undefined) held.push(record);
      else chain = chain.then(() => consumeOnce(record));
    },
    hold(hold: boolean) {
      const waiting = held ?? [];
      held = hold ? waiting : undefined;
      if (!hold) for (const record of waiting) chain = chain.then(() => consumeOnce(record));
    },
  };
  const server = createServer((req, res) => answerSend(req, res, (body, group) => standin.enqueue(body, group)));
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(standin, {
    url: `${endpoint}/000000000000/${name}`,
    endpoint,
    async idle() {
      let seen: Promise<void>;
      do {
        seen = chain;
        await seen;
      } while (seen !== chain);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
