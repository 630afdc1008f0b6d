/**
 * The simulated year: the real handler (`createHandler` from lambda/handler.ts, in-process — not the
 * bundle: only in-process can the clock be virtual) against DynamoDB Local with the template's
 * tables, a Codeforces that serves the truth of the current virtual moment through an undici
 * MockAgent, DynamoDB faults through local/dynamo-proxy.ts, and the app (users setting reminders
 * from the upcoming query, a notifier) by the table contract. Every hour the checker compares
 * what the app sees with the truth.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { MockAgent } from 'undici';
import { createHandler, SyncFailedError, type Handler } from '../../lambda/handler.js';
import { LEASE_PK, METRICS_NAMESPACE, SERVICE_NAME } from '../../lambda/contract.js';
import type { RunSummary } from '../../lambda/summary.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/dynamodb-local.js';
import { startDynamoProxy, type ProxyFault } from '../../local/dynamo-proxy.js';
import { createTablesFromTemplate, type TableNames } from '../../local/tables.js';
import type { CfnTemplate } from '../../local/template.js';
import { PRICES } from '../../local/prices.js';
import { prng } from '../chaos/faults.js';
import { scanAll } from '../support/contests.js';
import { Checker, type ReminderFigures, type Violation } from './checker.js';
import { glitchSchedule, isCodeforcesGlitch, type Glitch, type HourGlitch } from './glitches.js';
import { buildTruth, DAY, HOUR, listAt, listedAt, upcomingAt, type Truth, type UpcomingEntry } from './truth.js';

export interface SimOptions {
  seed: number;
  days: number;
  /** Run with a guard switched off (docs/simulation.md, "Broken variants"). */
  broken?: string;
  /** Minutes between notifier rounds (default 30). */
  notifyEveryMinutes?: number;
  /** Glitch rates per hour replacing the defaults (tests raise the harmful ones). */
  glitchRates?: Partial<Record<Glitch, number>>;
  /** Every harmful reply served twice in a row (the most the model must withstand): the broken runs. */
  alwaysRepeatHarmful?: boolean;
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
  yearStart: string;
  intervals: number;
  invocations: number;
  syncs: number;
  skips: Record<string, number>;
  failures: Record<string, number>;
  held: Record<string, number>;
  contestsHeldMax: number;
  glitches: Record<string, number>;
  truth: { contests: number; changes: Record<string, number>; massChanges: number };
  violations: Violation[];
  violationsTotal: number;
  violationsByInvariant: Record<string, number>;
  maxStalenessIntervals: number;
  staleHours: number;
  reminders: ReminderFigures;
  requests: { total: number; byOperation: Record<string, number>; perInvocation: number; injected: Record<string, number> };
  costUsdPerMonth: number;
  ttlSwept: { contests: number; coordination: number };
  storageByMonth: MonthStorage[];
  runTimeSeconds: number;
}

/** Guards a broken variant switches off (PlanSettings, when the model lands; see docs/simulation.md). */
/** The PlanSettings switches of the model (issue 13); a handler that predates them ignores them. */
export interface BrokenSettings {
  plausibility?: boolean;
  acceptHeldAfterReplies?: number;
}

