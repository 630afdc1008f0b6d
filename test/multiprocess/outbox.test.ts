/**
 * Effectively-once side effects, end to end on the bundles: the heartbeat example (a job that
 * publishes `Beat` through the outbox) synthesized with cdk-nag together with the consumer example
 * subscribed to its bus; its tables created in DynamoDB Local from that template; the job's
 * bundle run in child processes (one per invocation); the outbox table's stream read by the local
 * event source mapping (local/stream-poller.ts, configured from the template) which runs the
 * relay's bundle in a child process per batch; the relay's PutEvents answered by the bus
 * stand-in (local/bus-standin.ts, rules from the template) which duplicates and reorders its
 * deliveries and fails entries; the consumer (Powertools idempotency on detail.eventId) writes
 * the app's inbox. Through concurrent and duplicate invocations, a holder frozen past its lease,
 * an EventBridge outage at the first delivery and a relay process killed mid-batch: the outbox
 * holds exactly one item per change, and each event reaches the inbox exactly once.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEDUPE_SECONDS } from '../../examples/events-consumer/handler.js';
import { EventsConsumer } from '../../examples/events-consumer/stack.js';
import { createHeartbeatApp } from '../../examples/heartbeat/stack.js';
import type { BusStandin } from '../../local/bus-standin.js';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { mappingFromTemplate, startStreamPoller, type StreamPoller } from '../../local/stream-poller.js';
import { createTableFromResource, type CfnTableProperties } from '../../local/tables.js';
import { bundleDirOfFunction, resolvedEnvironment, type CfnTemplate } from '../../local/template.js';
import { startConsumerBus } from '../support/consumer-bus.js';
import { scanAll } from '../support/contests.js';
import { alarmMetrics, extractEmf, unfed } from '../support/emf.js';
import { invokeBundle, scheduledEvent, type InvocationOutcome } from '../support/processes.js';

const LEASE_SECONDS = 10;
const PERIOD_MS = 5 * 60_000;

let template: CfnTemplate;
let ids: { job: string; relay: string; consumer: string; bus: string; outbox: string };
let bundles: { job: string; relay: string };
let names: Record<string, string>;
let doc: DynamoDBDocumentClient;
let bus: BusStandin;
let poller: StreamPoller | undefined;
const relayRuns: InvocationOutcome[] = [];

/** A function's environment with every `{ Ref: id }` resolved to its local name. */
const envOf = (logicalId: string, extra: Record<string, string>): Record<string, string> => ({
  ...resolvedEnvironment(template, logicalId, names),
  ...extra,
});

beforeAll(async () => {
  const outdir = mkdtempSync(join(tmpdir(), 'outbox-synth-'));
  const { app, stack, job, delivery } = createHeartbeatApp({ outdir });
  const subscriber = new EventsConsumer(stack, 'Consumer', { bus: delivery.eventBus, source: 'heartbeat', detailTypes: ['Beat'] });
  // Synthesis runs cdk-nag over the job, the delivery and the consumer: a finding fails it.
  template = app.synth().getStackArtifact(stack.artifactId).template;
  const id = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as CfnFunction);
  ids = {
    job: id(job.function),
    relay: id(delivery.relay),
    consumer: id(subscriber.function),
    bus: id(delivery.eventBus),
    outbox: id(delivery.table),
  };
  bundles = {
    job: join(bundleDirOfFunction(outdir, template, ids.job), 'index.mjs'),
    relay: join(bundleDirOfFunction(outdir, template, ids.relay), 'index.mjs'),
  };

  const client = localDynamoClient(inject('dynamoEndpoint'));
  doc = DynamoDBDocumentClient.from(client);
  const prefix = `outbox-mp-${randomBytes(3).toString('hex')}`;
  names = { [ids.bus]: `${prefix}-bus` };
  for (const [logicalId, resource] of Object.entries(
    template.Resources as Record<string, { Type: string; Properties: CfnTableProperties }>,
  )) {
    if (resource.Type !== 'AWS::DynamoDB::Table') continue;
    names[logicalId] = `${prefix}-${logicalId}`;
    await createTableFromResource(client, names[logicalId], resource.Properties);
  }
  const consumerEnv = envOf(ids.consumer, {});
  bus = await startConsumerBus(
    template,
    ids,
    { idempotency: consumerEnv.IDEMPOTENCY_TABLE_NAME!, inbox: consumerEnv.INBOX_TABLE_NAME! },
    client,
  );
});

