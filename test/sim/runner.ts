/**
 * The simulated year: the real handler (`createHandler` from lambda/handler.ts, in-process — not the
 * bundle: only in-process can the clock be virtual) against DynamoDB Local with the template's
 * tables, a Codeforces that serves the truth of the current virtual moment through an undici
 * MockAgent (or a wrong reply, test/sim/glitches.ts), DynamoDB faults through local/dynamo-proxy.ts,
 * and the app by the table contract (docs/tables.md): users writing reminders (`dueAt` only under
 * the contract's conditions, in a transaction with a ConditionCheck on the contest) and a notifier
 * that queries `byDue` every 10 virtual minutes and claims each row before it counts a
 * notification. Every hour the checker compares what the app sees with the truth.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { MockAgent } from 'undici';
import { createHandler, SyncFailedError, type Handler } from '../../lambda/handler.js';
import { LEASE_PK, METRICS_NAMESPACE, SERVICE_NAME } from '../../lambda/contract.js';
import type { RunSummary } from '../../lambda/summary.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/dynamodb-local.js';
import { startDynamoProxy, type ProxyFault } from '../../local/dynamo-proxy.js';
import { createTablesFromTemplate } from '../../local/tables.js';
import type { CfnTemplate } from '../../local/template.js';
import { PRICES } from '../../local/prices.js';
import { prng } from '../chaos/faults.js';
import { scanAll } from '../support/contests.js';
import { Checker, type ReminderFigures, type Violation } from './checker.js';
import { DEFAULT_EPISODE, EPISODE_GLITCHES, glitchSchedule, hash01, isCodeforcesGlitch, pickTarget, WRONG_LISTS, wrongList, type Glitch, type HourGlitch } from './glitches.js';
import { buildTruth, DAY, HOUR, listAt, listedAt, upcomingAt, type Truth, type UpcomingEntry } from './truth.js';

export interface SimOptions {
  seed: number;
  days: number;
  /** Run with a guard switched off, or the app's notifier bypassing the sync's firing rule (docs/simulation.md, "Broken variants"). */
  broken?: string;
  /** Minutes between notifier rounds (default 10). */
  notifyEveryMinutes?: number;
  /** Glitch rates per hour replacing the defaults (tests raise the harmful ones). */
  glitchRates?: Partial<Record<Glitch, number>>;
  /** Longest episode of a wrong upstream, in hours (default 6). */
  episode?: number;
  /** Every episode exactly `episode` hours long. */
  fullEpisodes?: boolean;
  /** Progress callback, once per simulated day. */
  onDay?: (day: number, checker: Checker) => void;
}

export interface SimWorld {
  dynamoEndpoint: string;
  template: CfnTemplate;
}

export interface MonthStorage {
  month: number;
  contests: number;
  reminders: number;
  /** Reminders with `dueAt` (in the `byDue` index). */
  remindersDue: number;
  runRecords: number;
  runRecordsBytes: number;
  leaseItemBytes: number;
  ledgerEntries: number;
  handoffEntries: number;
}

export interface SimReport {
  seed: number;
  days: number;
  broken: string | null;
  episode: number;
  yearStart: string;
  intervals: number;
  invocations: number;
  syncs: number;
  skips: Record<string, number>;
  failures: Record<string, number>;
  held: Record<string, number>;
  contestsHeldMax: number;
  /** The summaries' numeric counts, summed over the run (stale replies among them). */
  countsTotal: Record<string, number>;
  glitches: Record<string, number>;
  /** Hours whose sync got no honest reply (a wrong list, a failed upstream, a failed sync). */
  wrongUpstreamHours: number;
  truth: { contests: number; changes: Record<string, number>; massChanges: number; nearChanges: number };
  violations: Violation[];
  violationsTotal: number;
  violationsByInvariant: Record<string, number>;
  maxStalenessIntervals: number;
  staleHours: number;
  contestsDeletedWhileListed: number;
  reminders: ReminderFigures;
  notifier: { passes: number; claimsLost: number; deferredPasses: number; appWrites: { due: number; notDue: number; conditionRetries: number } };
  requests: { total: number; byOperation: Record<string, number>; perInvocation: number; injected: Record<string, number> };
  costUsdPerMonth: number;
  ttlSwept: { contests: number; coordination: number; reminders: number };
  storageByMonth: MonthStorage[];
  runTimeSeconds: number;
}

