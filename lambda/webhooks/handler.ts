/**
 * The webhook relay's entry (docs/events.md, "Webhooks"): its settings from the environment the
 * stack sets, the secret from Secrets Manager (Powertools Parameters, kept 5 minutes), the request
 * through undici's `request` with the receiver's timeout (it follows no redirect: a 3xx is the
 * receiver's answer, and not an acceptance), the retry's backoff through SQS, the invocation's
 * deadline from Lambda's context.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@aws-lambda-powertools/logger';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import { Agent, request, type Dispatcher } from '../sources/undici-lean.cjs';
import { WEBHOOK_ENV, WEBHOOK_TIMINGS } from './contract.js';
import { createRelay, type Invocation, type RelayDeps } from './relay.js';

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

const TIMEOUT_MS = WEBHOOK_TIMINGS.requestTimeoutSeconds * 1000;

/**
 * One POST, answered by its status. undici's `request` never follows a redirect (no redirect
 * interceptor is composed), so a receiver that answers 3xx is answered as it answered; the
 * request is aborted once the receiver's documented timeout has passed.
 */
export function webhookPoster(options: { dispatcher?: Dispatcher; timeoutMs?: number } = {}): RelayDeps['post'] {
  const timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
  const dispatcher =
    options.dispatcher ?? new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  return async (url, headers, body) => {
    const answer = await request(url, { dispatcher, method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
    await answer.body.dump();
    return answer.statusCode;
  };
}

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
    post: webhookPoster(),
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

let relay: ((event: SQSEvent, invocation?: Invocation) => Promise<SQSBatchResponse>) | undefined;
export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  (relay ??= fromEnvironment(process.env))(event, context);
