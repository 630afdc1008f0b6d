/**
 * Reminder delivery end to end on the bundles (docs/delivery.md, docs/proof.md): the stack's
 * delivery and relay bundles from the run's synthesis (what `cdk deploy` uploads), each
 * invocation its own process; the tables created in DynamoDB Local from the synthesized stack,
 * with the app's subscriber (examples/events-consumer: Powertools idempotency on detail.eventId,
 * an inbox) on the stack's bus; every delivery process reaches DynamoDB through its own proxy
 * (local/dynamo-proxy.ts, one set of transaction locks: the conflicts AWS answers and DynamoDB
 * Local does not), which also kills, freezes or acts at the exact moment a request landed; the
 * outbox stream read by the local event source mapping (configured from the template) running the
 * relay bundle; the relay's PutEvents answered by the bus stand-in (rules from the template),
 * which fails entries, duplicates and reorders its deliveries.
 *
 * Seeded: contests (one vanished, one missing, one whose event would be too large, one moved
 * under rows still due at its old start), the sync's reply clock, some 300 reminders due now in
 * three waves, rows due later, paused rows and bad rows. Through a stale reply clock, a holder
 * SIGKILLed right after its first claims committed, its tick delivered again with other ticks and
 * a console run at once, a contest moved by the sync between a run's read of the contests and its
 * claims, and a holder frozen (SIGSTOP) past its lease mid-batch while another run takes over:
 * each due reminder reaches the inbox exactly once, the outbox holds exactly one item per reminder
 * and start, no row due later, paused, moved, deferred or bad is claimed or sent (none early: a
 * row due at a start its contest no longer has stays due), the claimed rows carry notifiedStart
 * and no dueAt, and every pass's summary counts the skipped rows by reason.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BatchWriteCommand,
  DynamoDBDocumentClient,
  type BatchWriteCommandOutput,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EventsConsumer } from '../../examples/events-consumer/stack.js';
import { REMINDER_DUE, reminderDueId } from '../../lambda/delivery/due.js';
import { deliveryLeaseKey } from '../../lambda/delivery/schema.js';
import { createContestSyncApp } from '../../lib/app.js';
import { EVENT_SOURCES } from '../../lib/contest-sync-stack.js';
import type { BusStandin } from '../../local/bus-standin.js';
import { startDynamoProxy, transactionLocks, type AfterApply, type DynamoProxy, type ProxyRequest } from '../../local/dynamo-proxy.js';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { mappingFromTemplate, startStreamPoller, type StreamPoller } from '../../local/stream-poller.js';
import { createTableFromResource, type CfnTableProperties } from '../../local/tables.js';
import { bundleDirOfFunction, resolvedEnvironment, findDeliveryFunction, type CfnTemplate } from '../../local/template.js';
import { startConsumerBus } from '../support/consumer-bus.js';
import { gatesOf, putContest, scanAll } from '../support/contests.js';
import { alarmMetrics, extractEmf, unfed } from '../support/emf.js';
import { invokeBundle, scheduledEvent, type InvocationOutcome, type RunningInvocation } from '../support/processes.js';
import { cf } from '../support/ids.js';
import { reminderKey } from '../../lambda/reminders/table.js';
import { platformIdOf } from '../../lambda/sources/ids.js';

/**
 * The template's lease is 30 s; shortened so that a killed or frozen holder's lease lapses within
 * the test. Long enough that six processes starting at once on two cores renew in time.
 */
const LEASE_SECONDS = 8;
const DAY = 86_400;
const TRANSACTION_HOLD_MS = 60;

type Item = Record<string, unknown>;
/** What must become of a seeded row. */
type Fate = 'delivered' | 'later' | 'paused' | 'invalid' | 'deferred' | 'moved';

let template: CfnTemplate;
let ids: { delivery: string; relay: string; outbox: string; bus: string; consumer: string };
let bundles: { delivery: string; relay: string };
let names: Record<string, string>;
let tables: { contests: string; reminders: string; coordination: string; outbox: string; inbox: string; idempotency: string };
let doc: DynamoDBDocumentClient;
let bus: BusStandin;
let poller: StreamPoller | undefined;
const locks = transactionLocks();
const proxies: DynamoProxy[] = [];
const deliveryRuns: { label: string; outcome: InvocationOutcome }[] = [];
const relayRuns: InvocationOutcome[] = [];

/** A function's environment with every `{ Ref: id }` resolved to its local name. */
const envOf = (logicalId: string, extra: Record<string, string> = {}): Record<string, string> => ({
  ...resolvedEnvironment(template, logicalId, names),
  ...extra,
});