/** What a broken variant changes: the model's PlanSettings (a handler that does not know one ignores it), or the app. */
export interface BrokenSettings {
  planSettings?: Record<string, unknown>;
  /** `remindAt`: the app's notifier fires on `remindAt` itself, as an app without the sync's firing rule would. */
  notifier?: 'remindAt';
}

export const BROKEN_VARIANTS: Record<string, BrokenSettings> = {
  plausibility: { planSettings: { plausibility: false } },
  convergence: { planSettings: { acceptHeldAfterReplies: 1_000_000 } },
  /** The sync's firing rule off: every reminder of an unfinished contest due at its listed start's time. */
  'firing-rule': { planSettings: { firingRule: false } },
  /** Both the plausibility guards and the firing rule off. */
  'guards-off': { planSettings: { plausibility: false, firingRule: false } },
  app: { notifier: 'remindAt' },
  /** The model's defaults (no PlanSettings passed). */
  baseline: {},
};

/** The `byDue` index shards (docs/tables.md: `dueShards`, default 1). */
export const DUE_SHARDS = 1;

/** The notifier sends only while the sync's last applied reply was made at most this long ago (docs/tables.md). */
export const FRESH_EVIDENCE_SECONDS = 70 * 60;

/** Lead times users choose (minutes). */
export const LEAD_MINUTES = [5, 10, 15, 30, 60, 120, 180, 1440] as const;

const MIN = 60;

