/**
 * The webhook relay's entry as Lambda runs it (lambda/webhooks/handler.ts): its settings from the
 * environment the stack sets, the secret and the queue through the AWS SDK (aws-sdk-client-mock),
 * the request to a real receiver over HTTP. A receiver that answers a redirect never accepted the
 * POST: the delivery is a failure, handed back to the queue, and the redirect is never followed.
 * A request the receiver answers past its documented timeout is a failure too (undici MockAgent).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Context, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { MockAgent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WEBHOOK_ENV } from '../../../lambda/webhooks/contract.js';
import { handler, webhookPoster } from '../../../lambda/webhooks/handler.js';

const SECRET = 'c2VjcmV0LW9uZS1mb3ItdGhlLXdlYmhvb2stdGVzdHM';
const secrets = mockClient(SecretsManagerClient);
const sqs = mockClient(SQSClient);
const hits: string[] = [];
let server: Server;
let base = '';

/** A receiver whose webhook path redirects (the status is the request's `?status=`), and a page that would accept anything. */
beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    const redirect = /[?&]status=(\d{3})/.exec(req.url ?? '')?.[1];
    if (req.url?.startsWith('/hooks') && redirect !== undefined) res.writeHead(Number(redirect), { location: `${base}/accepted` }).end();
    else if (req.url === '/accepted') res.writeHead(200).end('ok');
    else res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
// The classes' send, mocked for this file only: the unit files after it in its worker get them back.
afterAll(() => {
  secrets.restore();
  sqs.restore();
});
beforeEach(() => {
  hits.length = 0;
  secrets.reset();
  sqs.reset();
  secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ current: SECRET }) });
  sqs.on(ChangeMessageVisibilityCommand).resolves({});
});

const record = (eventId: string): SQSRecord =>
  ({
    messageId: `message-${eventId}`,
    receiptHandle: `receipt-${eventId}`,
    body: JSON.stringify({ 'detail-type': 'ReminderDue', source: 'contest-sync.reminders', detail: { eventId } }),
    attributes: { ApproximateReceiveCount: '1' },
  }) as unknown as SQSRecord;
const context = { getRemainingTimeInMillis: () => 120_000 } as Context;

describe('the relay as deployed', () => {
  it('counts a 302 as not delivered, never follows it, and hands the event back to the queue with its backoff', async () => {
    process.env[WEBHOOK_ENV.url] = `${base}/hooks?status=302`;
    process.env[WEBHOOK_ENV.secretArn] = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:hooks';
    process.env[WEBHOOK_ENV.queueUrl] = 'https://sqs.us-east-1.amazonaws.com/000000000000/hooks';
    process.env[WEBHOOK_ENV.ratePerSecond] = '100';
    const answer = await handler({ Records: [record('e-302')] }, context);
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: 'message-e-302' }]);
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand).map((c) => c.args[0].input)).toEqual([
      { QueueUrl: process.env[WEBHOOK_ENV.queueUrl], ReceiptHandle: 'receipt-e-302', VisibilityTimeout: 15 },
    ]);
    expect(hits).toEqual(['POST /hooks?status=302']);
  });

  it.each([301, 302, 303, 307, 308])('answers a %i as the receiver answered it, and follows none', async (status) => {
    const post = webhookPoster();
    expect(await post(`${base}/hooks?status=${status}`, { 'content-type': 'application/json' }, '{}')).toBe(status);
    expect(hits).toEqual([`POST /hooks?status=${status}`]);
  });
});

describe('one request (undici, MockAgent)', () => {
  it('answers the status of the first reply, 3xx included, making no second request', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    const pool = agent.get('https://app.example.com');
    for (const status of [204, 302, 500])
      pool.intercept({ path: '/hooks', method: 'POST' }).reply(status, '', { headers: { location: '/elsewhere' } });
    const post = webhookPoster({ dispatcher: agent });
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push(await post('https://app.example.com/hooks', {}, '{}'));
    expect(statuses).toEqual([204, 302, 500]);
    agent.assertNoPendingInterceptors();
    await agent.close();
  });

  it('gives up a receiver slower than its timeout', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    agent.get('https://app.example.com').intercept({ path: '/hooks', method: 'POST' }).reply(204, '').delay(500);
    const post = webhookPoster({ dispatcher: agent, timeoutMs: 50 });
    await expect(post('https://app.example.com/hooks', {}, '{}')).rejects.toThrow();
    await agent.close();
  });
});