beforeAll(async () => {
  // The run's synthesis (test/support/global-setup.ts): its template and its bundles.
  const deployed = JSON.parse(readFileSync(inject('templatePath'), 'utf8'));
  const deployedOutdir = dirname(inject('templatePath'));
  const delivery = findDeliveryFunction(deployed, 0).logicalId;
  const outbox = Object.entries(deployed.Resources as Record<string, { Type: string; Properties: any }>).find(
    ([, r]) => r.Type === 'AWS::DynamoDB::Table' && r.Properties.StreamSpecification !== undefined,
  )![0];
  const relay = mappingFromTemplate(deployed, outbox).functionLogicalId;
  bundles = {
    delivery: join(bundleDirOfFunction(deployedOutdir, deployed, delivery), 'index.mjs'),
    relay: join(bundleDirOfFunction(deployedOutdir, deployed, relay), 'index.mjs'),
  };

  // The same stack with the app's subscriber on its bus (no bundling: the bundles are the run's).
  const { app, stack } = createContestSyncApp({
    outdir: mkdtempSync(join(tmpdir(), 'delivery-mp-synth-')),
    context: { 'aws:cdk:bundling-stacks': [] },
    nag: false,
    cfnValidation: false,
  });
  const subscriber = new EventsConsumer(stack, 'AppReminders', {
    bus: stack.events.eventBus,
    source: EVENT_SOURCES.reminders,
    detailTypes: [REMINDER_DUE],
  });
  template = app.synth().getStackArtifact(stack.artifactId).template;
  const logicalId = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as never);
  ids = { delivery, relay, outbox, bus: logicalId(stack.events.eventBus), consumer: logicalId(subscriber.function) };
  // The bundles run with the environment the deployed template gives them.
  for (const id of [delivery, relay])
    expect(template.Resources[id].Properties.Environment).toEqual(deployed.Resources[id].Properties.Environment);

  const client = localDynamoClient(inject('dynamoEndpoint'));
  doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const prefix = `delivery-mp-${randomBytes(3).toString('hex')}`;
  names = { [ids.bus]: `${prefix}-bus` };
  const tableResources = Object.entries(template.Resources as Record<string, { Type: string; Properties: CfnTableProperties }>).filter(
    ([, r]) => r.Type === 'AWS::DynamoDB::Table',
  );
  for (const [id] of tableResources) names[id] = `${prefix}-${id}`;
  await Promise.all(tableResources.map(([id, resource]) => createTableFromResource(client, names[id]!, resource.Properties)));
  const jobEnv = envOf(ids.delivery);
  const consumerEnv = envOf(ids.consumer);
  tables = {
    contests: jobEnv.CONTESTS_TABLE_NAME!,
    reminders: jobEnv.REMINDERS_TABLE_NAME!,
    coordination: jobEnv.COORDINATION_TABLE_NAME!,
    outbox: jobEnv.OUTBOX_TABLE_NAME!,
    inbox: consumerEnv.INBOX_TABLE_NAME!,
    idempotency: consumerEnv.IDEMPOTENCY_TABLE_NAME!,
  };
  expect(tables.outbox).toBe(names[ids.outbox]);

  bus = await startConsumerBus(template, ids, tables, client);
});

afterAll(async () => {
  await poller?.stop();
  await bus?.close();
  await Promise.all(proxies.map((proxy) => proxy.close()));
});

/** One invocation of the delivery bundle, through its own proxy (shared locks); `afterApply` acts on its requests. */
async function deliveryRun(label: string, event: unknown, afterApply?: (run: RunningInvocation) => AfterApply): Promise<RunningInvocation> {
  const proxy = await startDynamoProxy(inject('dynamoEndpoint'), { locks });
  proxies.push(proxy);
  // Each transaction holds its items a while, as DynamoDB may: a renewal or an acquire that meets
  // one is answered TransactionConflictException (the package retries it).
  proxy.setTransactionHold(() => TRANSACTION_HOLD_MS);
  const running = invokeBundle({
    entry: bundles.delivery,
    event,
    env: envOf(ids.delivery, {
      AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint,
      LEASE_DURATION_SECONDS: String(LEASE_SECONDS),
      POWERTOOLS_LOG_LEVEL: 'DEBUG',
      EMULATE_LAMBDA_JSON_LOGS: 'true',
    }),
    timeoutMs: 60_000,
  });
  if (afterApply !== undefined) proxy.setAfterApply(afterApply(running));
  void running.done.then((outcome) => {
    deliveryRuns.push({ label, outcome });
    void proxy.close();
  });
  return running;
}