/** A virtual clock in epoch ms; only moves forward. */
class Clock {
  constructor(public ms: number) {}
  readonly now = (): number => this.ms;
  to(ms: number): void {
    if (ms > this.ms) this.ms = ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

class QuietMetrics extends Metrics {
  override addMetric(): this {
    return this;
  }
  override publishStoredMetrics(): this {
    return this;
  }
}

class SimulatedCrash extends Error {
  override readonly name = 'SimulatedCrash';
}

export async function runSimulation(world: SimWorld, options: SimOptions): Promise<SimReport> {
  const startedReal = Date.now();
  const hours = options.days * 24;
  const truth = buildTruth({ seed: options.seed, days: options.days });
  const episode = options.episode ?? DEFAULT_EPISODE;
  const schedule = glitchSchedule(options.seed, hours, options.glitchRates, { episode, fullEpisodes: options.fullEpisodes === true });
  const checker = new Checker(truth);
  const random = prng(options.seed ^ 0x6170_7021);
  const notifyEvery = options.notifyEveryMinutes ?? 10;
  const broken = options.broken === undefined ? undefined : BROKEN_VARIANTS[options.broken];
  if (options.broken !== undefined && broken === undefined) throw new Error(`unknown broken variant ${options.broken}; known: ${Object.keys(BROKEN_VARIANTS).join(', ')}`);

  const admin = new DynamoDBClient({ endpoint: world.dynamoEndpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const tables = await createTablesFromTemplate(admin, world.template, `sim-${options.seed}-${Date.now().toString(36)}`);
  const doc = DynamoDBDocumentClient.from(admin, { marshallOptions: { removeUndefinedValues: true } });
  const proxy = await startDynamoProxy(world.dynamoEndpoint);
  const clock = new Clock(truth.yearStart * 1000);

  // ---- the function: createHandler with the virtual clock, Codeforces through a MockAgent ----
  const injected: Record<string, number> = {};
  const transactItems = { transactions: 0, actions: 0 };
  let faultDraw: (() => number) | undefined;
  let faultKind: Glitch | undefined;
  proxy.setFaults((request) => {
    if (request.operation === 'TransactWriteItems' && request.n >= 0) {
      const items = request.body?.TransactItems;
      if (Array.isArray(items)) {
        transactItems.transactions += 1;
        transactItems.actions += items.length;
      }
    }
    if (faultDraw === undefined || faultKind === undefined) return undefined;
    let fault: ProxyFault | undefined;
    if (faultKind === 'dynamo-throttle' && faultDraw() < 0.3) fault = faultDraw() < 0.5 ? 'throttling' : 'throughput-exceeded';
    if (faultKind === 'dynamo-500' && faultDraw() < 0.25) fault = 'internal-error';
    if (faultKind === 'dynamo-conflict' && request.operation === 'TransactWriteItems' && faultDraw() < 0.6) fault = 'conflict';
    if (fault !== undefined) injected[fault] = (injected[fault] ?? 0) + 1;
    return fault;
  });
  const crash = { after: Infinity, count: 0, fired: false };
  const fnClient = new DynamoDBClient({
    endpoint: proxy.endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 3_000 },
  });
  fnClient.middlewareStack.add(
    (next) => async (args) => {
      crash.count += 1;
      if (crash.count > crash.after) {
        crash.fired = true;
        throw new SimulatedCrash('simulated crash: the invocation died');
      }
      clock.advance(4);
      return next(args);
    },
    { step: 'initialize', name: 'simCrashAndClock' },
  );

  const cf = codeforces(truth, clock);
  const planSettings = broken?.planSettings;
  const handlerOptions = {
    env: {
      CONTESTS_TABLE_NAME: tables.contests,
      REMINDERS_TABLE_NAME: tables.reminders,
      COORDINATION_TABLE_NAME: tables.coordination,
      CODEFORCES_API_URL: 'https://codeforces.com/api',
      LEASE_DURATION_SECONDS: '30',
      SCHEDULE_RATE_MINUTES: '60',
    },
    now: clock.now,
    newRunId: (() => {
      let n = 0;
      return () => `sim-${options.seed}-${(n += 1)}`;
    })(),
    dynamo: fnClient,
    dispatcher: cf.agent,
    logger: new Logger({ serviceName: SERVICE_NAME, logLevel: 'SILENT' }),
    metrics: new QuietMetrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME }),
    // The model's PlanSettings switches (ignored by a handler that does not know them).
    ...(planSettings !== undefined ? { planSettings } : {}),
  };
  const handler: Handler = createHandler(handlerOptions);

  // ---- counters ----
  let invocations = 0;
  let syncs = 0;
  let hourSucceeded = false;
  const skips: Record<string, number> = {};
  const failures: Record<string, number> = {};
  const held: Record<string, number> = {};
  const countsTotal: Record<string, number> = {};
  let contestsHeldMax = 0;
  const glitchCounts: Record<string, number> = {};
  const record = (hour: number, summary: RunSummary): void => {
    const extra = summary as RunSummary & { held?: { kind: string }[]; counts: Record<string, unknown> };
    contestsHeldMax = Math.max(contestsHeldMax, typeof extra.counts.contestsHeld === 'number' ? extra.counts.contestsHeld : 0);
    for (const [key, value] of Object.entries(extra.counts)) if (typeof value === 'number') countsTotal[key] = (countsTotal[key] ?? 0) + value;
    for (const entry of extra.held ?? []) held[entry.kind] = (held[entry.kind] ?? 0) + 1;
    if (summary.outcome === 'succeeded') {
      syncs += 1;
      hourSucceeded = true;
      if (summary.interval !== undefined) checker.syncSucceeded(hour, summary.interval);
    } else if (summary.outcome === 'skipped') {
      skips[summary.reason ?? 'unknown'] = (skips[summary.reason ?? 'unknown'] ?? 0) + 1;
    } else {
      failures[summary.reason ?? 'unknown'] = (failures[summary.reason ?? 'unknown'] ?? 0) + 1;
    }
  };

  /** One delivery of the scheduled event, with Lambda's two async retries (~1 and ~3 minutes later). */
  const deliver = async (hour: number, intervalStart: number, glitch: HourGlitch | undefined, first: boolean): Promise<void> => {
    const event = {
      version: '0',
      id: `sim-${hour}`,
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '000000000000',
      time: new Date(intervalStart * 1000).toISOString().replace('.000Z', 'Z'),
      region: LOCAL_REGION,
      resources: [],
      detail: {},
    };
    for (let attempt = 0; attempt < 3; attempt += 1) {
      if (attempt > 0) clock.advance(attempt === 1 ? 60_000 : 120_000);
      // A wrong upstream answers every request of its hour; a transient glitch only the first run's.
      const glitched = glitch !== undefined && EPISODE_GLITCHES.has(glitch.kind) ? glitch : first && attempt === 0 ? glitch : undefined;
      cf.begin(glitched);
      const runGlitch = glitched?.kind;
      faultKind = runGlitch === 'dynamo-throttle' || runGlitch === 'dynamo-500' || runGlitch === 'dynamo-conflict' ? runGlitch : undefined;
      faultDraw = faultKind !== undefined ? prng(glitched!.seed) : undefined;
      crash.count = 0;
      crash.fired = false;
      crash.after = runGlitch === 'crash' ? (glitched!.crashAfter ?? 3) : Infinity;
      const startedMs = clock.now();
      invocations += 1;
      let failed = false;
      try {
        const summary = await handler(event, { getRemainingTimeInMillis: () => Math.max(0, 120_000 - (clock.now() - startedMs)) });
        if (crash.fired) failed = true;
        else record(hour, summary);
      } catch (error) {
        failed = true;
        if (crash.fired) {
          // The invocation died: no result, Lambda retries it.
        } else if (error instanceof SyncFailedError) {
          record(hour, error.summary);
        } else {
          failures.internal = (failures.internal ?? 0) + 1;
        }
      } finally {
        if (crash.fired) failures.crash = (failures.crash ?? 0) + 1;
        crash.after = Infinity;
        faultKind = undefined;
        faultDraw = undefined;
      }
      if (!failed) return;
    }
  };

  // ---- the app, by the table contract ----
  const appWrites = { due: 0, notDue: 0, conditionRetries: 0 };
  const notifierFigures = { passes: 0, claimsLost: 0, deferredPasses: 0 };
  const visited = new Set<number>();
  const lateAdded = new Set<number>();
  const soonAdded = new Set<number>();
  const upcomingView = async (nowSeconds: number): Promise<Map<number, UpcomingEntry>> => {
    const view = new Map<number, UpcomingEntry>();
    let start: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(
        new QueryCommand({
          TableName: tables.contests,
          IndexName: 'byPlatformStart',
          KeyConditionExpression: 'platform = :p AND startTimeSeconds >= :now',
          FilterExpression: 'attribute_not_exists(vanishedAt)',
          ExpressionAttributeValues: { ':p': 'codeforces', ':now': nowSeconds },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) view.set(Number(item.contestId), { name: String(item.name), startTimeSeconds: Number(item.startTimeSeconds) });
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return view;
  };
  /**
   * A user sets a reminder: the app reads the contest, then writes the reminder with `dueAt` only
   * when the contest is neither paused nor vanished, in one transaction with a ConditionCheck that
   * the contest is still as read; otherwise (or when the contest changed three times under it)
   * without `dueAt`, which the next sync sets.
   */
  const setReminder = async (contestId: number, userId: string, minutesBefore: number, nowSeconds: number): Promise<void> => {
    for (let attempt = 0; ; attempt += 1) {
      const got = await doc.send(new GetCommand({ TableName: tables.contests, Key: { contestId }, ConsistentRead: true }));
      const contest = got.Item;
      if (contest === undefined || typeof contest.startTimeSeconds !== 'number') return;
      const start = contest.startTimeSeconds;
      const remindAt = start - 60 * minutesBefore;
      if (remindAt <= nowSeconds) return;
      const base: Record<string, unknown> = { contestId, userId, minutesBefore, remindAt, ...(typeof contest.expiresAt === 'number' ? { expiresAt: contest.expiresAt } : {}) };
      const mayBeDue = contest.vanishedAt === undefined && contest.remindersPaused === undefined;
      try {
        if (mayBeDue && attempt < 3) {
          await doc.send(
            new TransactWriteCommand({
              TransactItems: [
                {
                  Put: {
                    TableName: tables.reminders,
                    Item: { ...base, dueAt: remindAt, dueStart: start, dueShard: contestId % DUE_SHARDS },
                    ConditionExpression: 'attribute_not_exists(userId)',
                  },
                },
                {
                  ConditionCheck: {
                    TableName: tables.contests,
                    Key: { contestId },
                    ConditionExpression: 'startTimeSeconds = :s AND attribute_not_exists(vanishedAt) AND attribute_not_exists(remindersPaused)',
                    ExpressionAttributeValues: { ':s': start },
                  },
                },
              ],
            }),
          );
          appWrites.due += 1;
        } else {
          await doc.send(new PutCommand({ TableName: tables.reminders, Item: base, ConditionExpression: 'attribute_not_exists(userId)' }));
          appWrites.notDue += 1;
        }
        checker.reminderSet(contestId, userId, minutesBefore, nowSeconds);
        return;
      } catch (error) {
        const name = (error as Error).name;
        if (name === 'ConditionalCheckFailedException') return;
        if (name !== 'TransactionCanceledException') throw error;
        const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
        if (reasons[0]?.Code === 'ConditionalCheckFailed') return;
        // The contest changed between the read and the write: read it again.
        appWrites.conditionRetries += 1;
      }
    }
  };
  const usersAct = async (view: Map<number, UpcomingEntry>, nowSeconds: number): Promise<void> => {
    for (const [contestId, entry] of view) {
      const ahead = entry.startTimeSeconds - nowSeconds;
      if (!visited.has(contestId)) {
        visited.add(contestId);
        const users = 1 + Math.floor(random() * 3);
        for (let u = 0; u < users; u += 1) await setReminder(contestId, `user-${u}`, LEAD_MINUTES[Math.floor(random() * LEAD_MINUTES.length)]!, nowSeconds);
      } else if (!lateAdded.has(contestId) && ahead < 30 * HOUR) {
        lateAdded.add(contestId);
        await setReminder(contestId, 'user-late', random() < 0.5 ? 10 : 60, nowSeconds);
      }
      if (!soonAdded.has(contestId) && ahead > 0 && ahead <= 3 * HOUR) {
        // Set only minutes ahead: due 1–20 minutes from now.
        soonAdded.add(contestId);
        const minutesBefore = Math.floor(ahead / 60) - (1 + Math.floor(random() * 20));
        if (minutesBefore >= 1) await setReminder(contestId, 'user-soon', minutesBefore, nowSeconds);
      }
    }
  };
  /**
   * The notifier: one Query of `byDue` per shard; when something is due, it sends only while the
   * sync's evidence is fresh (the reply clock, Contests item 0's `replyMadeAt`, at most 70 minutes
   * old: docs/tables.md), else it defers the pass; then a claim per row (`dueAt = :seen`) before it
   * counts a notification.
   */
  const notify = async (nowSeconds: number): Promise<void> => {
    notifierFigures.passes += 1;
    let fresh: boolean | undefined;
    for (let shard = 0; shard < DUE_SHARDS; shard += 1) {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await doc.send(
          new QueryCommand({
            TableName: tables.reminders,
            IndexName: 'byDue',
            KeyConditionExpression: 'dueShard = :s AND dueAt <= :now',
            ExpressionAttributeValues: { ':s': shard, ':now': nowSeconds },
            ExclusiveStartKey: start,
          }),
        );
        if ((page.Items ?? []).length > 0 && fresh === undefined) {
          const clock0 = (await doc.send(new GetCommand({ TableName: tables.contests, Key: { contestId: 0 }, ConsistentRead: true }))).Item;
          fresh = typeof clock0?.replyMadeAt === 'number' && clock0.replyMadeAt >= nowSeconds - FRESH_EVIDENCE_SECONDS;
          if (!fresh) notifierFigures.deferredPasses += 1;
        }
        if (fresh === false) return;
        for (const row of page.Items ?? []) {
          let item: Record<string, unknown> | undefined = row;
          if (item.dueStart === undefined) {
            item = (await doc.send(new GetCommand({ TableName: tables.reminders, Key: { contestId: row.contestId, userId: row.userId }, ConsistentRead: true }))).Item;
            if (item === undefined || item.dueAt !== row.dueAt) continue;
          }
          try {
            await doc.send(
              new UpdateCommand({
                TableName: tables.reminders,
                Key: { contestId: item.contestId, userId: item.userId },
                // docs/tables.md, "What a notifier does".
                UpdateExpression: 'SET notifiedAt = :now, notifiedStart = :start, paused = :notified REMOVE dueAt, dueShard, dueStart',
                ConditionExpression: 'dueAt = :seen',
                ExpressionAttributeValues: { ':now': nowSeconds, ':start': item.dueStart, ':seen': row.dueAt, ':notified': 'notified' },
              }),
            );
            checker.reminderFired(Number(item.contestId), String(item.userId), nowSeconds, typeof item.dueStart === 'number' ? item.dueStart : undefined);
          } catch (error) {
            if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
            notifierFigures.claimsLost += 1;
          }
        }
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
    }
  };
  /** The broken app: fires on `remindAt` itself (a Scan), ignoring the sync's `dueAt`. */
  const notifyOnRemindAt = async (nowSeconds: number): Promise<void> => {
    notifierFigures.passes += 1;
    const due = await scanAll(doc, tables.reminders);
    for (const reminder of due) {
      if (typeof reminder.remindAt !== 'number' || reminder.remindAt > nowSeconds || reminder.notifiedAt !== undefined) continue;
      try {
        await doc.send(
          new UpdateCommand({
            TableName: tables.reminders,
            Key: { contestId: reminder.contestId, userId: reminder.userId },
            UpdateExpression: 'SET notifiedAt = :now',
            ConditionExpression: 'attribute_not_exists(notifiedAt) AND remindAt = :at',
            ExpressionAttributeValues: { ':now': nowSeconds, ':at': reminder.remindAt },
          }),
        );
        checker.reminderFired(Number(reminder.contestId), String(reminder.userId), nowSeconds);
      } catch (error) {
        if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
        notifierFigures.claimsLost += 1;
      }
    }
  };
  const notifier = broken?.notifier === 'remindAt' ? notifyOnRemindAt : notify;

  // ---- TTL sweeps at virtual time (AWS deletes an expired item within about 48 h) ----
  const sweepDue = new Map<string, { table: string; key: Record<string, unknown>; attribute: string; at: number }>();
  const swept = { contests: 0, coordination: 0, reminders: 0 };
  const sweptContests = new Set<number>();
  const sweptReminders = new Set<string>();
  const noteExpiry = (table: string, key: Record<string, unknown>, attribute: string, ttl: unknown, nowSeconds: number): void => {
    if (typeof ttl !== 'number' || ttl > nowSeconds) return;
    const id = `${table}/${JSON.stringify(key)}/${ttl}`;
    if (sweepDue.has(id)) return;
    sweepDue.set(id, { table, key, attribute, at: ttl + Math.floor(hash01(id, options.seed) * 48 * HOUR) });
  };
  const sweep = async (nowSeconds: number): Promise<void> => {
    for (const [id, entry] of sweepDue) {
      if (entry.at > nowSeconds) continue;
      sweepDue.delete(id);
      try {
        await doc.send(
          new DeleteCommand({
            TableName: entry.table,
            Key: entry.key,
            ConditionExpression: '#ttl <= :now',
            ExpressionAttributeNames: { '#ttl': entry.attribute },
            ExpressionAttributeValues: { ':now': nowSeconds },
          }),
        );
        if (entry.table === tables.contests) {
          swept.contests += 1;
          sweptContests.add(Number(entry.key.contestId));
        } else if (entry.table === tables.reminders) {
          swept.reminders += 1;
          sweptReminders.add(`${String(entry.key.contestId)}/${String(entry.key.userId)}`);
        } else {
          swept.coordination += 1;
        }
      } catch (error) {
        if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      }
    }
  };
  const scanTable = (table: string) => scanAll(doc, table);

  // ---- the year ----
  const byId = new Map(truth.contests.map((c) => [c.id, c]));
  let storedContests = new Set<number>();
  const storageByMonth: MonthStorage[] = [];
  const monthHours = (365 * 24) / 12;
  let wrongUpstreamHours = 0;
  try {
    for (let hour = 0; hour < hours; hour += 1) {
      const intervalStart = truth.yearStart + hour * HOUR;
      const glitch = schedule[hour];
      if (glitch !== undefined) glitchCounts[glitch.kind] = (glitchCounts[glitch.kind] ?? 0) + 1;

      clock.to((intervalStart + 2) * 1000);
      hourSucceeded = false;
      cf.newHour();
      if (glitch?.kind === 'duplicate') {
        await Promise.all([deliver(hour, intervalStart, undefined, true), deliver(hour, intervalStart, undefined, false)]);
      } else {
        await deliver(hour, intervalStart, glitch, true);
      }
      const served = cf.hourServed();
      const ok = hourSucceeded && !served.wrong;
      if (!ok || served.wrongFor !== undefined) wrongUpstreamHours += 1;
      checker.upstreamHour(hour, { t: intervalStart + 2, ok, ...(served.wrongFor !== undefined ? { wrongFor: served.wrongFor } : {}) });

      // The notifier every `notifyEvery` minutes from minute 5 (two racing in a duplicate hour);
      // users look at the upcoming view 10 minutes into the interval.
      let looked = false;
      for (let minute = 5; minute < 60; minute += notifyEvery) {
        if (!looked && minute > 10) {
          looked = true;
          await look(intervalStart, hour);
        }
        clock.to((intervalStart + minute * MIN) * 1000);
        const nowSeconds = Math.floor(clock.now() / 1000);
        if (glitch?.kind === 'duplicate') await Promise.all([notifier(nowSeconds), notifier(nowSeconds)]);
        else await notifier(nowSeconds);
      }
      if (!looked) await look(intervalStart, hour);

      // What is stored: deletions of listed contests, TTL expiry, swept at virtual time.
      clock.to((intervalStart + 58 * MIN) * 1000);
      const nowSeconds = Math.floor(clock.now() / 1000);
      const contests = await scanTable(tables.contests);
      const now = new Set(contests.map((item) => Number(item.contestId)));
      const gone = [...storedContests].filter((id) => !now.has(id) && !sweptContests.has(id));
      checker.contestsDeleted(gone, (id) => {
        const contest = byId.get(id);
        return contest !== undefined && listedAt(contest, nowSeconds);
      });
      sweptContests.clear();
      storedContests = now;
      for (const item of contests) noteExpiry(tables.contests, { contestId: item.contestId }, 'expiresAt', item.expiresAt, nowSeconds);
      if (hour % 24 === 23 || hour === hours - 1) {
        const coordination = await scanTable(tables.coordination);
        for (const item of coordination) noteExpiry(tables.coordination, { pk: item.pk }, 'ttl', item.ttl, nowSeconds);
        const reminders = await scanTable(tables.reminders);
        const keys = reminders.map((item) => `${String(item.contestId)}/${String(item.userId)}`);
        checker.remindersStored(hour, new Set(keys), sweptReminders);
        for (const item of reminders) noteExpiry(tables.reminders, { contestId: item.contestId, userId: item.userId }, 'expiresAt', item.expiresAt, nowSeconds);
        const month = Math.floor(hour / monthHours);
        const lastOfMonth = Math.floor((hour + 24) / monthHours) > month || hour === hours - 1;
        if (lastOfMonth) {
          const storage = storageOf(month + 1, contests.length, coordination, reminders);
          storageByMonth.push(storage);
          checker.storage(hour, nowSeconds, { contests: storage.contests, leaseItemBytes: storage.leaseItemBytes, runRecords: storage.runRecords, reminderKeys: keys });
        }
      }
      await sweep(nowSeconds);
      if (hour % 24 === 23) options.onDay?.((hour + 1) / 24, checker);
    }
  } finally {
    fnClient.destroy();
    await cf.agent.close();
    await proxy.close();
  }

  async function look(intervalStart: number, hour: number): Promise<void> {
    clock.to((intervalStart + 10 * MIN) * 1000);
    const nowSeconds = Math.floor(clock.now() / 1000);
    const view = await upcomingView(nowSeconds);
    checker.compareUpcoming(hour, view, upcomingAt(truth, nowSeconds));
    await usersAct(view, nowSeconds);
  }

  const reminders = checker.finishReminders(truth.end);
  const byOperation = Object.fromEntries([...proxy.counts].sort());
  const total = proxy.total();
  const changeCounts: Record<string, number> = {};
  for (const change of truth.changes) changeCounts[change.kind] = (changeCounts[change.kind] ?? 0) + 1;
  const report: SimReport = {
    seed: options.seed,
    days: options.days,
    broken: options.broken ?? null,
    episode,
    yearStart: new Date(truth.yearStart * 1000).toISOString(),
    intervals: hours,
    invocations,
    syncs,
    skips,
    failures,
    held,
    contestsHeldMax,
    countsTotal,
    glitches: glitchCounts,
    wrongUpstreamHours,
    truth: {
      contests: truth.contests.filter((c) => c.announcedAt < truth.end && c.starts[0]!.value >= truth.yearStart - 7 * DAY).length,
      changes: changeCounts,
      massChanges: truth.changes.filter((c) => c.mass).length,
      nearChanges: truth.changes.filter((c) => c.near).length,
    },
    violations: checker.violations,
    violationsTotal: checker.violationsTotal,
    violationsByInvariant: checker.byInvariant,
    maxStalenessIntervals: checker.maxStalenessIntervals,
    staleHours: checker.staleHours,
    contestsDeletedWhileListed: checker.contestsDeletedWhileListed,
    reminders,
    notifier: { ...notifierFigures, appWrites },
    requests: { total, byOperation, perInvocation: invocations === 0 ? 0 : Math.round((total / invocations) * 10) / 10, injected },
    costUsdPerMonth: monthlyDynamoCost(byOperation, transactItems, hours),
    ttlSwept: swept,
    storageByMonth,
    runTimeSeconds: Math.round((Date.now() - startedReal) / 100) / 10,
  };
  admin.destroy();
  return report;
}

/**
 * The function's DynamoDB bill for a month at this run's rate (requests counted on the wire):
 * one read unit per read request, one write unit per plain write, two per item of a transaction.
 * Approximate (items are small, under 1 KB; a scan of the Contests table reads a few KB).
 */
export function monthlyDynamoCost(byOperation: Record<string, number>, transactions: { actions: number }, hours: number): number {
  const reads = ['GetItem', 'Query', 'Scan', 'BatchGetItem'].reduce((n, op) => n + (byOperation[op] ?? 0), 0);
  const writes = ['PutItem', 'UpdateItem', 'DeleteItem'].reduce((n, op) => n + (byOperation[op] ?? 0), 0) + 2 * transactions.actions;
  const perHour = (reads * PRICES.dynamoReadRequestUnitPerMillion + writes * PRICES.dynamoWriteRequestUnitPerMillion) / 1e6 / hours;
  return Math.round(perHour * 730 * 1e6) / 1e6;
}

function storageOf(month: number, contests: number, coordination: Record<string, unknown>[], reminders: Record<string, unknown>[]): MonthStorage {
  const runs = coordination.filter((item) => String(item.pk).startsWith('run#'));
  const lease = coordination.find((item) => item.pk === LEASE_PK);
  const sizeOf = (item: unknown): number => Buffer.byteLength(JSON.stringify(item, (_, value: unknown) => (value instanceof Set ? [...(value as Set<unknown>)] : value)));
  const setSize = (value: unknown): number => (value instanceof Set ? value.size : Array.isArray(value) ? value.length : 0);
  return {
    month,
    contests,
    reminders: reminders.length,
    remindersDue: reminders.filter((item) => item.dueAt !== undefined).length,
    runRecords: runs.length,
    runRecordsBytes: runs.reduce((n, item) => n + sizeOf(item), 0),
    leaseItemBytes: lease === undefined ? 0 : sizeOf(lease),
    ledgerEntries: setSize(lease?.ledger),
    handoffEntries: setSize(lease?.handoff),
  };
}


/** What the replies of one hour were: wrong for everyone, or a lie about one contest. */
export interface HourServed {
  wrong: boolean;
  wrongFor?: number;
}

/** Codeforces: the truth at the virtual moment of each request, shaped by the current glitch. */
function codeforces(truth: Truth, clock: Clock) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  let glitch: HourGlitch | undefined;
  let attempts = 0;
  let served: HourServed = { wrong: false };
  /** Per episode: when its first reply was made, and the contest a per-contest lie is about. */
  const episodes = new Map<number, { t0: number; target: number | undefined; body?: string }>();
  const json = { 'content-type': 'application/json;charset=UTF-8' };
  const reply = () => {
    attempts += 1;
    const t = Math.floor(clock.now() / 1000);
    const kind = glitch !== undefined && isCodeforcesGlitch(glitch.kind) ? glitch.kind : undefined;
    const failFirst = attempts === 1 && (kind === 'http-503' || kind === 'call-limit' || kind === 'timeout');
    if (kind === 'outage' || (failFirst && kind === 'http-503')) {
      // An outage lasts the run's whole Codeforces budget: the client gives up at its deadline.
      clock.advance(kind === 'outage' ? 100_000 : 2_500);
      return { statusCode: 503, data: '<html><body>503 Service Temporarily Unavailable</body></html>', responseOptions: { headers: { 'content-type': 'text/html' } } };
    }
    if (failFirst && kind === 'timeout') {
      clock.advance(10_000);
      throw Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' });
    }
    if (failFirst && kind === 'call-limit') {
      clock.advance(2_100);
      return { statusCode: 200, data: JSON.stringify({ status: 'FAILED', comment: 'Call limit exceeded' }), responseOptions: { headers: json } };
    }
    clock.advance(300);
    let data: string;
    if (kind !== undefined && WRONG_LISTS.has(kind)) {
      let episode = episodes.get(glitch!.fromHour);
      if (episode === undefined) {
        episode = { t0: t, target: pickTarget(truth, glitch!, t) };
        episodes.set(glitch!.fromHour, episode);
      }
      const perContest = kind === 'one-started' || kind === 'one-later';
      served = perContest ? (episode.target === undefined ? { wrong: false } : { wrong: false, wrongFor: episode.target }) : { wrong: true };
      if (glitch!.mode === 'frozen') {
        // A stale cache: the first reply's body, byte for byte.
        episode.body ??= JSON.stringify({ status: 'OK', result: wrongList(truth, glitch!, episode.t0, episode.t0, episode.target) });
        data = episode.body;
      } else {
        data = JSON.stringify({ status: 'OK', result: wrongList(truth, glitch!, episode.t0, t, episode.target) });
      }
    } else {
      let result = listAt(truth, t);
      if (kind === 'empty') result = [];
      data = JSON.stringify({ status: 'OK', result });
      if (kind === 'truncated') data = data.slice(0, Math.floor(data.length * 0.6));
    }
    return { statusCode: 200, data, responseOptions: { headers: json } };
  };
  agent
    .get('https://codeforces.com')
    .intercept({ path: (path: string) => path.startsWith('/api/contest.list'), method: 'GET' })
    .reply(reply)
    .persist();
  return {
    agent,
    begin(next: HourGlitch | undefined): void {
      glitch = next;
      attempts = 0;
    },
    newHour(): void {
      served = { wrong: false };
    },
    hourServed(): HourServed {
      return served;
    },
  };
}