export const BROKEN_VARIANTS: Record<string, BrokenSettings> = {
  plausibility: { plausibility: false },
  convergence: { acceptHeldAfterReplies: 1_000_000 },
  /** Today's code as it is (no planSettings): the defects issue 13 lists. */
  baseline: {},
};

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
  const schedule = glitchSchedule(options.seed, hours, options.glitchRates, { alwaysRepeatHarmful: options.alwaysRepeatHarmful === true });
  const checker = new Checker(truth);
  const random = prng(options.seed ^ 0x6170_7021);
  const notifyEvery = options.notifyEveryMinutes ?? 30;

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
  const planSettings = options.broken === undefined ? undefined : BROKEN_VARIANTS[options.broken];
  if (options.broken !== undefined && planSettings === undefined) throw new Error(`unknown broken variant ${options.broken}; known: ${Object.keys(BROKEN_VARIANTS).join(', ')}`);
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
    // The model's PlanSettings switches (ignored by a handler that does not know them yet).
    ...(planSettings !== undefined && Object.keys(planSettings).length > 0 ? { planSettings } : {}),
  };
  const handler: Handler = createHandler(handlerOptions);

  // ---- counters ----
  let invocations = 0;
  let syncs = 0;
  const skips: Record<string, number> = {};
  const failures: Record<string, number> = {};
  const held: Record<string, number> = {};
  let contestsHeldMax = 0;
  const glitchCounts: Record<string, number> = {};
  const record = (hour: number, summary: RunSummary): void => {
    const extra = summary as RunSummary & { held?: { kind: string }[]; counts: { contestsHeld?: number } };
    contestsHeldMax = Math.max(contestsHeldMax, extra.counts.contestsHeld ?? 0);
    for (const entry of extra.held ?? []) held[entry.kind] = (held[entry.kind] ?? 0) + 1;
    if (summary.outcome === 'succeeded') {
      syncs += 1;
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
      const glitched = first && attempt === 0 ? glitch : glitch?.kind === 'outage' ? glitch : undefined;
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

  // ---- the app ----
  const visited = new Set<number>();
  const lateAdded = new Set<number>();
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
  const setReminder = async (contestId: number, startTimeSeconds: number, userId: string, minutesBefore: number, nowSeconds: number): Promise<void> => {
    const remindAt = startTimeSeconds - 60 * minutesBefore;
    if (remindAt <= nowSeconds + HOUR) return;
    try {
      await doc.send(
        new PutCommand({
          TableName: tables.reminders,
          Item: { contestId, userId, minutesBefore, remindAt },
          ConditionExpression: 'attribute_not_exists(userId)',
        }),
      );
      checker.reminderSet(contestId, userId, minutesBefore, nowSeconds);
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
    }
  };
  const usersAct = async (view: Map<number, UpcomingEntry>, nowSeconds: number): Promise<void> => {
    const choices = [10, 60, 1440];
    for (const [contestId, entry] of view) {
      if (!visited.has(contestId)) {
        visited.add(contestId);
        const users = 1 + Math.floor(random() * 3);
        for (let u = 0; u < users; u += 1) await setReminder(contestId, entry.startTimeSeconds, `user-${u}`, choices[Math.floor(random() * 3)]!, nowSeconds);
      } else if (!lateAdded.has(contestId) && entry.startTimeSeconds - nowSeconds < 30 * HOUR) {
        lateAdded.add(contestId);
        await setReminder(contestId, entry.startTimeSeconds, 'user-late', random() < 0.5 ? 10 : 60, nowSeconds);
      }
    }
  };
  const notify = async (nowSeconds: number): Promise<void> => {
    const due: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(
        new ScanCommand({
          TableName: tables.reminders,
          ConsistentRead: true,
          FilterExpression: 'remindAt <= :now AND attribute_not_exists(notifiedAt)',
          ExpressionAttributeValues: { ':now': nowSeconds },
          ExclusiveStartKey: start,
        }),
      );
      due.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    const contests = new Map<number, Record<string, unknown> | undefined>();
    for (const reminder of due) {
      const contestId = Number(reminder.contestId);
      if (!contests.has(contestId)) {
        const got = await doc.send(new GetCommand({ TableName: tables.contests, Key: { contestId }, ConsistentRead: true }));
        contests.set(contestId, got.Item);
      }
      const contest = contests.get(contestId);
      if (contest === undefined || contest.vanishedAt !== undefined) continue;
      try {
        await doc.send(
          new UpdateCommand({
            TableName: tables.reminders,
            Key: { contestId, userId: reminder.userId },
            UpdateExpression: 'SET notifiedAt = :now',
            ConditionExpression: 'attribute_exists(userId) AND attribute_not_exists(notifiedAt) AND remindAt = :at',
            ExpressionAttributeValues: { ':now': nowSeconds, ':at': reminder.remindAt },
          }),
        );
        checker.reminderFired(contestId, String(reminder.userId), nowSeconds);
      } catch (error) {
        if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      }
    }
  };

  // ---- TTL sweeps at virtual time (AWS deletes an expired item within about 48 h) ----
  const sweepDue = new Map<string, { table: string; key: Record<string, unknown>; attribute: string; at: number }>();
  const swept = { contests: 0, coordination: 0 };
  const sweptContests = new Set<number>();
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
  const changesByHour = new Map<number, boolean>();
  for (const change of truth.changes) {
    const hour = Math.floor((change.at - truth.yearStart) / HOUR);
    changesByHour.set(hour, (changesByHour.get(hour) ?? false) || change.mass);
  }
  let storedContests = new Set<number>();
  const storageByMonth: MonthStorage[] = [];
  const monthHours = (365 * 24) / 12;
  try {
    for (let hour = 0; hour < hours; hour += 1) {
      const intervalStart = truth.yearStart + hour * HOUR;
      const glitch = schedule[hour];
      if (glitch !== undefined) {
        glitchCounts[glitch.kind] = (glitchCounts[glitch.kind] ?? 0) + 1;
        checker.glitch(hour);
      }
      if (changesByHour.has(hour)) checker.honestChange(hour, changesByHour.get(hour)!);

      clock.to((intervalStart + 2) * 1000);
      if (glitch?.kind === 'duplicate') {
        await Promise.all([deliver(hour, intervalStart, undefined, true), deliver(hour, intervalStart, undefined, false)]);
      } else {
        await deliver(hour, intervalStart, glitch, true);
      }

      // The app, 10 minutes into the interval.
      clock.to((intervalStart + 10 * MIN) * 1000);
      let nowSeconds = Math.floor(clock.now() / 1000);
      const view = await upcomingView(nowSeconds);
      checker.compareUpcoming(hour, view, upcomingAt(truth, nowSeconds));
      await usersAct(view, nowSeconds);
      for (let minute = 10; minute < 60; minute += notifyEvery) {
        clock.to((intervalStart + minute * MIN) * 1000);
        await notify(Math.floor(clock.now() / 1000));
      }

      // What is stored: deletions of listed contests, TTL expiry, swept at virtual time.
      clock.to((intervalStart + 58 * MIN) * 1000);
      nowSeconds = Math.floor(clock.now() / 1000);
      const contests = await scanTable(tables.contests);
      const now = new Set(contests.map((item) => Number(item.contestId)));
      const gone = [...storedContests].filter((id) => !now.has(id) && !sweptContests.has(id));
      checker.contestsDeleted(hour, gone, (id) => {
        const contest = byId.get(id);
        return contest !== undefined && listedAt(contest, nowSeconds);
      });
      sweptContests.clear();
      storedContests = now;
      for (const item of contests) noteExpiry(tables.contests, { contestId: item.contestId }, 'expiresAt', item.expiresAt, nowSeconds);
      if (hour % 24 === 23 || hour === hours - 1) {
        const coordination = await scanTable(tables.coordination);
        for (const item of coordination) noteExpiry(tables.coordination, { pk: item.pk }, 'ttl', item.ttl, nowSeconds);
        const month = Math.floor(hour / monthHours);
        const lastOfMonth = Math.floor((hour + 24) / monthHours) > month || hour === hours - 1;
        if (lastOfMonth) {
          const storage = await storageOf(month + 1, contests.length, tables, coordination, doc);
          storageByMonth.push(storage);
          if (storage.leaseItemBytes > 64 * 1024 || storage.runRecords > 31 * 24 * 2 || storage.contests > 300) {
            checker.violate(hour, 'storage-unbounded', JSON.stringify(storage));
          }
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

  const reminders = checker.finishReminders(truth.end);
  const byOperation = Object.fromEntries([...proxy.counts].sort());
  const total = proxy.total();
  const changeCounts: Record<string, number> = {};
  for (const change of truth.changes) changeCounts[change.kind] = (changeCounts[change.kind] ?? 0) + 1;
  const report: SimReport = {
    seed: options.seed,
    days: options.days,
    broken: options.broken ?? null,
    yearStart: new Date(truth.yearStart * 1000).toISOString(),
    intervals: hours,
    invocations,
    syncs,
    skips,
    failures,
    held,
    contestsHeldMax,
    glitches: glitchCounts,
    truth: { contests: truth.contests.filter((c) => c.announcedAt < truth.end && c.starts[0]!.start >= truth.yearStart - 7 * DAY).length, changes: changeCounts, massChanges: truth.changes.filter((c) => c.mass).length },
    violations: checker.violations,
    violationsTotal: checker.violationsTotal,
    violationsByInvariant: checker.byInvariant,
    maxStalenessIntervals: checker.maxStalenessIntervals,
    staleHours: checker.staleHours,
    reminders,
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

async function storageOf(
  month: number,
  contests: number,
  tables: TableNames,
  coordination: Record<string, unknown>[],
  doc: DynamoDBDocumentClient,
): Promise<MonthStorage> {
  const runs = coordination.filter((item) => String(item.pk).startsWith('run#'));
  const lease = coordination.find((item) => item.pk === LEASE_PK);
  const reminders = await doc.send(new ScanCommand({ TableName: tables.reminders, Select: 'COUNT', ConsistentRead: true }));
  const sizeOf = (item: unknown): number => Buffer.byteLength(JSON.stringify(item, (_, value: unknown) => (value instanceof Set ? [...(value as Set<unknown>)] : value)));
  const setSize = (value: unknown): number => (value instanceof Set ? value.size : Array.isArray(value) ? value.length : 0);
  return {
    month,
    contests,
    reminders: reminders.Count ?? 0,
    runRecords: runs.length,
    runRecordsBytes: runs.reduce((n, item) => n + sizeOf(item), 0),
    leaseItemBytes: lease === undefined ? 0 : sizeOf(lease),
    ledgerEntries: setSize(lease?.ledger),
    handoffEntries: setSize(lease?.handoff),
  };
}

function hash01(text: string, seed: number): number {
  let h = (seed ^ 0x811c9dc5) >>> 0;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return prng(h)();
}

/** Codeforces: the truth at the virtual moment of each request, shaped by the current glitch. */
function codeforces(truth: Truth, clock: Clock) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  let glitch: HourGlitch | undefined;
  let attempts = 0;
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
    // A repeated harmful reply is the first one again (a stale cache), not a new wrong list.
    const servedAt = kind === 'partial' || kind === 'all-finished' || kind === 'starts-past' ? Math.min(t, truth.yearStart + glitch!.fromHour * HOUR + 2) : t;
    let result = listAt(truth, servedAt);
    if (kind === 'empty') result = [];
    if (kind === 'partial') {
      const keep = prng(glitch!.seed);
      result = result.filter(() => keep() < (glitch!.keep ?? 0.5));
    }
    if (kind === 'all-finished') {
      result = result.map((entry) => ({
        ...entry,
        phase: 'FINISHED',
        startTimeSeconds: Math.min(entry.startTimeSeconds, servedAt - (glitch!.backSeconds ?? HOUR)),
      }));
    }
    if (kind === 'starts-past') {
      result = result.map((entry) => (entry.startTimeSeconds > servedAt ? { ...entry, startTimeSeconds: servedAt - (glitch!.backSeconds ?? HOUR) } : entry));
    }
    let data = JSON.stringify({ status: 'OK', result });
    if (kind === 'truncated') data = data.slice(0, Math.floor(data.length * 0.6));
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
  };
}
