/**
 * The webhook relay (docs/events.md, "Webhooks"): the bus's events, queued by an EventBridge rule,
 * posted to the operator's endpoint signed by the Standard Webhooks scheme (an HMAC-SHA256 over the
 * id, a timestamp and the body, with every current secret: during a rotation, both), paced to the
 * endpoint's rate. `webhook-id` is the event's `detail.eventId`, the receiver's dedupe key. A
 * delivery that fails — an answer other than 2xx (a redirect included: it is never followed), no
 * answer within the receiver's timeout — goes back to the queue with a growing delay; after the
 * queue's last attempt it is dead-lettered (alarmed). A request starts only if it can finish
 * before the invocation's deadline: what is left of the batch goes back to the queue unsent (a
 * batch item failure, with no backoff), never sent again after an answer Lambda would lose.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import * as z from 'zod';
import { WEBHOOK_TIMINGS } from './contract.js';

export interface RelayDeps {
  url: string;
  /** The signing secrets now in force (the current one first). */
  secrets(): Promise<string[]>;
  /** Posts and answers the HTTP status (throws on a network failure or a timeout). */
  post(url: string, headers: Record<string, string>, body: string): Promise<number>;
  /** Makes a failed message visible again after `seconds` (the retry's backoff). */
  retryAfter(record: SQSRecord, seconds: number): Promise<void>;
  /** Requests a second this invocation may send. */
  ratePerSecond: number;
  /** Epoch milliseconds. */
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  log: { info(m: string, x?: Record<string, unknown>): void; warn(m: string, x?: Record<string, unknown>): void };
}

/** What the relay needs of a bus event: an id to sign and dedupe on. */
const busEventSchema = z
  .object({ 'detail-type': z.string().max(128), detail: z.object({ eventId: z.string().min(1).max(256) }).loose() })
  .loose();

/** Every current secret's signature, space-separated (a receiver accepts any one it holds). */
export function signatureHeader(secrets: readonly string[], id: string, at: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' ');
}

/** The headers of one delivery: Standard Webhooks' three, and the content type. */
export function deliveryHeaders(secrets: readonly string[], id: string, nowMs: number, body: string): Record<string, string> {
  const at = new Date(Math.floor(nowMs / 1000) * 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'contest-sync-webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(nowMs / 1000)),
    'webhook-signature': signatureHeader(secrets, id, at, body),
  };
}

/** The wait before the n-th retry (n = how many deliveries failed so far). */
export function backoffSeconds(failures: number): number {
  return Math.min(WEBHOOK_TIMINGS.firstRetrySeconds * 2 ** Math.max(0, failures - 1), WEBHOOK_TIMINGS.maxRetrySeconds);
}

type Outcome = 'delivered' | 'failed' | 'invalid';

/** What the relay reads of its invocation: Lambda's context. */
export interface Invocation {
  getRemainingTimeInMillis(): number;
}

/** Whether a request that starts after `waitMs` can take the receiver's whole timeout and still leave the margin. */
export function fitsIn(remainingMs: number, waitMs: number): boolean {
  return remainingMs - waitMs >= (WEBHOOK_TIMINGS.requestTimeoutSeconds + WEBHOOK_TIMINGS.finishMarginSeconds) * 1000;
}

async function deliver(deps: RelayDeps, record: SQSRecord, secrets: string[]): Promise<Outcome> {
  let event: z.infer<typeof busEventSchema>;
  try {
    event = busEventSchema.parse(JSON.parse(record.body));
  } catch {
    return 'invalid';
  }
  const id = event.detail.eventId;
  let status: number | string;
  try {
    status = await deps.post(deps.url, deliveryHeaders(secrets, id, deps.now(), record.body), record.body);
  } catch (error) {
    status = (error as Error).name;
  }
  if (typeof status === 'number' && status >= 200 && status < 300) return 'delivered';
  const failures = Number(record.attributes.ApproximateReceiveCount) || 1;
  deps.log.warn('webhook not accepted; retried later', { eventId: id, status, failures, retryInSeconds: backoffSeconds(failures) });
  await deps.retryAfter(record, backoffSeconds(failures)).catch(() => undefined);
  return 'failed';
}

export function createRelay(deps: RelayDeps): (event: SQSEvent, invocation?: Invocation) => Promise<SQSBatchResponse> {
  const spacingMs = 1000 / Math.max(deps.ratePerSecond, 0.001);
  return async (event, invocation) => {
    const secrets = await deps.secrets();
    const counts: Record<Outcome | 'unsent', number> = { delivered: 0, failed: 0, invalid: 0, unsent: 0 };
    const failures: { itemIdentifier: string }[] = [];
    let last = -Infinity;
    for (const [index, record] of event.Records.entries()) {
      const wait = Math.max(0, last + spacingMs - deps.now());
      if (invocation !== undefined && !fitsIn(invocation.getRemainingTimeInMillis(), wait)) {
        const unsent = event.Records.slice(index);
        counts.unsent = unsent.length;
        failures.push(...unsent.map((r) => ({ itemIdentifier: r.messageId })));
        break;
      }
      if (wait > 0) await deps.sleep(wait);
      last = deps.now();
      const outcome = await deliver(deps, record, secrets);
      counts[outcome] += 1;
      if (outcome === 'failed') failures.push({ itemIdentifier: record.messageId });
      if (outcome === 'invalid') deps.log.warn('queued message is not a bus event; dropped', { messageId: record.messageId });
    }
    deps.log.info('webhooks relayed', { summary: true, counts });
    return { batchItemFailures: failures };
  };
}