afterAll(async () => {
  await poller?.stop();
  await bus?.close();
});

/** The relay's bundle, one child process per batch, against the bus stand-in (or `endpoint`). */
function relay(endpoint: () => string) {
  return async (records: unknown[]) => {
    const running = invokeBundle({
      entry: bundles.relay,
      event: { Records: records },
      env: envOf(ids.relay, { AWS_ENDPOINT_URL_EVENTBRIDGE: endpoint(), AWS_MAX_ATTEMPTS: '1', EMULATE_LAMBDA_JSON_LOGS: 'true' }),
      timeoutMs: 60_000,
    });
    const outcome = await running.done;
    relayRuns.push(outcome);
    if (!outcome.ok) throw new Error(`relay failed: ${outcome.error?.message ?? outcome.stderr.slice(0, 500)}`);
    return outcome.result as unknown as { batchItemFailures: { itemIdentifier: string }[] };
  };
}

function intervalEvent(back: number): { interval: string; event: Record<string, unknown> } {
  const start = Math.floor(Date.now() / PERIOD_MS) * PERIOD_MS - back * PERIOD_MS;
  return { interval: new Date(start).toISOString().replace('.000Z', 'Z'), event: scheduledEvent(new Date(start + 7_000).toISOString()) };
}

/** Every item of a table (strongly consistent, all pages). */
const scan = (table: string): Promise<Record<string, unknown>[]> => scanAll(doc, table);

const job = (event: unknown, env: Record<string, string> = {}) =>
  invokeBundle({
    entry: bundles.job,
    event,
    env: envOf(ids.job, { AWS_ENDPOINT_URL_DYNAMODB: inject('dynamoEndpoint'), ...env }),
    timeoutMs: 60_000,
  });

