/**
 * The webhook relay's entry (docs/events.md, "Webhooks"): its settings from the environment the
 * stack sets, the secret from Secrets Manager (Powertools Parameters, kept 5 minutes), the request
 * through Node's fetch with a timeout, the retry's backoff through SQS.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@aws-lambda-powertools/logger';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import { WEBHOOK_ENV, WEBHOOK_TIMINGS } from './contract.js';
import { createRelay } from './relay.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** HTTPS, or plain HTTP to this machine (local runs: npm start's receiver). */
export function endpointOf(text: string | undefined): string {
  const url = new URL(text ?? '');
  if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname))) return url.toString();
  throw new Error(`${WEBHOOK_ENV.url} must be an https URL`);
}

/** The secret as stored: `{ "current": "...", "previous"?: "..." }` (docs/runbook.md, "Rotate the webhook secret"). */
export const secretValueSchema = z
  .object({ current: z.string().min(24).max(256), previous: z.string().min(24).max(256).optional() })
  .strict();

function fromEnvironment(env: NodeJS.ProcessEnv) {
  const logger = new Logger({ serviceName: 'contest-sync-webhooks' });
  const secrets = new SecretsProvider({ awsSdkV3Client: new SecretsManagerClient({}) });
  const sqs = new SQSClient({});
  const queueUrl = env[WEBHOOK_ENV.queueUrl] ?? '';
  return createRelay({
    url: endpointOf(env[WEBHOOK_ENV.url]),
    async secrets() {
      const value = await secrets.get(env[WEBHOOK_ENV.secretArn] ?? '', { maxAge: WEBHOOK_TIMINGS.secretCacheSeconds, transform: 'json' });
      const { current, previous } = secretValueSchema.parse(value);
      return previous === undefined ? [current] : [current, previous];
    },
    async post(url, headers, body) {
      const answer = await fetch(url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(WEBHOOK_TIMINGS.requestTimeoutSeconds * 1000),
      });
      await answer.body?.cancel();
      return answer.status;
    },
    async retryAfter(record, seconds) {
      await sqs.send(
        new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: record.receiptHandle, VisibilityTimeout: seconds }),
      );
    },
    ratePerSecond: Number(env[WEBHOOK_ENV.ratePerSecond] ?? '5'),
    now: () => Date.now(),
    sleep: (ms) => sleep(ms),
    log: { info: (m, x = {}) => logger.info(m, x), warn: (m, x = {}) => logger.warn(m, x) },
  });
}

let relay: ((event: SQSEvent) => Promise<SQSBatchResponse>) | undefined;
export const handler = (event: SQSEvent): Promise<SQSBatchResponse> => (relay ??= fromEnvironment(process.env))(event);
