/**
 * The webhook relay (lambda/webhooks/relay.ts) posting to the Express receiver of
 * examples/webhook-receiver over real HTTP: signed deliveries verified and handled once per
 * detail.eventId (a duplicate from the bus changes nothing), a request altered, signed with
 * another secret or replayed outside the time window refused, a rotation that loses nothing, a
 * failing receiver answered with the queue's backoff, the pacing to the endpoint's rate.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SQSRecord } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { webhookReceiver } from '../../../examples/webhook-receiver/receiver.js';
import { WEBHOOK_TIMINGS } from '../../../lambda/webhooks/contract.js';
import { backoffSeconds, createRelay, deliveryHeaders, fitsIn, type RelayDeps } from '../../../lambda/webhooks/relay.js';
import { endpointOf, secretValueSchema } from '../../../lambda/webhooks/handler.js';

// Base64 keys, as Standard Webhooks takes them (the stack generates 48 letters and digits: valid base64 too).
const OLD = 'c2VjcmV0LW9uZS1mb3ItdGhlLXdlYmhvb2stdGVzdHM';
const NEW = 'QW5vdGhlclNlY3JldEZvclRoZVJvdGF0aW9uVGVzdHNB';
let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve()))));

async function startReceiver(secret: string, handle: (event: any) => Promise<void>): Promise<string> {
  server = webhookReceiver(secret, handle).listen(0, '127.0.0.1');
  await new Promise((resolve) => server!.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/contest-sync`;
}

const busEvent = (eventId: string) =>
  JSON.stringify({
    version: '0',
    id: crypto.randomUUID(),
    source: 'contest-sync.reminders',
    'detail-type': 'ReminderDue',
    time: '2026-12-01T12:00:00Z',
    detail: { eventId, contestId: 2120, contest: 'codeforces:2120', userId: 'alice' },
  });
const record = (body: string, receiveCount = 1): SQSRecord =>
  ({
    messageId: crypto.randomUUID(),
    receiptHandle: 'rh',
    body,
    attributes: { ApproximateReceiveCount: String(receiveCount) },
  }) as unknown as SQSRecord;

function relayTo(url: string, secrets: string[], extra: Partial<RelayDeps> = {}) {
  const retries: number[] = [];
  const relay = createRelay({
    url,
    secrets: async () => secrets,
    post: async (to, headers, body) => (await fetch(to, { method: 'POST', headers, body })).status,
    retryAfter: async (_record, seconds) => {
      retries.push(seconds);
    },
    ratePerSecond: 1000,
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    log: { info: () => undefined, warn: () => undefined },
    ...extra,
  });
  return { relay, retries };
}

describe('the relay and the example receiver', () => {
  it('delivers each event signed; the receiver handles it once however often it arrives', async () => {
    const handled: any[] = [];
    const url = await startReceiver(OLD, async (event) => {
      handled.push(event);
    });
    const { relay } = relayTo(url, [OLD]);
    const body = busEvent('reminder-due:1');
    const answer = await relay({ Records: [record(body), record(body), record(busEvent('reminder-due:2'))] });
    expect(answer.batchItemFailures).toEqual([]);
    expect(handled.map((e) => e.detail.eventId)).toEqual(['reminder-due:1', 'reminder-due:2']);
    expect(handled[0]).toEqual(JSON.parse(body));
  });

  it('is refused when the body was altered, the secret is another, or the request is replayed outside the window', async () => {
    const handled: unknown[] = [];
    const url = await startReceiver(OLD, async (event) => {
      handled.push(event);
    });
    const body = busEvent('reminder-due:9');
    const post = (headers: Record<string, string>, sent = body) =>
      fetch(url, { method: 'POST', headers, body: sent }).then((r) => r.status);
    expect(await post(deliveryHeaders([OLD], 'reminder-due:9', Date.now(), body), body.replace('alice', 'mallory'))).toBe(401);
    expect(await post(deliveryHeaders([NEW], 'reminder-due:9', Date.now(), body))).toBe(401);
    expect(await post(deliveryHeaders([OLD], 'reminder-due:9', Date.now() - 6 * 60_000, body))).toBe(401);
    expect(await post(deliveryHeaders([OLD], 'reminder-due:9', Date.now() + 6 * 60_000, body))).toBe(401);
    expect(await post({ 'content-type': 'application/json' })).toBe(401);
    expect(handled).toEqual([]);
    expect(await post(deliveryHeaders([OLD], 'reminder-due:9', Date.now(), body))).toBe(204);
    expect(handled).toHaveLength(1);
  });

  it('rotates without losing an event: signed with both secrets, a receiver holding either verifies', async () => {
    for (const receiverSecret of [OLD, NEW]) {
      const handled: unknown[] = [];
      const url = await startReceiver(receiverSecret, async (event) => {
        handled.push(event);
      });
      const { relay } = relayTo(url, [NEW, OLD]);
      expect((await relay({ Records: [record(busEvent(`rotation:${receiverSecret}`))] })).batchItemFailures).toEqual([]);
      expect(handled).toHaveLength(1);
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = undefined;
    }
  });

  it('hands a refused or failed delivery back to the queue with a growing delay, and the receiver handles it when it recovers', async () => {
    let healthy = false;
    const handled: unknown[] = [];
    const url = await startReceiver(OLD, async (event) => {
      if (!healthy) throw new Error('the app is down');
      handled.push(event);
    });
    const { relay, retries } = relayTo(url, [OLD]);
    const message = record(busEvent('reminder-due:3'), 3);
    expect((await relay({ Records: [message] })).batchItemFailures).toEqual([{ itemIdentifier: message.messageId }]);
    expect(retries).toEqual([60]);
    const { relay: unreachable } = relayTo('http://127.0.0.1:9/nothing', [OLD]);
    expect((await unreachable({ Records: [record(busEvent('reminder-due:4'))] })).batchItemFailures).toHaveLength(1);
    healthy = true;
    expect((await relay({ Records: [message] })).batchItemFailures).toEqual([]);
    expect(handled).toHaveLength(1);
  });

  it('drops a queued message that is not a bus event (retrying cannot fix it)', async () => {
    const url = await startReceiver(OLD, async () => undefined);
    const { relay } = relayTo(url, [OLD]);
    expect((await relay({ Records: [record('not json'), record('{"detail":{}}')] })).batchItemFailures).toEqual([]);
  });
});

describe('the relay’s rules', () => {
  it('backs off 15 s, doubling, at most an hour', () => {
    expect([1, 2, 3, 8, 9, 30].map(backoffSeconds)).toEqual([15, 30, 60, 1920, 3600, 3600]);
  });

  it('paces requests to its rate', async () => {
    let clock = 0;
    const sent: number[] = [];
    const relay = createRelay({
      url: 'https://example.com/hook',
      secrets: async () => [OLD],
      post: async () => {
        sent.push(clock);
        return 204;
      },
      retryAfter: async () => undefined,
      ratePerSecond: 4,
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
      log: { info: () => undefined, warn: () => undefined },
    });
    await relay({ Records: [1, 2, 3].map((n) => record(busEvent(`e${n}`))) });
    expect(sent).toEqual([0, 250, 500]);
  });

  it('takes an https endpoint, or http on this machine only', () => {
    expect(endpointOf('https://app.example.com/hooks')).toBe('https://app.example.com/hooks');
    expect(endpointOf('http://127.0.0.1:8080/h')).toBe('http://127.0.0.1:8080/h');
    expect(() => endpointOf('http://app.example.com/hooks')).toThrow(/https/);
    expect(() => endpointOf(undefined)).toThrow();
  });

  it('reads the stored secret as { current, previous? }', () => {
    expect(secretValueSchema.parse({ current: OLD })).toEqual({ current: OLD });
    expect(() => secretValueSchema.parse({ current: 'short' })).toThrow();
    expect(() => secretValueSchema.parse({ current: OLD, extra: 1 })).toThrow();
  });
});

describe('a slow receiver', () => {
  /**
   * Lambda and the queue on a virtual clock: each invocation gets a batch of up to 10 and a
   * deadline 60 s on; one that runs past its deadline is stopped and its whole batch comes back
   * (what Lambda does on a timeout), otherwise only the batch item failures do.
   */
  async function drain(latencyMs: number, events = 10) {
    let clock = 0;
    const received = new Map<string, number>();
    const backoffs: number[] = [];
    const relay = createRelay({
      url: 'https://app.example.com/hooks',
      secrets: async () => [OLD],
      post: async (_url, headers) => {
        clock += latencyMs;
        received.set(headers['webhook-id']!, (received.get(headers['webhook-id']!) ?? 0) + 1);
        return 204;
      },
      retryAfter: async (_record, seconds) => void backoffs.push(seconds),
      ratePerSecond: 5,
      now: () => clock,
      sleep: async (ms) => void (clock += ms),
      log: { info: () => undefined, warn: () => undefined },
    });
    let queue = Array.from({ length: events }, (_, n) => record(busEvent(`slow:${n}`)));
    let invocations = 0;
    while (queue.length > 0 && invocations < 50) {
      invocations += 1;
      const batch = queue.slice(0, 10);
      const deadline = clock + 60_000;
      const answer = await relay({ Records: batch }, { getRemainingTimeInMillis: () => deadline - clock });
      const back = clock > deadline ? batch : batch.filter((r) => answer.batchItemFailures.some((f) => f.itemIdentifier === r.messageId));
      queue = [...back, ...queue.slice(10)];
      clock += 1_000;
    }
    return { received, backoffs, invocations };
  }

  it.each([100, 1_000, 7_000, 10_000])(
    'sends each event once to a receiver answering in %i ms (within its documented 10 s)',
    async (latencyMs) => {
      const { received, backoffs } = await drain(latencyMs, 25);
      expect(received.size).toBe(25);
      expect([...received.values()].every((n) => n === 1)).toBe(true);
      expect(backoffs).toEqual([]); // what it did not send was not a failure of the receiver's: no backoff
    },
  );

  it('has the time for a whole batch at the receiver’s slowest answer (so nothing is handed back unsent)', () => {
    const T = WEBHOOK_TIMINGS;
    // The slowest pacing the stack sets: 1 request a second shared by its two concurrent invocations.
    const spacingSeconds = 2;
    expect(T.batchSize * Math.max(T.requestTimeoutSeconds, spacingSeconds) + T.finishMarginSeconds).toBeLessThanOrEqual(
      T.relayTimeoutSeconds - 10,
    );
    expect(T.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * T.relayTimeoutSeconds);
    expect(fitsIn((T.requestTimeoutSeconds + T.finishMarginSeconds) * 1000, 0)).toBe(true);
    expect(fitsIn((T.requestTimeoutSeconds + T.finishMarginSeconds) * 1000, 1)).toBe(false);
  });

  it('sends nothing it could not finish before its deadline', async () => {
    const sentAt: number[] = [];
    let clock = 0;
    const relay = createRelay({
      url: 'https://app.example.com/hooks',
      secrets: async () => [OLD],
      post: async () => {
        sentAt.push(clock);
        clock += 7_000;
        return 204;
      },
      retryAfter: async () => undefined,
      ratePerSecond: 5,
      now: () => clock,
      sleep: async (ms) => void (clock += ms),
      log: { info: () => undefined, warn: () => undefined },
    });
    const batch = Array.from({ length: 10 }, (_, n) => record(busEvent(`deadline:${n}`)));
    const answer = await relay({ Records: batch }, { getRemainingTimeInMillis: () => 60_000 - clock });
    expect(clock).toBeLessThanOrEqual(60_000);
    for (const at of sentAt) expect(60_000 - at).toBeGreaterThanOrEqual(10_000); // each had the receiver's whole timeout left
    expect(answer.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(batch.slice(sentAt.length).map((r) => r.messageId));
  });
});