describe('the outbox end to end on the bundles', () => {
  it('concurrent, duplicate and frozen runs; an outage and a killed relay; duplicated, reordered delivery: one outbox item per change, each event in the inbox once', async () => {
    const endpoint = inject('dynamoEndpoint');
    // 1. The job runs before anything delivers: a crash between the write and the delivery is this state.
    const intervals = [5, 4, 3, 2, 1].map(intervalEvent);
    // Three simultaneous deliveries of each interval (one lease: the intervals one after the other).
    for (const { event } of intervals) {
      const runs = await Promise.all([job(event).done, job(event).done, job(event).done]);
      expect(runs.map((r) => r.summary?.outcome).sort()).toEqual(['skipped', 'skipped', 'succeeded']);
    }

    // 2. A holder frozen past its lease: another run takes over and publishes; the frozen one wakes and publishes nothing.
    const frozenInterval = intervalEvent(6);
    const frozen = job(frozenInterval.event, { HEARTBEAT_WORK_DELAY_MS: '3000' });
    const acquired = await frozen.waitForLog((line) => line.message === 'lease acquired');
    frozen.child.kill('SIGSTOP');
    await sleep(LEASE_SECONDS * 1000 + 1_000);
    const taker = await job(frozenInterval.event).done;
    expect(taker.summary).toMatchObject({ outcome: 'succeeded', fence: Number(acquired.fence) + 1 });
    frozen.child.kill('SIGCONT');
    const woke = await frozen.done;
    expect(woke.summary).toMatchObject({ outcome: 'failed', reason: 'lease-lost' });
    // A late duplicate of a published interval: skipped, nothing published again.
    expect((await job(intervals[0]!.event).done).summary).toMatchObject({ outcome: 'skipped', reason: 'already-done' });

    const outbox = await scan(names[ids.outbox]!);
    const expected = [...intervals, frozenInterval].map(({ interval }) => `beat#${interval}`).sort();
    expect(outbox.map((item) => item.eventId).sort()).toEqual(expected);
    expect(outbox.find((item) => item.eventId === `beat#${frozenInterval.interval}`)).toMatchObject({ fence: Number(acquired.fence) + 1 });

    // 3. Delivery: the first relay batch meets an EventBridge outage (nothing listens there), a
    // later one is killed mid-batch, the bus fails entries once, duplicates and reorders.
    let relayCalls = 0;
    const upstream = () => (relayCalls === 1 ? 'http://127.0.0.1:9' : bus.endpoint);
    const invokeRelay = relay(upstream);
    const failedOnce = new Set<string>();
    bus.setFaults({
      duplicate: 0.7,
      reorderMs: 2_000,
      failEntry: (entry) => {
        const eventId = (JSON.parse(entry.Detail ?? '{}') as { eventId?: string }).eventId ?? '';
        if (failedOnce.has(eventId)) return undefined;
        failedOnce.add(eventId);
        return 'ThrottlingException';
      },
    });
    const { config } = mappingFromTemplate(template, ids.outbox);
    expect(config).toMatchObject({
      batchSize: 100,
      maxRetryAttempts: 5,
      bisect: true,
      reportBatchItemFailures: true,
      filters: [{ eventName: ['INSERT'] }],
    });
    poller = await startStreamPoller({
      endpoint,
      dynamo: localDynamoClient(endpoint),
      tableName: names[ids.outbox]!,
      config: { ...config, batchSize: 2 },
      invoke: async (records) => {
        relayCalls += 1;
        if (relayCalls === 3) {
          // Killed after its PutEvents went through, before Lambda got the answer: Lambda sees a
          // function error and retries the batch, so these events reach the bus twice.
          const running = invokeBundle({
            entry: bundles.relay,
            event: { Records: records },
            env: envOf(ids.relay, { AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint }),
            timeoutMs: 60_000,
          });
          await running.waitForLog((line) => line.summary === true);
          running.child.kill('SIGKILL');
          await running.done;
          throw new Error('relay process killed');
        }
        return invokeRelay(records);
      },
    });
    await poller.drained(2_000, 120_000);
    await bus.idle();

    expect(poller.givenUp).toEqual([]);
    expect(bus.failed).toEqual([]);
    const inbox = await scan(envOf(ids.consumer, {}).INBOX_TABLE_NAME!);
    const delivered = bus.delivered.map((d) => (d.event.detail as { eventId: string }).eventId);
    console.log(
      'outbox:',
      `${outbox.length} items; ${poller.stats.invocations} relay invocations (${poller.stats.retries} retries);`,
      `bus: ${bus.requests} PutEvents, ${bus.refused.length} entries refused, ${bus.accepted.length} accepted,`,
      `${delivered.length} deliveries of ${new Set(delivered).size} events; inbox ${inbox.length} rows`,
    );
    // Duplication and reordering really happened on the way, and the consumer absorbed them:
    // events re-sent by the relay's retry (new envelope ids), deliveries doubled by the bus, and
    // deliveries that overtook events the bus had accepted before them.
    expect(bus.accepted.length).toBeGreaterThan(expected.length);
    expect(new Set(bus.accepted.map((e) => e.id)).size).toBe(bus.accepted.length);
    expect(delivered.length).toBeGreaterThan(bus.accepted.length);
    const acceptedAt = new Map(bus.accepted.map((e, i) => [e.id, i]));
    const order = bus.delivered.map((d) => acceptedAt.get(d.event.id)!);
    expect(order.some((position, i) => order.slice(i + 1).some((later) => later < position))).toBe(true);
    expect(bus.refused.length).toBeGreaterThanOrEqual(expected.length);
    expect(inbox.map((row) => row.pk).sort()).toEqual(expected);
    for (const row of inbox) expect(row).toMatchObject({ type: 'Beat', source: 'heartbeat', detail: { eventId: row.pk } });
    // The idempotency records outlive any redelivery.
    const records = await scan(envOf(ids.consumer, {}).IDEMPOTENCY_TABLE_NAME!);
    expect(records.length).toBe(expected.length);
    for (const record of records)
      expect(Number(record.expiration)).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + DEDUPE_SECONDS - 120);
    // The relay's summary lines say what it did: the outage and the partial failures.
    const summaries = relayRuns.flatMap((run) => run.logs.filter((line) => line.summary === true));
    expect(summaries.some((line) => line.message === 'delivered in part')).toBe(true);
    expect(summaries.some((line) => Number(line.resent) > 0)).toBe(true);
    // Under the JSON log format the relay's EMF lines feed the delivery alarm that reads them.
    const relayAlarms = alarmMetrics(template).filter((m) => m.dimensions.service === 'heartbeat-events');
    expect(relayAlarms.map((m) => m.name)).toEqual(['EventsFailed']);
    expect(
      unfed(
        relayAlarms,
        relayRuns.flatMap((run) => extractEmf(run.stdout)),
      ),
    ).toEqual([]);
  });
});
