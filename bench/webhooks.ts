/**
 * The webhooks' section of `npm run bench` (docs/performance.md, "Webhooks"): what the relay
 * (lambda/webhooks/) delivers per receiver latency. For each latency, a receiver — the example
 * receiver of examples/webhook-receiver, verifying every signature, its handler answering after
 * that long — is sent one batch of 10 events over real HTTP by the relay with the deployed
 * poster (undici, the 10 s timeout), paced at the stack's rate for one invocation, with a
 * deadline as Lambda gives it: the stack's timeout, and 60 s (the timeout before it held a whole
 * batch) to show what the relay hands back. Wall-clock on this machine; the receiver's latency
 * dominates every figure.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SQSRecord } from 'aws-lambda';
import { webhookReceiver } from '../examples/webhook-receiver/receiver.js';
import { WEBHOOK_TIMINGS } from '../lambda/webhooks/contract.js';
import { webhookPoster } from '../lambda/webhooks/handler.js';
import { createRelay } from '../lambda/webhooks/relay.js';
import { DEFAULT_CONFIG } from '../lib/config.js';
import { WEBHOOK_CONCURRENCY } from '../lib/constructs/webhooks.js';
import { round } from './stats.js';

/** Receiver latencies measured (ms): fast, slow, slower, and just inside the 10 s timeout. */
export const WEBHOOK_LATENCIES_MS = [100, 1_000, 7_000, 9_500];
const SECRET = 'YmVuY2gtd2ViaG9vay1zZWNyZXQtZm9yLXRoZS1yZWxheQ';

export interface WebhookRun {
  latencyMs: number;
  /** The invocation's deadline (s). */
  timeoutSeconds: number;
  batch: number;
  /** Accepted by the receiver (2xx). */
  delivered: number;
  /** Handed back unsent: not enough time left for the receiver's timeout. */
  unsent: number;
  failed: number;
  /** Events the receiver got more than once. */
  duplicates: number;
  wallMs: number;
  /** Delivered a second of this invocation, and of the stack (its concurrent invocations). */
  perSecond: number;
  stackPerSecond: number;
}

export interface WebhookResult {
  ratePerInvocation: number;
  concurrency: number;
  runs: WebhookRun[];
}

const record = (n: number): SQSRecord =>
  ({
    messageId: `bench-${n}`,
    receiptHandle: `bench-${n}`,
    body: JSON.stringify({
      source: 'contest-sync.reminders',
      'detail-type': 'ReminderDue',
      detail: { eventId: `reminder-due:bench-${n}` },
    }),
    attributes: { ApproximateReceiveCount: '1' },
  }) as unknown as SQSRecord;

async function oneBatch(latencyMs: number, timeoutSeconds: number, ratePerInvocation: number, offset: number): Promise<WebhookRun> {
  const handled = new Map<string, number>();
  const server: Server = webhookReceiver(SECRET, async (event) => {
    await sleep(latencyMs);
    const id = (event as { detail: { eventId: string } }).detail.eventId;
    handled.set(id, (handled.get(id) ?? 0) + 1);
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const counts = { failed: 0 };
  const relay = createRelay({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/contest-sync`,
    secrets: async () => [SECRET],
    post: webhookPoster(),
    retryAfter: async () => void (counts.failed += 1),
    ratePerSecond: ratePerInvocation,
    now: Date.now,
    sleep: (ms) => sleep(ms),
    log: { info: () => undefined, warn: () => undefined },
  });
  const batch = Array.from({ length: WEBHOOK_TIMINGS.batchSize }, (_, i) => record(offset + i));
  const started = performance.now();
  const deadline = Date.now() + timeoutSeconds * 1000;
  const answer = await relay({ Records: batch }, { getRemainingTimeInMillis: () => deadline - Date.now() });
  const wallMs = performance.now() - started;
  await new Promise((resolve) => server.close(resolve));
  if (Date.now() > deadline) throw new Error(`the relay ran past its ${timeoutSeconds} s deadline (${Math.round(wallMs)} ms)`);
  const delivered = [...handled.values()].length;
  const perSecond = delivered / (wallMs / 1000);
  return {
    latencyMs,
    timeoutSeconds,
    batch: batch.length,
    delivered,
    unsent: answer.batchItemFailures.length - counts.failed,
    failed: counts.failed,
    duplicates: [...handled.values()].filter((n) => n > 1).length,
    wallMs: Math.round(wallMs),
    perSecond: round(perSecond, 2),
    stackPerSecond: round(perSecond * WEBHOOK_CONCURRENCY, 2),
  };
}

export async function measureWebhooks(progress: (text: string) => void): Promise<WebhookResult> {
  const ratePerInvocation = DEFAULT_CONFIG.webhookRatePerSecond / WEBHOOK_CONCURRENCY;
  const runs: WebhookRun[] = [];
  const plan = [
    ...WEBHOOK_LATENCIES_MS.map((latencyMs) => ({ latencyMs, timeoutSeconds: WEBHOOK_TIMINGS.relayTimeoutSeconds })),
    ...WEBHOOK_LATENCIES_MS.filter((ms) => ms >= 7_000).map((latencyMs) => ({ latencyMs, timeoutSeconds: 60 })),
  ];
  for (const [i, { latencyMs, timeoutSeconds }] of plan.entries()) {
    progress(`webhooks: a batch of ${WEBHOOK_TIMINGS.batchSize} to a receiver answering in ${latencyMs} ms, ${timeoutSeconds} s deadline`);
    runs.push(await oneBatch(latencyMs, timeoutSeconds, ratePerInvocation, i * 100));
  }
  for (const run of runs) {
    if (run.duplicates > 0 || run.failed > 0 || run.delivered + run.unsent !== run.batch)
      throw new Error(`webhooks were not each sent once or handed back: ${JSON.stringify(run)}`);
  }
  return { ratePerInvocation, concurrency: WEBHOOK_CONCURRENCY, runs };
}

export function renderWebhooks(result: WebhookResult): string {
  const rows = result.runs.map(
    (r) =>
      `| ${r.latencyMs / 1000} s | ${r.timeoutSeconds} s | ${r.delivered} of ${r.batch} | ${r.unsent} | ${r.duplicates} | ${(r.wallMs / 1000).toFixed(1)} s | ${r.perSecond} | ${r.stackPerSecond} |`,
  );
  return [
    '### Webhooks',
    `One batch of 10 per row, paced at ${result.ratePerInvocation} a second (one of ${result.concurrency} concurrent invocations).`,
    '',
    '| receiver answers in | deadline | delivered | handed back unsent | sent twice | wall time | events/s (invocation) | events/s (stack) |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