/** A Scheduled Event of the minute `minutesAgo` minutes before the test began (distinct ticks per scenario). */
const began = Date.now();
const tick = (minutesAgo: number) =>
  scheduledEvent(new Date(Math.floor(began / 60_000) * 60_000 - minutesAgo * 60_000 + 3_000).toISOString().replace('.000Z', 'Z'));

const isClaimCommit = (request: ProxyRequest) =>
  request.operation === 'TransactWriteItems' &&
  ((request.body?.TransactItems as { Update?: { TableName?: string } }[] | undefined) ?? []).some(
    (action) => action.Update?.TableName === tables.reminders,
  );
const isContestRead = (request: ProxyRequest) => request.operation === 'BatchGetItem';

/** Every item of a table (strongly consistent, all pages). */
const scan = (table: string): Promise<Item[]> => scanAll(doc, table);

async function writeAll(table: string, items: readonly Item[]): Promise<void> {
  for (let i = 0; i < items.length; i += 25) {
    let requests: unknown[] | undefined = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    while (requests !== undefined && requests.length > 0) {
      const out: BatchWriteCommandOutput = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: requests as never } }));
      requests = out.UnprocessedItems?.[table];
    }
  }
}

const leaseItem = async () =>
  (await doc.send(new GetCommand({ TableName: tables.coordination, Key: { pk: deliveryLeaseKey(0) }, ConsistentRead: true }))).Item;
const runIdOf = (run: RunningInvocation) => run.waitForLog((line) => line.message === 'lease acquired');
const deliveredBy = (run: InvocationOutcome) =>
  Number((run.summary as { counts?: { delivered?: number } } | undefined)?.counts?.delivered ?? 0);
const keyOf = (row: Item) => `${String(row.contestId)}|${String(row.userId)}`;

describe('reminder delivery end to end on the bundles', () => {
  it(
    'a stale clock, a holder killed after its claims, duplicate and concurrent ticks, a contest moved mid-run, a holder frozen past its lease, a duplicating bus: each due reminder in the inbox once',
    { timeout: 120_000 },
    async () => {
      const nowS = Math.floor(Date.now() / 1000);
      const c = { c1: 2101, c2: 2102, c3: 2103, vanished: 2104, missing: 2105, huge: 2106, movedUnder: 2107 };
      const start = {
        [c.c1]: nowS + 1800,
        [c.c2]: nowS + 3600,
        [c.c3]: nowS + 2400,
        [c.vanished]: nowS + 3000,
        [c.missing]: nowS + 3000,
        [c.huge]: nowS + 3000,
        [c.movedUnder]: nowS + 1200,
      };
      const contest = (contestId: number, extra: Item = {}): Item => ({
        contestId: cf(contestId),
        platform: 'codeforces',
        platformId: String(contestId),
        name: `Codeforces Round ${contestId}`,
        type: 'CF',
        phase: 'BEFORE',
        startTimeSeconds: start[contestId],
        durationSeconds: 7200,
        url: `https://codeforces.com/contest/${contestId}`,
        updatedAt: new Date().toISOString(),
        expiresAt: start[contestId]! + 30 * DAY,
        // As the sync writes it: its reminders may fire at its start (docs/delivery.md, "The rule").
        dueStart: start[contestId],
        ...extra,
      });
      const contests = [
        contest(c.c1),
        contest(c.c2),
        contest(c.c3),
        // Vanished: the sync removed its dueStart (none of its reminders may fire).
        contest(c.vanished, { vanishedAt: nowS - 600, dueStart: undefined, remindersPaused: 'vanished' }),
        // Moved two hours later under rows still due at its old start (written while the sync moved it): none may be sent early.
        contest(c.movedUnder, { startTimeSeconds: start[c.movedUnder]! + 7200, dueStart: start[c.movedUnder]! + 7200 }),
        // Its ReminderDue would be over EventBridge's 256 KB: skipped as `too-large`, never claimed.
        contest(c.huge, { name: `Codeforces Round ${'x'.repeat(300_000)}` }),
      ];
      // As the sync leaves them: with their bucket gates (the claims check them).
      await writeAll(tables.contests, [...contests, ...contests.flatMap(gatesOf)]);
      // The sync's reply clock, 71 minutes old: the freshness gate holds everything.
      await doc.send(
        new PutCommand({
          TableName: tables.contests,
          Item: { contestId: 'clock#codeforces', replyMadeAt: nowS - 71 * 60, updatedAt: new Date().toISOString() },
        }),
      );

      const seeded = new Map<string, { item: Item; fate: Fate }>();
      const reminder = (contestId: number, userId: string, minutesBefore: number, extra: Item = {}): Item => {
        const dueStart = start[contestId] ?? nowS + 1800;
        return {
          ...reminderKey(cf(contestId), userId),
          contestId: cf(contestId),
          minutesBefore,
          remindAt: dueStart - 60 * minutesBefore,
          dueAt: dueStart - 60 * minutesBefore,
          dueShard: 0,
          dueStart,
          expiresAt: dueStart + 30 * DAY,
          ...extra,
        };
      };
      const fated = (item: Item, fate: Fate) => ({ item, fate });
      const seed = async (rows: { item: Item; fate: Fate }[]) => {
        for (const row of rows) seeded.set(keyOf(row.item), row);
        await writeAll(
          tables.reminders,
          rows.map((row) => row.item),
        );
      };
      // Lead times that make a row due now: from its contest's start to two hours before it.
      const leads = [0, 15, 30, 60, 90];
      const due = (contestId: number, prefix: string, count: number, extra: Item = {}) =>
        Array.from({ length: count }, (_, i) =>
          fated(
            reminder(contestId, `${prefix}-${i}`, Math.ceil((start[contestId]! - nowS) / 60) + leads[i % leads.length]!, extra),
            'delivered',
          ),
        );

      // Rows that stay: due later, paused (not in the index), deferred (contest vanished or missing), bad.
      const s1 = start[c.c1]!;
      const bad: [Item, string][] = [
        [reminder(c.c1, 'bad-no-lead', 60, { minutesBefore: undefined }), 'minutesBefore'],
        [reminder(c.c1, 'bad-negative-lead', 60, { minutesBefore: -5 }), 'minutesBefore'],
        [reminder(c.c1, 'bad-lead-text', 60, { minutesBefore: '60' }), 'minutesBefore'],
        [reminder(c.c1, 'bad-lead-over-a-week', 60, { minutesBefore: 10_081 }), 'minutesBefore'],
        [reminder(c.c1, 'bad-no-start', 60, { dueStart: undefined }), 'dueStart'],
        [reminder(c.c1, 'bad-start-1970', 60, { dueStart: 12_345 }), 'dueStart'],
        [reminder(c.c1, 'bad-due-a-month-early', 60, { dueAt: s1 - 30 * DAY }), 'dueAt'],
        [reminder(c.c1, 'bad-notified-text', 60, { notifiedStart: 'yesterday' }), 'notifiedStart'],
        [reminder(c.c1, 'bad-already-sent', 60, { notifiedStart: s1 }), 'already-notified'],
        [reminder(c.c1, 'bad-sent-before', 60, { notifiedStart: s1 - DAY, sentStarts: new Set([s1, s1 - 2 * DAY]) }), 'already-notified'],
        // Not a qualified id of a known platform (a bare number as text, an unknown platform, none). A
        // number, as the release before qualified ids wrote it, cannot be stored: `byUser` keys on it as a String.
        [reminder(c.c1, 'bad-contest-number', 60, { contestId: '2101' }), 'contestId'],
        [reminder(c.c1, 'bad-contest-platform', 60, { contestId: 'topcoder:2101' }), 'contestId'],
        [reminder(c.c1, 'bad-contest-empty', 60, { contestId: 'codeforces:' }), 'contestId'],
        // Under a key its contest and user do not name (another contest's bucket key): the claim would update another row.
        [reminder(c.c1, 'bad-contest-key', 60, { contestId: cf(c.c2) }), 'contestKey'],
      ];
      const invalidReasons: Record<string, number> = {};
      for (const [, reason] of bad) invalidReasons[reason] = (invalidReasons[reason] ?? 0) + 1;
      const s2 = start[c.c2]!;
      await seed([
        ...bad.map(([item]) => fated(item, 'invalid')),
        fated(reminder(c.huge, 'too-large', 60), 'invalid'),
        ...Array.from({ length: 5 }, (_, i) => fated(reminder(c.c1, `later-${i}`, 10), 'later')),
        ...Array.from({ length: 5 }, (_, i) => fated(reminder(c.c2, `later-${i}`, 20 + i), 'later')),
        ...Array.from({ length: 3 }, (_, i) => {
          const { dueAt: _d, dueShard: _s, dueStart: _t, ...rest } = reminder(c.c1, `paused-${i}`, 60);
          return fated({ ...rest, paused: 'held' }, 'paused');
        }),
        ...Array.from({ length: 3 }, (_, i) => fated(reminder(c.vanished, `deferred-${i}`, 60), 'deferred')),
        ...Array.from({ length: 3 }, (_, i) => fated(reminder(c.missing, `deferred-${i}`, 60), 'deferred')),
        // Due now at the contest's old start (20 minutes away, 30-minute lead): 2 hours early for its new start.
        ...Array.from({ length: 5 }, (_, i) => fated(reminder(c.movedUnder, `moved-under-${i}`, 30), 'deferred')),
      ]);
      const BAD = bad.length + 1;
      const DEFERRED = 11;
      // Wave A: 165 due now (5 of them sent before for an earlier start of their contest).
      await seed([
        ...due(c.c1, 'a', 100),
        ...due(c.c2, 'a', 60),
        ...due(c.c2, 'a-moved', 5, { notifiedStart: s2 - DAY, sentStarts: new Set([s2 - 2 * DAY]), notifiedAt: s2 - DAY - 3600 }),
      ]);
      const waveA = [...seeded.values()].filter((row) => row.fate === 'delivered').length;

      // 0. The reply clock is 71 minutes old: nothing is claimed, every valid row is deferred.
      const stale = await (await deliveryRun('stale clock', tick(9))).done;
      expect(stale.summary).toMatchObject({
        outcome: 'succeeded',
        counts: {
          delivered: 0,
          invalid: bad.length,
          deferred: waveA + DEFERRED + 1,
          deferredReasons: { 'evidence-stale': waveA + DEFERRED + 1 },
        },
      });
      expect(await scan(tables.outbox)).toEqual([]);
      await doc.send(
        new PutCommand({
          TableName: tables.contests,
          Item: { contestId: 'clock#codeforces', replyMadeAt: Math.floor(Date.now() / 1000) - 60, updatedAt: new Date().toISOString() },
        }),
      );

      // 1. A holder killed right after its first claims committed (DynamoDB applied them; the
      // process dies before it hears so, before the release); its tick delivered again meanwhile.
      let killedAfter: number | undefined;
      const killed = await deliveryRun('killed after its first claims', tick(8), (run) => async (request, reply) => {
        if (killedAfter !== undefined || !isClaimCommit(request) || reply.status !== 200) return;
        killedAfter = Date.now();
        run.child.kill('SIGKILL');
        await new Promise((resolve) => run.child.once('exit', resolve));
      });
      const killedId = String((await runIdOf(killed)).runId);
      expect((await killed.done).signal).toBe('SIGKILL');
      const afterKill = await scan(tables.outbox);
      // The first transaction's claims: up to 49, fewer as the rows' bucket keys each add their gate's check (2 × claims + keys ≤ 99).
      expect(afterKill.length).toBeGreaterThanOrEqual(33);
      expect(afterKill.length).toBeLessThanOrEqual(49);
      const killedClaims = afterKill.length;
      expect(new Set(afterKill.map((item) => item.runId))).toEqual(new Set([killedId]));
      expect(await leaseItem()).toMatchObject({ holder: killedId });
      const deadLeaseEnds = Number((await leaseItem())?.expiresAtMs);
      const retry = await deliveryRun('retry while the dead holder leases', tick(8));
      const retried = await retry.done;
      if (retried.summary?.outcome === 'skipped') {
        expect(retried.summary).toMatchObject({ reason: 'lease-held', holder: killedId });
      } else {
        // On a machine slower than the lease, the retry may take over: never before the dead holder's lease ended.
        expect(retried.summary).toMatchObject({ outcome: 'succeeded' });
        expect(Date.parse(String((await runIdOf(retry)).timestamp))).toBeGreaterThanOrEqual(deadLeaseEnds);
      }

      // From here the relay and the bus run beside the delivery runs: events flow while claims go on.
      // (Started once the outbox has items: DynamoDB Local's stream refuses, with
      // TrimmedDataAccessException, an iterator taken on the shard while the table was still empty.)
      bus.setFaults({
        duplicate: 0.5,
        reorderMs: 1_500,
        // A third of the events refused once (the relay resends them): they reach the bus twice.
        failEntry: (() => {
          const failed = new Set<string>();
          return (entry) => {
            const eventId = (JSON.parse(entry.Detail ?? '{}') as { eventId?: string }).eventId ?? '';
            if (eventId.charCodeAt(eventId.length - 1) % 3 !== 0 || failed.has(eventId)) return undefined;
            failed.add(eventId);
            return 'ThrottlingException';
          };
        })(),
      });
      const { config } = mappingFromTemplate(template, ids.outbox);
      expect(config).toMatchObject({ reportBatchItemFailures: true, filters: [{ eventName: ['INSERT'] }] });
      poller = await startStreamPoller({
        endpoint: inject('dynamoEndpoint'),
        dynamo: localDynamoClient(inject('dynamoEndpoint')),
        tableName: tables.outbox,
        config,
        pollMs: 250,
        invoke: async (records) => {
          const running = invokeBundle({
            entry: bundles.relay,
            event: { Records: records },
            env: envOf(ids.relay, { AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint, AWS_MAX_ATTEMPTS: '1', EMULATE_LAMBDA_JSON_LOGS: 'true' }),
            timeoutMs: 60_000,
          });
          const outcome = await running.done;
          relayRuns.push(outcome);
          if (!outcome.ok) throw new Error(`relay failed: ${outcome.error?.message ?? outcome.stderr.slice(0, 500)}`);
          return outcome.result as unknown as { batchItemFailures: { itemIdentifier: string }[] };
        },
      });

      // 2. Once its lease lapsed: its tick three times at once (Lambda's retries and duplicate
      // deliveries), the next tick twice and a console run, all together.
      await sleep(Math.max(0, Number((await leaseItem())?.expiresAtMs) - Date.now()) + 100);
      const together = await Promise.all(
        [
          ['killed tick again', tick(8)],
          ['killed tick again', tick(8)],
          ['killed tick again', tick(8)],
          ['next tick', tick(7)],
          ['next tick', tick(7)],
          ['console', {}],
        ].map(async ([label, event]) => (await deliveryRun(label as string, event)).done),
      );
      expect(together.map((r) => r.summary?.outcome).filter((o) => o === 'succeeded').length).toBeGreaterThanOrEqual(1);
      for (const r of together)
        expect(['succeeded', 'skipped'], JSON.stringify(r.summary ?? r.stderr.slice(0, 400))).toContain(r.summary?.outcome);
      expect([retried, ...together].reduce((sum, r) => sum + deliveredBy(r), 0)).toBe(waveA - killedClaims);

      // 3. The sync moves contest C3 between a run's read of the contests and its claims: the
      // claims of C3's rows are refused (lost: the contest's check and the rows' own conditions),
      // the rest of their batches delivered.
      const s3 = start[c.c3]!;
      const moved = s3 + DAY;
      await seed([...due(c.c3, 'b', 40), ...due(c.c2, 'b', 20)]);
      let movedAfterRead = false;
      const raced = await deliveryRun('contest moved after the read', tick(6), () => async (request) => {
        if (movedAfterRead || !isContestRead(request)) return;
        movedAfterRead = true;
        // As the sync moves it: the contest and its bucket gates in one transaction.
        await putContest(
          { doc, names: { contests: tables.contests, reminders: tables.reminders } },
          contest(c.c3, { startTimeSeconds: moved, expiresAt: moved + 30 * DAY, dueStart: moved }),
        );
        await Promise.all(
          [...seeded.values()]
            .filter((row) => row.item.contestId === cf(c.c3))
            .map(async (row) => {
              const minutesBefore = Number(row.item.minutesBefore);
              const changes = { remindAt: moved - 60 * minutesBefore, dueAt: moved - 60 * minutesBefore, dueStart: moved };
              await doc.send(
                new UpdateCommand({
                  TableName: tables.reminders,
                  Key: reminderKey(cf(c.c3), String(row.item.userId)),
                  UpdateExpression: 'SET remindAt = :remindAt, dueAt = :dueAt, dueStart = :dueStart',
                  ConditionExpression: 'attribute_not_exists(notifiedStart)',
                  ExpressionAttributeValues: { ':remindAt': changes.remindAt, ':dueAt': changes.dueAt, ':dueStart': changes.dueStart },
                }),
              );
              seeded.set(keyOf(row.item), { item: { ...row.item, ...changes }, fate: 'moved' });
            }),
        );
      });
      const racedOutcome = await raced.done;
      expect(movedAfterRead).toBe(true);
      expect(racedOutcome.summary).toMatchObject({ outcome: 'succeeded', counts: { delivered: 20, lost: 40 } });

      // 4. A holder frozen (SIGSTOP) right after its first claims committed, past its lease; another
      // run takes over and delivers the rest; the frozen one wakes and writes nothing more.
      await seed([...due(c.c1, 'c', 60), ...due(c.c2, 'c', 60)]);
      let frozenAt: number | undefined;
      const frozen = await deliveryRun('frozen past its lease', tick(5), (run) => (request, reply) => {
        if (frozenAt !== undefined || !isClaimCommit(request) || reply.status !== 200) return;
        frozenAt = Date.now();
        run.child.kill('SIGSTOP');
      });
      const frozenLine = await runIdOf(frozen);
      while (frozenAt === undefined) await sleep(20);
      await sleep(Math.max(0, Number((await leaseItem())?.expiresAtMs) - Date.now()) + 100);
      const taker = await (await deliveryRun('takes over from the frozen holder', tick(4))).done;
      // What the frozen holder's first transaction claimed (33 to 49: one gate check per bucket key in it); the taker sends the rest.
      const frozenClaims = (await scan(tables.outbox)).filter((item) => item.runId === frozenLine.runId).length;
      expect(frozenClaims).toBeGreaterThanOrEqual(33);
      expect(frozenClaims).toBeLessThanOrEqual(49);
      expect(taker.summary).toMatchObject({
        outcome: 'succeeded',
        fence: Number(frozenLine.fence) + 1,
        counts: { delivered: 120 - frozenClaims },
      });
      frozen.child.kill('SIGCONT');
      const woke = await frozen.done;
      expect(woke.summary).toMatchObject({ outcome: 'failed', reason: 'lease-lost' });

      // 5. Later ticks, two at once: nothing is left to send.
      const last = await Promise.all([tick(3), tick(3), tick(2)].map(async (event) => (await deliveryRun('nothing left', event)).done));
      for (const r of last)
        expect(r.summary?.outcome === 'skipped' || (r.summary?.outcome === 'succeeded' && deliveredBy(r) === 0)).toBe(true);

      await poller.drained(2_000, 60_000);
      await bus.idle();

      // What must have happened to every seeded row.
      const expected = [...seeded.values()].filter((row) => row.fate === 'delivered');
      const expectedIds = expected
        .map((row) => reminderDueId(String(row.item.contestId), String(row.item.userId), undefined, Number(row.item.dueStart)))
        .sort();
      expect(expected).toHaveLength(165 + 20 + 120);
      const rows = new Map((await scan(tables.reminders)).map((row) => [keyOf(row), row]));
      expect(rows.size).toBe(seeded.size);
      for (const [key, { item, fate }] of seeded) {
        const row = rows.get(key)!;
        if (fate === 'delivered') {
          const { dueAt: _d, dueShard: _s, dueStart, ...rest } = item;
          expect(row, key).toEqual({ ...rest, notifiedAt: expect.any(Number), notifiedStart: dueStart, paused: 'notified' });
        } else {
          // Never claimed: exactly as the app (or the sync) left it.
          expect(row, key).toEqual(item);
        }
      }

      // The outbox: one item per reminder and start, written by the runs that held the lease.
      const outbox = await scan(tables.outbox);
      expect(outbox.map((item) => item.eventId).sort()).toEqual(expectedIds);
      const waveC = outbox.filter((item) => String(JSON.parse(String(item.detail)).userId).startsWith('c-'));
      expect(waveC.filter((item) => item.runId === frozenLine.runId)).toHaveLength(frozenClaims);
      expect(waveC.filter((item) => item.runId === taker.summary?.runId)).toHaveLength(120 - frozenClaims);

      // The inbox: each reminder exactly once, saying what the row and its contest said.
      const inbox = await scan(tables.inbox);
      expect(inbox.map((row) => row.pk).sort()).toEqual(expectedIds);
      const byId = new Map(
        expected.map((row) => [
          reminderDueId(String(row.item.contestId), String(row.item.userId), undefined, Number(row.item.dueStart)),
          row.item,
        ]),
      );
      for (const row of inbox) {
        const item = byId.get(String(row.pk))!;
        expect(row).toMatchObject({
          type: REMINDER_DUE,
          source: EVENT_SOURCES.reminders,
          detail: {
            eventId: row.pk,
            contestId: item.contestId,
            contest: item.contestId,
            platform: 'codeforces',
            platformId: platformIdOf(String(item.contestId)),
            userId: item.userId,
            minutesBefore: item.minutesBefore,
            startTimeSeconds: item.dueStart,
            startTime: new Date(Number(item.dueStart) * 1000).toISOString(),
            dueAt: item.dueAt,
            name: `Codeforces Round ${platformIdOf(String(item.contestId))}`,
            url: `https://codeforces.com/contest/${platformIdOf(String(item.contestId))}`,
          },
        });
      }

      // The faults of the way really happened: entries refused and resent, deliveries doubled and overtaking each other.
      const delivered = bus.delivered.map((d) => (d.event.detail as { eventId: string }).eventId);
      expect(bus.failed).toEqual([]);
      expect(poller.givenUp).toEqual([]);
      // Entries refused were sent again by the relay and accepted then (once: EventBridge gives each accepted entry its id).
      expect(bus.refused.length).toBeGreaterThan(0);
      const acceptedIds = bus.accepted.map((e) => (e.detail as { eventId: string }).eventId);
      for (const { entry } of bus.refused) expect(acceptedIds).toContain((JSON.parse(entry.Detail ?? '{}') as { eventId: string }).eventId);
      expect(acceptedIds.sort()).toEqual(expectedIds);
      expect(delivered.length).toBeGreaterThan(bus.accepted.length);
      const acceptedAt = new Map(bus.accepted.map((e, i) => [e.id, i]));
      const order = bus.delivered.map((d) => acceptedAt.get(d.event.id)!);
      expect(order.some((position, i) => order.slice(i + 1).some((later) => later < position))).toBe(true);

      // The relay said so in its summary lines, and its EMF lines feed the delivery alarm.
      expect(relayRuns.flatMap((run) => run.logs.filter((line) => line.summary === true)).some((line) => Number(line.resent) > 0)).toBe(
        true,
      );
      const relayAlarms = alarmMetrics(template).filter((m) => m.dimensions.service === envOf(ids.relay).POWERTOOLS_SERVICE_NAME);
      expect(relayAlarms.length).toBeGreaterThan(0);
      expect(
        unfed(
          relayAlarms,
          relayRuns.flatMap((run) => extractEmf(run.stdout)),
        ),
      ).toEqual([]);

      // Every pass counted the skipped rows by reason (the summary line), and the EMF lines feed the job's alarms.
      const outcomes = deliveryRuns.map((run) => run.outcome);
      const passes = outcomes.filter((r) => r.summary?.outcome === 'succeeded' && r !== stale);
      expect(passes.length).toBeGreaterThanOrEqual(4);
      for (const pass of passes) {
        expect(pass.summary).toMatchObject({
          counts: {
            invalid: BAD,
            invalidReasons: { ...invalidReasons, 'too-large': 1 },
            deferred: DEFERRED,
            deferredReasons: { 'contest-missing': 3, 'contest-paused': 3, 'contest-moved': 5 },
          },
        });
      }
      const emf = outcomes.flatMap((r) => extractEmf(r.stdout));
      const sum = (name: string) => emf.filter((d) => d.name === name).reduce((total, d) => total + d.value, 0);
      expect(sum('RunSucceeded')).toBe(outcomes.filter((r) => r.summary?.outcome === 'succeeded').length);
      expect(sum('RunSkipped')).toBe(outcomes.filter((r) => r.summary?.outcome === 'skipped').length);
      expect(sum('RunFailed')).toBe(1);
      expect(sum('LeaseLost')).toBe(1);
      const jobAlarms = alarmMetrics(template).filter((m) => m.dimensions.service === 'reminder-delivery-0');
      expect(jobAlarms.length).toBeGreaterThan(0);
      expect(unfed(jobAlarms, emf)).toEqual([]);

      const seen: Record<string, number> = {};
      for (const { label, outcome } of deliveryRuns) {
        const key = `${label}: ${outcome.summary === undefined ? `killed(${outcome.signal})` : [outcome.summary.outcome, outcome.summary.reason].filter(Boolean).join(':')}`;
        seen[key] = (seen[key] ?? 0) + 1;
      }
      const lost = outcomes.reduce(
        (total, r) => total + Number((r.summary as { counts?: { lost?: number } } | undefined)?.counts?.lost ?? 0),
        0,
      );
      console.info(
        `[delivery] ${expected.length} due reminders, ${seeded.size - expected.length} rows never due or never believed; ` +
          `${deliveryRuns.length} delivery processes ${JSON.stringify(seen)}; claims lost ${lost}; ` +
          `outbox ${outbox.length} items; ${poller.stats.invocations} relay invocations (${poller.stats.retries} retries); ` +
          `bus: ${bus.requests} PutEvents, ${bus.refused.length} entries refused, ${bus.accepted.length} accepted, ${delivered.length} deliveries; inbox ${inbox.length} rows; ` +
          `proxy conflicts ${JSON.stringify(proxies.map((p) => p.injected().conflict ?? {}).reduce((all, one) => ({ ...all, ...Object.fromEntries(Object.entries(one).map(([k, v]) => [k, (all[k] ?? 0) + v])) }), {} as Record<string, number>))}`,
      );
    },
  );
});
