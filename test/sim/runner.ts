/**
 * The simulated year: the real handler (`createHandler` from lambda/sync/handler.ts, in-process — not the
 * bundle: only in-process can the clock be virtual) against DynamoDB Local with the template's
 * tables, a Codeforces that serves the truth of the current virtual moment through an undici
 * MockAgent (or a wrong reply, test/sim/glitches.ts), DynamoDB faults through local/dynamo-proxy.ts,
 * the product's reminder delivery job (`createDeliveryHandler` from lambda/delivery/handler.ts,
 * in-process on the same clock, every virtual minute), and the app: users writing reminders through
 * the HTTP API's handler and the product's write path behind it (test/sim/app.ts) and receiving
 * `ReminderDue` events — the outbox's stream
 * relayed by the package's relay to a bus that duplicates and reorders, deduped by the app's
 * consumer on `detail.eventId` (test/sim/app-events.ts). Every hour the checker compares what the
 * app sees with the truth; the reminders are judged on what the users received.
 */
import { DynamoDBClient, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { MockAgent } from 'undici';
import { OUTBOX_ITEM, ScheduledRunFailedError, ledgerSlots, type RunResult } from '@contest-sync/scheduled-singleton';
import { createHandler } from '../../lambda/sources/codeforces/handler.js';
import { createHandler as createAtCoderHandler } from '../../lambda/sources/atcoder/handler.js';
import { createHandler as createCodeChefHandler } from '../../lambda/sources/codechef/handler.js';
import { createHandler as createLeetCodeHandler } from '../../lambda/sources/leetcode/handler.js';
import { ATCODER_JOB } from '../../lambda/sources/atcoder/job.js';
import { CODECHEF_JOB } from '../../lambda/sources/codechef/job.js';
import { LEETCODE_JOB } from '../../lambda/sources/leetcode/job.js';
import { jobNames } from '../../lambda/sources/job.js';
import { SyncFailedError, type Handler } from '../../lambda/sync/handler.js';
import { createDeliveryHandler } from '../../lambda/delivery/handler.js';
import type { DeliveryCounts } from '../../lambda/delivery/deliver.js';
import { deliveryRunRecordPrefix } from '../../lambda/delivery/schema.js';
import { LEASE_PK } from '../../lambda/contract.js';
import type { RunSummary } from '../../lambda/sync/summary.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/dynamodb-local.js';
import { startDynamoProxy, type ProxyFault, type ProxyRequest } from '../../local/dynamo-proxy.js';
import { mappingFromTemplate } from '../../local/stream-poller.js';
import { createTablesFromTemplate, tableDefinitionsFromTemplate } from '../../local/tables.js';
import { findDeliveryFunction, type CfnTemplate } from '../../local/template.js';
import { PRICES } from '../../local/prices.js';
import { prng } from '../chaos/faults.js';
import { scanAll } from '../support/contests.js';
import { DEFAULT_EVENT_PATH, startEventPath, type EventPathFigures, type EventPathSettings } from './app-events.js';
import { FickleUsers, LEAD_MINUTES, apiWritePath, newIntentId, type AppOutcome, type AppRequest, type Shown } from './app.js';
import { Checker, type ReminderFigures, type Violation } from './checker.js';
import {
  DEFAULT_EPISODE,
  EPISODE_GLITCHES,
  glitchSchedule,
  hash01,
  isCodeforcesGlitch,
  pickTargets,
  PER_CONTEST_LIES,
  WRONG_LISTS,
  wrongList,
  type Glitch,
  type HourGlitch,
} from './glitches.js';
import { iso, Tracer } from './trace.js';
import { buildTruth, DAY, HOUR, listAt, listedAt, startAt, upcomingAt, type ApiEntry, type Truth, type UpcomingEntry } from './truth.js';
import {
  SIDE_PLATFORMS,
  SOURCES,
  SimIds,
  atcoderPage,
  buildPlatformTruth,
  codechefList,
  leetcodeReply,
  misdatedAt,
  type PlatformTruth,
  type SidePlatform,
  type SourceName,
} from './platforms.js';
import { contestKeys } from '../../lambda/reminders/table.js';
import { isReplyClockId } from '../../lambda/contests/model.js';
import { GATE_PREFIX } from '../../lambda/contests/bucket-gates.js';

export interface SimOptions {
  seed: number;
  days: number;
  /** Run with a guard switched off, or a broken app (docs/simulation.md, "Broken variants"). */
  broken?: string;
  /** Minutes between runs of the delivery job (default 1, as deployed). */
  deliverEveryMinutes?: number;
  /** Run the delivery job at every minute, also those its byDue index shows idle (slow: to check that skipping them changes nothing). */
  runIdleMinutes?: boolean;
  /** Minutes between passes of the broken `app`'s own notifier (default 10). */
  notifyEveryMinutes?: number;
  /** The event path's at-least-once draws, replacing the defaults (tests raise them). */
  eventPath?: Partial<EventPathSettings>;
  /** Glitch rates per hour replacing the defaults (tests raise the harmful ones). */
  glitchRates?: Partial<Record<Glitch, number>>;
  /** Longest episode of a wrong upstream, in hours (default 6). */
  episode?: number;
  /** Every episode exactly `episode` hours long. */
  fullEpisodes?: boolean;
  /** Progress callback, once per simulated day. */
  onDay?: (day: number, checker: Checker) => void;
  /** Largest clock skew between the sync, the delivery job and the app, in seconds (default 5; each drawn anew every simulated day). */
  clockSkewSeconds?: number;
  /** The fickle users' actions (test/sim/app.ts): per hour at a random moment, and per contest a sync reads the reminders of or commits (default 0.5 and 0.5). */
  fickle?: { perHour: number; perSync: number };
  /** Stop after this many days (the truth and the glitches are still those of `days`: a trace of one moment of a year). */
  stopAfterDays?: number;
  /** Trace these contests (test/sim/trace.ts): one line per change, through `write`. */
  trace?: { contests: readonly number[]; write: (line: string) => void };
  /** The sources whose jobs run (docs/simulation.md, "Four sources"; default all four). */
  sources?: readonly SourceName[];
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
  /** The sync's run records (the checker bounds them). */
  runRecords: number;
  /** The run records of each sync job (`run#<platform>#…`). */
  runRecordsByJob: Record<string, number>;
  runRecordsBytes: number;
  /** The delivery job's run records (one per busy minute, kept 30 days). */
  deliveryRunRecords: number;
  leaseItemBytes: number;
  ledgerEntries: number;
  handoffEntries: number;
}

export interface ContestEventFigures {
  received: Record<string, number>;
  /** Received while the truth said otherwise (a wrong upstream accepted as honest change, or honest change the event had not yet caught up with). */
  untrueOnArrival: Record<string, number>;
  /** The same eventId handled twice by the consumer (must be 0). */
  repeated: number;
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
  /** The product's delivery job: minutes, runs by outcome, and its passes' counts summed. */
  delivery: DeliveryFigures;
  /** The way to the app: stream, relay, bus, consumer. */
  events: EventPathFigures;
  /** The contest events the app's users received (after dedupe), by detail-type, and those the truth contradicted when they arrived. */
  contestEvents: ContestEventFigures;
  app: {
    appWrites: AppWriteFigures;
    /** What the fickle users did (set, change, cancel, set-same, cancel-and-set, set-again, refusals), and when. */
    fickle: Record<string, number>;
    ownNotifier?: { passes: number; claimsLost: number };
  };
  requests: { total: number; byOperation: Record<string, number>; perInvocation: number; injected: Record<string, number> };
  costUsdPerMonth: number;
  /** The delivery job's DynamoDB bill a month at this run's rate, its idle minutes (one Query each) included. */
  deliveryCostUsdPerMonth: number;
  ttlSwept: { contests: number; coordination: number; reminders: number };
  storageByMonth: MonthStorage[];
  /** The sources that ran. `violations`, `violationsTotal` and `violationsByInvariant` are every source's; `reminders`, `truth` and the sync's figures above are Codeforces'. */
  sources: SourceName[];
  /** Each other source's own year: its truth, its job's runs, its promises checked apart (ids qualified in the violations). */
  platforms: Partial<Record<SidePlatform, PlatformFigures>>;
  runTimeSeconds: number;
}

export interface PlatformFigures {
  truth: { contests: number; changes: Record<string, number>; placeholders: number; misdated: number };
  invocations: number;
  syncs: number;
  failures: Record<string, number>;
  skips: Record<string, number>;
  held: Record<string, number>;
  violations: Violation[];
  violationsTotal: number;
  violationsByInvariant: Record<string, number>;
  maxStalenessIntervals: number;
  staleHours: number;
  contestsDeletedWhileListed: number;
  reminders: ReminderFigures;
}

export interface AppWriteFigures {
  /** Sets that changed what the user asked (new intents), written with and without `dueAt`. */
  due: number;
  notDue: number;
  /** Sets of the lead already stored: nothing written. */
  unchanged: number;
  cancels: number;
  refused: Record<string, number>;
  /** Writes read again because the contest or the row changed between the read and the write. */
  conditionRetries: number;
}

export interface DeliveryFigures {
  /** Virtual minutes the job was scheduled (every `deliverEveryMinutes`). */
  minutes: number;
  /** Minutes not run because the byDue index held nothing due by then (see docs/simulation.md): each an idle minute, one Query in AWS. */
  idleMinutesSkipped: number;
  /** Invocations run, and of them idle (the precheck found nothing: no lease). */
  invocations: number;
  idle: number;
  succeeded: number;
  skips: Record<string, number>;
  failures: Record<string, number>;
  /** The busy passes' counts, summed (delivered, deferred by reason, lost, invalid, transactions, …). */
  counts: Record<string, number>;
  /** The job's DynamoDB requests, on the wire (idle minutes skipped not included). */
  requests: Record<string, number>;
}

/** What a broken variant changes: the model's PlanSettings (a handler that does not know one ignores it), or the app. */
export interface BrokenSettings {
  planSettings?: Record<string, unknown>;
  /** `remindAt`: the app keeps its own notifier, on `remindAt` itself (a Scan), and the product's delivery job is not run beside it. */
  notifier?: 'remindAt';
  /** The app's consumer dedupes on this instead of `detail.eventId`. */
  dedupeKey?: 'id';
}

export const BROKEN_VARIANTS: Record<string, BrokenSettings> = {
  plausibility: { planSettings: { plausibility: false } },
  convergence: { planSettings: { acceptHeldAfterReplies: 1_000_000 } },
  /** The sync's firing rule off: every reminder of an unfinished contest due at its listed start's time. */
  'firing-rule': { planSettings: { firingRule: false } },
  /** Both the plausibility guards and the firing rule off. */
  'guards-off': { planSettings: { plausibility: false, firingRule: false } },
  app: { notifier: 'remindAt' },
  /** The app's consumer dedupes on EventBridge's envelope `id`: every re-sent event reaches the user again. */
  'envelope-id': { dedupeKey: 'id' },
  /** The model's defaults (no PlanSettings passed). */
  baseline: {},
};

/** Default largest clock skew between the functions and the app (seconds). */
export const DEFAULT_CLOCK_SKEW_SECONDS = 5;

/** Default rates of the fickle users' actions: per hour at a random moment, and per contest a sync reads the reminders of or commits. */
export const DEFAULT_FICKLE = { perHour: 0.5, perSync: 0.5 } as const;

/** The `byDue` index shards (docs/tables.md: `dueShards`, default 1). */
export const DUE_SHARDS = 1;

/** The delivery jobs' run records (`run#reminder-delivery#<shard>#<minute>`): counted apart from the sync's. */
const DELIVERY_RUN_PREFIX = deliveryRunRecordPrefix(0).replace(/\d+#$/, '');

export { LEAD_MINUTES };

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

class SimulatedCrash extends Error {
  override readonly name = 'SimulatedCrash';
}

export async function runSimulation(world: SimWorld, options: SimOptions): Promise<SimReport> {
  const startedReal = Date.now();
  const hours = Math.min(options.days, options.stopAfterDays ?? options.days) * 24;
  const sources: SourceName[] = [...(options.sources ?? SOURCES)];
  const withCodeforces = sources.includes('codeforces');
  const cfTruth = buildTruth({ seed: options.seed, days: options.days });
  // Without Codeforces its world is empty: no contest, no job (its glitches of AWS still happen to the others' hours).
  const truth: Truth = withCodeforces ? cfTruth : { ...cfTruth, contests: [], changes: [] };
  const ids = new SimIds();
  const sideTruths = SIDE_PLATFORMS.filter((platform) => sources.includes(platform)).map((platform) => {
    const sideTruth = buildPlatformTruth(platform, { seed: options.seed, days: options.days, yearStart: truth.yearStart });
    ids.add(sideTruth);
    return sideTruth;
  });
  const episode = options.episode ?? DEFAULT_EPISODE;
  const schedule = glitchSchedule(options.seed, hours, options.glitchRates, { episode, fullEpisodes: options.fullEpisodes === true });
  const checker = new Checker(truth);
  const sideCheckers = new Map<SourceName, Checker>(sideTruths.map((t) => [t.platform, new Checker(t)]));
  /** The checker of a contest's platform: each platform's promises are checked against its own truth. */
  const checkerOf = (contestId: number): Checker => sideCheckers.get(ids.platformOf(contestId)) ?? checker;
  const tracer = options.trace !== undefined ? new Tracer(options.trace.contests, truth, options.trace.write) : undefined;
  const random = prng(options.seed ^ 0x6170_7021);
  const notifyEvery = options.notifyEveryMinutes ?? 10;
  const deliverEvery = options.deliverEveryMinutes ?? 1;
  const broken = options.broken === undefined ? undefined : BROKEN_VARIANTS[options.broken];
  const ownApp = broken?.notifier === 'remindAt';
  if (options.broken !== undefined && broken === undefined)
    throw new Error(`unknown broken variant ${options.broken}; known: ${Object.keys(BROKEN_VARIANTS).join(', ')}`);

  const admin = new DynamoDBClient({ endpoint: world.dynamoEndpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const tables = await createTablesFromTemplate(admin, world.template, `sim-${options.seed}-${Date.now().toString(36)}`);
  const doc = DynamoDBDocumentClient.from(admin, { marshallOptions: { removeUndefinedValues: true } });
  const proxy = await startDynamoProxy(world.dynamoEndpoint);
  const clock = new Clock(truth.yearStart * 1000);
  // Clock skew (docs/simulation.md, "Clock skew"): the sync, the delivery job and the app each read
  // the virtual clock off by up to a few seconds, drawn anew every simulated day.
  const skewSeconds = options.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS;
  const skewRandom = prng(options.seed ^ 0x736b_6577);
  const skew = { sync: 0, delivery: 0, app: 0 };
  const drawSkew = (): void => {
    for (const who of ['sync', 'delivery', 'app'] as const) skew[who] = Math.round((skewRandom() * 2 - 1) * skewSeconds * 1000);
  };
  const syncNow = (): number => clock.now() + skew.sync;
  const deliveryNow = (): number => clock.now() + skew.delivery;
  const appNow = (): number => clock.now() + skew.app;

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

  const cf = codeforces(truth, clock, tracer);
  const planSettings = broken?.planSettings;
  const handlerOptions = {
    env: {
      CONTESTS_TABLE_NAME: tables.contests,
      REMINDERS_TABLE_NAME: tables.reminders,
      COORDINATION_TABLE_NAME: tables.coordination,
      CODEFORCES_API_URL: 'https://codeforces.com/api',
      LEASE_DURATION_SECONDS: '30',
      SCHEDULE_RATE_MINUTES: '60',
      // Its contest events through the outbox, as deployed (docs/events.md, "Contest events").
      ...(tables.outbox !== undefined
        ? { OUTBOX_TABLE_NAME: tables.outbox, OUTBOX_EVENT_SOURCE: 'contest-sync.contests', OUTBOX_RETENTION_DAYS: '7' }
        : {}),
    },
    now: syncNow,
    newRunId: (() => {
      let n = 0;
      return () => `sim-${options.seed}-${(n += 1)}`;
    })(),
    dynamo: fnClient,
    dispatcher: cf.agent,
    // The function's log and EMF lines: not shown.
    write: () => undefined,
    // The model's PlanSettings switches (ignored by a handler that does not know them).
    ...(planSettings !== undefined ? { planSettings } : {}),
  };
  const handler: Handler = createHandler(handlerOptions);

  // ---- every other source's job: its own entry, lease and run records, its platform's reply read by its own client ----
  const sideJobs = sideTruths.map((sideTruth) => {
    const platform = sideTruth.platform;
    const stand = SIDE_STAND_INS[platform];
    const agent = new MockAgent();
    agent.disableNetConnect();
    agent
      .get(stand.origin)
      .intercept({ path: stand.path, method: stand.method })
      .reply(() => ({
        statusCode: 200,
        data: stand.body(sideTruth, Math.floor(clock.now() / 1000)),
        responseOptions: { headers: { 'content-type': stand.contentType } },
      }))
      .persist();
    const { CODEFORCES_API_URL: _codeforces, ...env } = handlerOptions.env;
    let n = 0;
    const sideHandler: Handler = stand.create({
      ...handlerOptions,
      env: { ...env, ...(env.OUTBOX_EVENT_SOURCE !== undefined ? { OUTBOX_EVENT_SOURCE: jobNames(stand.job).eventSource } : {}) },
      newRunId: () => `sim-${options.seed}-${platform}-${(n += 1)}`,
      dispatcher: agent,
    });
    const figures = {
      invocations: 0,
      syncs: 0,
      failures: {} as Record<string, number>,
      skips: {} as Record<string, number>,
      held: {} as Record<string, number>,
    };
    const sideChecker = sideCheckers.get(platform)!;
    const tally = (hour: number, summary: RunSummary): boolean => {
      for (const entry of (summary as RunSummary & { held?: { kind: string }[] }).held ?? [])
        figures.held[entry.kind] = (figures.held[entry.kind] ?? 0) + 1;
      if (summary.outcome === 'succeeded') {
        figures.syncs += 1;
        if (summary.interval !== undefined) sideChecker.syncSucceeded(hour, summary.interval);
        return true;
      }
      const into = summary.outcome === 'skipped' ? figures.skips : figures.failures;
      into[summary.reason ?? 'unknown'] = (into[summary.reason ?? 'unknown'] ?? 0) + 1;
      return false;
    };
    /** One scheduled run of the source's job, with Lambda's two async retries when it fails. */
    const run = async (hour: number, intervalStart: number): Promise<void> => {
      let ok = false;
      for (let attempt = 0; attempt < 3 && !ok; attempt += 1) {
        if (attempt > 0) clock.advance(attempt === 1 ? 60_000 : 120_000);
        const event = {
          version: '0',
          id: `sim-${platform}-${hour}-${attempt}`,
          'detail-type': 'Scheduled Event',
          source: 'aws.events',
          account: '000000000000',
          time: new Date(intervalStart * 1000).toISOString().replace('.000Z', 'Z'),
          region: LOCAL_REGION,
          resources: [],
          detail: {},
        };
        const startedMs = clock.now();
        figures.invocations += 1;
        try {
          ok = tally(hour, await sideHandler(event, { getRemainingTimeInMillis: () => Math.max(0, 120_000 - (clock.now() - startedMs)) }));
        } catch (error) {
          if (error instanceof SyncFailedError) tally(hour, error.summary);
          else figures.failures.internal = (figures.failures.internal ?? 0) + 1;
        }
      }
      // Its replies are honest but for the misdated listings (CodeChef's AM/PM error): an hour is
      // wrong for this platform when its job got none, and wrong for the contests it misdated.
      const wrongFor = misdatedAt(sideTruth, intervalStart + 2);
      sideChecker.upstreamHour(hour, { t: intervalStart + 2, ok, ...(wrongFor.length > 0 ? { wrongFor } : {}) });
    };
    return { truth: sideTruth, agent, figures, run };
  });

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
    for (const [key, value] of Object.entries(extra.counts))
      if (typeof value === 'number') countsTotal[key] = (countsTotal[key] ?? 0) + value;
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
      let traced = 'sync: no result';
      try {
        const summary = await handler(event, { getRemainingTimeInMillis: () => Math.max(0, 120_000 - (clock.now() - startedMs)) });
        if (crash.fired) failed = true;
        else record(hour, summary);
        traced = `sync ${summary.outcome}${summary.reason !== undefined ? ` (${summary.reason})` : ''}`;
      } catch (error) {
        failed = true;
        if (crash.fired) {
          // The invocation died: no result, Lambda retries it.
          traced = 'sync crashed';
        } else if (error instanceof SyncFailedError) {
          record(hour, error.summary);
          traced = `sync failed (${error.summary.reason ?? 'unknown'})`;
        } else {
          failures.internal = (failures.internal ?? 0) + 1;
        }
      } finally {
        if (crash.fired) failures.crash = (failures.crash ?? 0) + 1;
        crash.after = Infinity;
        faultKind = undefined;
        faultDraw = undefined;
      }
      if (tracer !== undefined) {
        tracer.run(Math.floor(clock.now() / 1000), traced);
        await traceStored('sync');
      }
      if (!failed) return;
    }
  };

  /** The traced contests' items and reminder rows as stored now (test/sim/trace.ts prints what changed). */
  const traceStored = async (who: string): Promise<void> => {
    if (tracer === undefined) return;
    const at = Math.floor(clock.now() / 1000);
    for (const contestId of tracer.contests) {
      const got = await doc.send(
        new GetCommand({ TableName: tables.contests, Key: { contestId: ids.qualified(contestId) }, ConsistentRead: true }),
      );
      const rows: Record<string, unknown>[] = [];
      for (const key of contestKeys(ids.qualified(contestId))) {
        const page = await doc.send(
          new QueryCommand({
            TableName: tables.reminders,
            KeyConditionExpression: 'contestKey = :k',
            ExpressionAttributeValues: { ':k': key },
            ConsistentRead: true,
          }),
        );
        rows.push(...(page.Items ?? []));
      }
      tracer.stored(at, who, contestId, got.Item, rows);
    }
  };

  // ---- the app, through the HTTP API ----
  const appWrites: AppWriteFigures = { due: 0, notDue: 0, unchanged: 0, cancels: 0, refused: {}, conditionRetries: 0 };
  const visited = new Set<number>();
  const lateAdded = new Set<number>();
  const soonAdded = new Set<number>();
  const upcomingView = async (nowSeconds: number): Promise<Map<number, UpcomingEntry>> => {
    const view = new Map<number, UpcomingEntry>();
    for (const platform of sources) {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await doc.send(
          new QueryCommand({
            TableName: tables.contests,
            IndexName: 'byPlatformStart',
            KeyConditionExpression: 'platform = :p AND startTimeSeconds >= :now',
            FilterExpression: 'attribute_not_exists(vanishedAt)',
            ExpressionAttributeValues: { ':p': platform, ':now': nowSeconds },
            ExclusiveStartKey: start,
          }),
        );
        for (const item of page.Items ?? [])
          view.set(ids.number(item.contestId), { name: String(item.name), startTimeSeconds: Number(item.startTimeSeconds) });
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
    }
    return view;
  };
  /**
   * Every reminder write of every user, through one function (test/sim/app.ts: the HTTP API's
   * handler and the product's write path behind it), told to the checker as it commits: a set that changed what the user
   * asked is a new intent, a cancel ends the current one.
   */
  const writePath = apiWritePath({
    doc,
    contests: tables.contests,
    reminders: tables.reminders,
    now: appNow,
    dueShards: DUE_SHARDS,
    qualify: (contestId) => ids.qualified(contestId),
    newIntent: () => newIntentId(),
    onConflict: () => {
      appWrites.conditionRetries += 1;
    },
  });
  const appWrite = async (request: AppRequest): Promise<AppOutcome> => {
    const outcome = await writePath(request);
    const at = Math.floor(clock.now() / 1000);
    if (outcome.kind === 'set' && outcome.changed) {
      if (outcome.due) appWrites.due += 1;
      else appWrites.notDue += 1;
      checkerOf(request.contestId).reminderSet(request.contestId, request.userId, (request as { minutesBefore: number }).minutesBefore, at);
    } else if (outcome.kind === 'cancel' && outcome.cancelled) {
      appWrites.cancels += 1;
      checkerOf(request.contestId).reminderCancelled(request.contestId, request.userId, at);
    } else if (outcome.kind === 'refused') {
      appWrites.refused[outcome.reason] = (appWrites.refused[outcome.reason] ?? 0) + 1;
    } else {
      appWrites.unchanged += 1;
    }
    if (tracer?.has(request.contestId) === true) {
      const what = request.kind === 'set' ? `sets ${request.userId} ${request.minutesBefore} min` : `cancels ${request.userId}`;
      tracer.note(at, request.contestId, `  app ${what}: ${JSON.stringify(outcome)}`);
    }
    return outcome;
  };
  const setReminder = async (contestId: number, userId: string, minutesBefore: number): Promise<void> => {
    await appWrite({ kind: 'set', contestId, userId, minutesBefore });
  };
  const usersAct = async (view: Map<number, UpcomingEntry>, nowSeconds: number): Promise<void> => {
    for (const [contestId, entry] of view) {
      const ahead = entry.startTimeSeconds - nowSeconds;
      if (!visited.has(contestId)) {
        visited.add(contestId);
        const users = 1 + Math.floor(random() * 3);
        for (let u = 0; u < users; u += 1)
          await setReminder(contestId, `user-${u}`, LEAD_MINUTES[Math.floor(random() * LEAD_MINUTES.length)]!);
      } else if (!lateAdded.has(contestId) && ahead < 30 * HOUR) {
        lateAdded.add(contestId);
        await setReminder(contestId, 'user-late', random() < 0.5 ? 10 : 60);
      }
      if (!soonAdded.has(contestId) && ahead > 0 && ahead <= 3 * HOUR) {
        // Set only minutes ahead: due 1–20 minutes from now.
        soonAdded.add(contestId);
        const minutesBefore = Math.floor(ahead / 60) - (1 + Math.floor(random() * 20));
        if (minutesBefore >= 1) await setReminder(contestId, 'user-soon', minutesBefore);
      }
    }
  };
  // ---- users who set, change, cancel and set again at any moment (test/sim/app.ts) ----
  const fickleRates = options.fickle ?? DEFAULT_FICKLE;
  const fickleRandom = prng(options.seed ^ 0x6669_636b);
  const fickle = new FickleUsers(fickleRandom, appWrite);
  /** The contests the app showed at its last look. */
  let shown: Shown[] = [];
  /**
   * Users act while the sync runs, as users of a busy app do: each time it reads a contest's
   * reminders (between its reads and its commit) and each time one of its transactions that
   * writes contests committed (between the transactions of its commit, or before its release), a
   * user acts on that contest with probability `perSync`.
   */
  const fickleOnSync = async (request: ProxyRequest): Promise<void> => {
    const body = request.body;
    const mode = request.operation === 'Query' ? 'read' : 'commit';
    let target: Shown | undefined;
    if (mode === 'read' && body?.TableName === tables.reminders && body.IndexName === undefined) {
      const values = unmarshall((body.ExpressionAttributeValues ?? {}) as Record<string, AttributeValue>);
      // The sync reads a contest's reminders one bucket key at a time: a user acts once per contest read, on its first bucket.
      const key = String(Object.values(values)[0]);
      const contestId = key.endsWith('#00') ? ids.number(key) : Number.NaN;
      target = shown.find((entry) => entry.contestId === contestId);
    } else if (request.operation === 'TransactWriteItems' && Array.isArray(body?.TransactItems)) {
      const puts = (body.TransactItems as { Put?: { TableName?: string; Item?: Record<string, AttributeValue> } }[])
        .map((action) => action.Put)
        .filter((put) => put?.TableName === tables.contests && put.Item !== undefined)
        .map((put) => unmarshall(put!.Item!))
        .filter((item) => !isReplyClockId(item.contestId) && typeof item.startTimeSeconds === 'number');
      const item = puts[Math.floor(fickleRandom() * puts.length)];
      if (item !== undefined) target = { contestId: ids.number(item.contestId), startTimeSeconds: Number(item.startTimeSeconds) };
    }
    if (target === undefined || fickleRandom() >= fickleRates.perSync) return;
    fickle.actions[`during-sync-${mode}`] = (fickle.actions[`during-sync-${mode}`] ?? 0) + 1;
    await fickle.actOn(target, Math.floor(clock.now() / 1000));
  };
  proxy.setAfterApply(async (request, reply) => {
    if (reply.status === 200) await fickleOnSync(request);
  });

  // ---- reminder delivery: the product's job, in-process on the virtual clock ----
  // Its environment is the template's (every `{ Ref }` to a table resolved to its local name), its
  // DynamoDB client goes through a proxy of its own (its requests counted apart from the sync's).
  const localName = new Map(tableDefinitionsFromTemplate(world.template).map((d) => [d.logicalId, tables[d.role]]));
  const deliveryFunction = findDeliveryFunction(world.template, 0);
  const deliveryProps = deliveryFunction.resource.Properties as { Environment: { Variables: Record<string, unknown> }; Timeout?: number };
  const deliveryEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(deliveryProps.Environment.Variables)) {
    const ref = (value as { Ref?: string } | undefined)?.Ref;
    if (typeof value === 'string') deliveryEnv[name] = value;
    else if (ref !== undefined && localName.get(ref) !== undefined) deliveryEnv[name] = localName.get(ref)!;
    else throw new Error(`delivery function environment ${name}: ${JSON.stringify(value)} is neither text nor a table of the template`);
  }
  const deliveryTimeoutMs = (deliveryProps.Timeout ?? 60) * 1000;
  const deliveryProxy = await startDynamoProxy(world.dynamoEndpoint);
  const deliveryTransactItems = { transactions: 0, actions: 0 };
  deliveryProxy.setFaults((request) => {
    const items = request.operation === 'TransactWriteItems' && request.n >= 0 ? request.body?.TransactItems : undefined;
    if (Array.isArray(items)) {
      deliveryTransactItems.transactions += 1;
      deliveryTransactItems.actions += items.length;
    }
    return undefined;
  });
  // Each claim as it commits, with the event written with it (none: its id was already in the
  // outbox), so that the checker knows which of a user's intents each notification is for.
  deliveryProxy.setAfterApply((request, reply) => {
    const items = request.operation === 'TransactWriteItems' && reply.status === 200 ? request.body?.TransactItems : undefined;
    if (!Array.isArray(items)) return;
    const claimed: { contestId: number; userId: string }[] = [];
    const events = new Map<string, string>();
    type Action = { TableName?: string; Key?: Record<string, AttributeValue>; Item?: Record<string, AttributeValue> };
    for (const action of items as { Update?: Action; Put?: Action }[]) {
      const update = action.Update;
      if (update !== undefined && update.TableName === tables.reminders && update.Key !== undefined) {
        const key = unmarshall(update.Key);
        claimed.push({ contestId: ids.number(key.contestKey), userId: String(key.userId) });
      }
      const put = action.Put;
      if (put !== undefined && put.TableName === tables.outbox && put.Item !== undefined) {
        const item = unmarshall(put.Item);
        const detail = JSON.parse(String(item[OUTBOX_ITEM.detail])) as Record<string, unknown>;
        if (item[OUTBOX_ITEM.detailType] === 'ReminderDue')
          events.set(`${ids.number(detail.contestId)}/${String(detail.userId)}`, String(item[OUTBOX_ITEM.eventId]));
      }
    }
    const at = Math.floor(clock.now() / 1000);
    for (const { contestId, userId } of claimed)
      checkerOf(contestId).reminderClaimed(contestId, userId, at, events.get(`${contestId}/${userId}`));
  });
  const deliveryClient = new DynamoDBClient({
    endpoint: deliveryProxy.endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 3_000 },
  });
  deliveryClient.middlewareStack.add(
    (next) => async (args) => {
      clock.advance(4);
      return next(args);
    },
    { step: 'initialize', name: 'simClock' },
  );
  const deliveryHandler = createDeliveryHandler({
    env: deliveryEnv,
    dynamo: deliveryClient,
    now: deliveryNow,
    newRunId: (() => {
      let n = 0;
      return () => `sim-delivery-${options.seed}-${(n += 1)}`;
    })(),
    // The summary line and EMF metrics: not read here (the result is).
    write: () => undefined,
  });
  const deliveryFigures: DeliveryFigures = {
    minutes: 0,
    idleMinutesSkipped: 0,
    invocations: 0,
    idle: 0,
    succeeded: 0,
    skips: {},
    failures: {},
    counts: {},
    requests: {},
  };
  const tallyDelivery = (result: RunResult): void => {
    deliveryFigures.invocations += 1;
    if (result.idle === true) deliveryFigures.idle += 1;
    if (result.outcome === 'succeeded') deliveryFigures.succeeded += 1;
    else if (result.outcome === 'skipped')
      deliveryFigures.skips[result.reason ?? 'unknown'] = (deliveryFigures.skips[result.reason ?? 'unknown'] ?? 0) + 1;
    else deliveryFigures.failures[result.reason ?? 'unknown'] = (deliveryFigures.failures[result.reason ?? 'unknown'] ?? 0) + 1;
    const counts = (result as RunResult & { counts?: DeliveryCounts }).counts;
    if (counts === undefined || result.idle === true) return;
    for (const [key, value] of Object.entries(counts)) {
      if (typeof value === 'number') deliveryFigures.counts[key] = (deliveryFigures.counts[key] ?? 0) + value;
      else if (typeof value === 'object' && value !== null) {
        for (const [reason, n] of Object.entries(value as Record<string, number>))
          deliveryFigures.counts[`${key}.${reason}`] = (deliveryFigures.counts[`${key}.${reason}`] ?? 0) + n;
      }
    }
  };

  /** The earliest `dueAt` in the byDue index (Infinity: none); refreshed after every write that may set one. */
  let earliestDue: number | undefined;
  const earliestDueAt = async (): Promise<number> => {
    if (earliestDue === undefined) {
      let earliest = Infinity;
      for (let shard = 0; shard < DUE_SHARDS; shard += 1) {
        const page = await doc.send(
          new QueryCommand({
            TableName: tables.reminders,
            IndexName: 'byDue',
            KeyConditionExpression: 'dueShard = :s',
            ExpressionAttributeValues: { ':s': shard },
            Limit: 1,
          }),
        );
        const first = page.Items?.[0]?.dueAt;
        if (typeof first === 'number') earliest = Math.min(earliest, first);
      }
      earliestDue = earliest;
    }
    return earliestDue;
  };
  const somethingMayBeDue = (): void => {
    earliestDue = undefined;
  };

  // ---- contest events as users receive them, compared with the truth when they arrive ----
  const contestEvents: ContestEventFigures = { received: {}, untrueOnArrival: {}, repeated: 0 };
  const contestEventIds = new Set<string>();
  const truthById = new Map([truth, ...sideTruths].flatMap((t) => t.contests).map((c) => [c.id, c]));
  const contestEventReceived = (event: { 'detail-type': string; detail: Record<string, unknown> }, at: number): void => {
    const type = event['detail-type'];
    const id = String(event.detail.eventId);
    if (contestEventIds.has(id)) contestEvents.repeated += 1;
    contestEventIds.add(id);
    contestEvents.received[type] = (contestEvents.received[type] ?? 0) + 1;
    const contest = truthById.get(ids.number(event.detail.contestId));
    // What it says, against the truth when the user reads it: withdrawn, or upcoming at that start.
    const says = type === 'ContestWithdrawn' ? 'withdrawn' : Number(event.detail.startTimeSeconds);
    const isTrue =
      contest !== undefined && (says === 'withdrawn' ? !listedAt(contest, at) : listedAt(contest, at) && startAt(contest, at) === says);
    if (!isTrue) contestEvents.untrueOnArrival[type] = (contestEvents.untrueOnArrival[type] ?? 0) + 1;
  };

  // ---- the app receives events: the outbox's stream, the relay, the bus, the consumer ----
  const outboxTable = tables.outbox;
  if (outboxTable === undefined)
    throw new Error('the template has no outbox table (the Events OutboxDelivery): the app cannot receive events');
  const outboxLogicalId = tableDefinitionsFromTemplate(world.template).find((d) => d.role === 'outbox')!.logicalId;
  const eventPath = await startEventPath({
    endpoint: world.dynamoEndpoint,
    dynamo: admin,
    outboxTable,
    mapping: mappingFromTemplate(world.template as { Resources: Record<string, { Type: string }> }, outboxLogicalId).config,
    eventBusName: 'ContestSyncEvents',
    idempotencyTable: `${tables.reminders}-app-idempotency`,
    dedupeKey: broken?.dedupeKey ?? 'detail.eventId',
    settings: { ...DEFAULT_EVENT_PATH, ...options.eventPath },
    random: prng(options.seed ^ 0x6576_656e),
    nowMs: clock.now,
    notify: (event, receivedAtMs) => {
      if (event.source === 'contest-sync.contests') {
        contestEventReceived(event, Math.floor(receivedAtMs / 1000));
        return;
      }
      if (broken?.notifier === 'remindAt') return; // that app listens to its own notifier only
      const d = event.detail;
      if (tracer?.has(ids.number(d.contestId)) === true)
        tracer.note(
          Math.floor(receivedAtMs / 1000),
          ids.number(d.contestId),
          `  user ${String(d.userId)} told: start ${iso(d.startTimeSeconds)} (${String(d.minutesBefore)} min)`,
        );
      checkerOf(ids.number(d.contestId)).reminderFired(
        ids.number(d.contestId),
        String(d.userId),
        Math.floor(receivedAtMs / 1000),
        typeof d.startTimeSeconds === 'number' ? d.startTimeSeconds : undefined,
        typeof d.eventId === 'string' ? d.eventId : undefined,
      );
    },
  });

  /** One scheduled minute of the delivery job (twice at once in a `duplicate` hour), then the relay. */
  const deliveryMinute = async (minuteStartMs: number, twice: boolean): Promise<void> => {
    deliveryFigures.minutes += 1;
    const nowSeconds = Math.floor(clock.now() / 1000);
    // Nothing in byDue is due by now (a second of margin: the run's own clock reads a little
    // later) and nothing has written the index since it was read: the run's one Query would find
    // nothing, so its precheck would return idle (no lease, no write). Such a minute is counted, not run.
    if (options.runIdleMinutes !== true && (await earliestDueAt()) > nowSeconds + 1 + Math.ceil(skewSeconds)) {
      deliveryFigures.idleMinutesSkipped += 1;
      return;
    }
    const event = {
      version: '0',
      id: `sim-delivery-${minuteStartMs}`,
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '000000000000',
      time: new Date(minuteStartMs).toISOString().replace('.000Z', 'Z'),
      region: LOCAL_REGION,
      resources: [],
      detail: {},
    };
    const run = async (): Promise<void> => {
      const startedMs = clock.now();
      try {
        tallyDelivery(
          await deliveryHandler(event, { getRemainingTimeInMillis: () => Math.max(0, deliveryTimeoutMs - (clock.now() - startedMs)) }),
        );
      } catch (error) {
        if (!(error instanceof ScheduledRunFailedError)) throw error;
        tallyDelivery(error.summary);
      }
    };
    await (twice ? Promise.all([run(), run()]) : run());
    await traceStored('delivery');
    somethingMayBeDue();
    await eventPath.relay();
  };

  /** The broken app's own notifier: fires on `remindAt` itself (a Scan), ignoring the sync's `dueAt` and the product. */
  const ownNotifier = { passes: 0, claimsLost: 0 };
  const notifyOnRemindAt = async (nowSeconds: number): Promise<void> => {
    ownNotifier.passes += 1;
    const due = await scanAll(doc, tables.reminders);
    for (const reminder of due) {
      if (typeof reminder.remindAt !== 'number' || reminder.remindAt > nowSeconds || reminder.notifiedAt !== undefined) continue;
      try {
        await doc.send(
          new UpdateCommand({
            TableName: tables.reminders,
            Key: { contestKey: reminder.contestKey, userId: reminder.userId },
            UpdateExpression: 'SET notifiedAt = :now',
            ConditionExpression: 'attribute_not_exists(notifiedAt) AND remindAt = :at',
            ExpressionAttributeValues: { ':now': nowSeconds, ':at': reminder.remindAt },
          }),
        );
        checkerOf(ids.number(reminder.contestId)).reminderFired(ids.number(reminder.contestId), String(reminder.userId), nowSeconds);
      } catch (error) {
        if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
        ownNotifier.claimsLost += 1;
      }
    }
  };

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
          sweptContests.add(ids.number(entry.key.contestId));
        } else if (entry.table === tables.reminders) {
          swept.reminders += 1;
          sweptReminders.add(`${ids.number(entry.key.contestKey)}/${String(entry.key.userId)}`);
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
  const byId = new Map([truth, ...sideTruths].flatMap((t) => t.contests).map((c) => [c.id, c]));
  let storedContests = new Set<number>();
  const storageByMonth: MonthStorage[] = [];
  const monthHours = (365 * 24) / 12;
  let wrongUpstreamHours = 0;
  try {
    for (let hour = 0; hour < hours; hour += 1) {
      const intervalStart = truth.yearStart + hour * HOUR;
      const glitch = schedule[hour];
      if (glitch !== undefined) glitchCounts[glitch.kind] = (glitchCounts[glitch.kind] ?? 0) + 1;

      if (hour % 24 === 0 && skewSeconds > 0) drawSkew();
      // A fickle user acts once this hour, at a random second of it (the sync's own moment aside).
      let fickleAt = fickleRandom() < fickleRates.perHour ? (intervalStart + Math.floor(fickleRandom() * 3600)) * 1000 : undefined;
      const fickleBefore = async (ms: number): Promise<void> => {
        if (fickleAt === undefined || fickleAt > ms) return;
        clock.to(fickleAt);
        fickleAt = undefined;
        await fickle.act(shown, Math.floor(clock.now() / 1000));
        somethingMayBeDue();
      };
      clock.to((intervalStart + 2) * 1000);
      hourSucceeded = false;
      cf.newHour();
      tracer?.hour(
        intervalStart,
        glitch === undefined ? undefined : `${glitch.kind} (${glitch.mode}, from hour ${glitch.fromHour}, ${glitch.length} h)`,
      );
      if (!withCodeforces) {
        // No Codeforces job: nothing of it to be wrong.
      } else if (glitch?.kind === 'duplicate') {
        await Promise.all([deliver(hour, intervalStart, undefined, true), deliver(hour, intervalStart, undefined, false)]);
      } else {
        await deliver(hour, intervalStart, glitch, true);
      }
      // Every other source's job, on its own lease, in the same interval.
      for (const side of sideJobs) await side.run(hour, intervalStart);
      const served = cf.hourServed();
      const ok = !withCodeforces || (hourSucceeded && !served.wrong);
      if (!ok || served.wrongFor !== undefined) wrongUpstreamHours += 1;
      checker.upstreamHour(hour, { t: intervalStart + 2, ok, ...(served.wrongFor !== undefined ? { wrongFor: served.wrongFor } : {}) });

      somethingMayBeDue();
      // The stream is relayed whatever wrote it: the sync's contest events go out now, not with the
      // next delivery minute that runs.
      await eventPath.relay();

      // The delivery job every `deliverEvery` minutes, its scheduled event arriving 5 s into the
      // minute (two at once in a duplicate hour); the broken app's own notifier instead every
      // `notifyEvery` minutes from minute 5. Users look at the upcoming view 10 minutes into the
      // interval. Events reach the app at their delivery times in between.
      let looked = false;
      const minutes: number[] = [];
      for (let minute = ownApp ? 5 : 0; minute < 60; minute += ownApp ? notifyEvery : deliverEvery) minutes.push(minute);
      for (const [index, minute] of minutes.entries()) {
        if (!looked && minute >= 10) {
          looked = true;
          await eventPath.deliverUntil((intervalStart + 10 * MIN) * 1000);
          await look(intervalStart, hour);
          somethingMayBeDue();
        }
        const tickMs = (intervalStart + minute * MIN + 5) * 1000;
        // The sync's retries ran past the next minute too: that one runs, at the clock's time.
        const nextMs = index + 1 < minutes.length ? (intervalStart + minutes[index + 1]! * MIN + 5) * 1000 : Infinity;
        if (clock.now() >= nextMs) continue;
        await fickleBefore(tickMs);
        clock.to(tickMs);
        await eventPath.deliverUntil(clock.now());
        if (ownApp) {
          const nowSeconds = Math.floor(clock.now() / 1000);
          await (glitch?.kind === 'duplicate'
            ? Promise.all([notifyOnRemindAt(nowSeconds), notifyOnRemindAt(nowSeconds)])
            : notifyOnRemindAt(nowSeconds));
        } else {
          await deliveryMinute((intervalStart + minute * MIN) * 1000, glitch?.kind === 'duplicate');
        }
      }
      if (!looked) {
        await eventPath.deliverUntil((intervalStart + 10 * MIN) * 1000);
        await look(intervalStart, hour);
        somethingMayBeDue();
      }

      await fickleBefore((intervalStart + 59 * MIN + 30) * 1000);
      // What is stored: deletions of listed contests, TTL expiry, swept at virtual time.
      clock.to((intervalStart + 59 * MIN + 30) * 1000);
      await eventPath.deliverUntil(clock.now());
      const nowSeconds = Math.floor(clock.now() / 1000);
      const stored = await scanTable(tables.contests);
      // The bucket gates expire with their contests (swept below) but are not contests.
      const contests = stored.filter((item) => !String(item.contestId).startsWith(GATE_PREFIX));
      const now = new Set(contests.filter((item) => !isReplyClockId(item.contestId)).map((item) => ids.number(item.contestId)));
      const gone = [...storedContests].filter((id) => !now.has(id) && !sweptContests.has(id));
      for (const [platform, each] of [['codeforces', checker] as const, ...sideCheckers])
        each.contestsDeleted(
          gone.filter((id) => ids.platformOf(id) === platform),
          (id) => {
            const contest = byId.get(id);
            return contest !== undefined && listedAt(contest, nowSeconds);
          },
        );
      sweptContests.clear();
      storedContests = now;
      for (const item of stored) noteExpiry(tables.contests, { contestId: item.contestId }, 'expiresAt', item.expiresAt, nowSeconds);
      if (hour % 24 === 23 || hour === hours - 1) {
        const coordination = await scanTable(tables.coordination);
        for (const item of coordination) noteExpiry(tables.coordination, { pk: item.pk }, 'ttl', item.ttl, nowSeconds);
        const reminders = await scanTable(tables.reminders);
        const keys = reminders.map((item) => `${ids.number(item.contestId)}/${String(item.userId)}`);
        for (const [platform, each] of [['codeforces', checker] as const, ...sideCheckers])
          each.remindersStored(
            hour,
            new Set(keys.filter((key) => ids.platformOf(Number(key.split('/')[0])) === platform)),
            new Set([...sweptReminders].filter((key) => ids.platformOf(Number(key.split('/')[0])) === platform)),
          );
        for (const item of reminders)
          noteExpiry(tables.reminders, { contestKey: item.contestKey, userId: item.userId }, 'expiresAt', item.expiresAt, nowSeconds);
        const month = Math.floor(hour / monthHours);
        const lastOfMonth = Math.floor((hour + 24) / monthHours) > month || hour === hours - 1;
        if (lastOfMonth) {
          const storage = storageOf(month + 1, contests.length, coordination, reminders);
          storageByMonth.push(storage);
          checker.storage(hour, nowSeconds, {
            contests: storage.contests,
            leaseItemBytes: storage.leaseItemBytes,
            runRecordsByJob: storage.runRecordsByJob,
            reminderKeys: keys,
          });
        }
      }
      await sweep(nowSeconds);
      somethingMayBeDue();
      if (hour % 24 === 23) options.onDay?.((hour + 1) / 24, checker);
    }
    // Events still on their way when the run ends (a claim in its last minutes) reach the app at their times.
    await eventPath.deliverUntil(Infinity);
  } finally {
    fnClient.destroy();
    deliveryClient.destroy();
    eventPath.close();
    await cf.agent.close();
    for (const side of sideJobs) await side.agent.close();
    await proxy.close();
    await deliveryProxy.close();
  }

  async function look(intervalStart: number, hour: number): Promise<void> {
    clock.to((intervalStart + 10 * MIN) * 1000);
    const nowSeconds = Math.floor(clock.now() / 1000);
    const view = await upcomingView(nowSeconds);
    shown = [...view].map(([contestId, entry]) => ({ contestId, startTimeSeconds: entry.startTimeSeconds }));
    const ofPlatform = (platform: SourceName): Map<number, UpcomingEntry> =>
      new Map([...view].filter(([contestId]) => ids.platformOf(contestId) === platform));
    checker.compareUpcoming(hour, ofPlatform('codeforces'), upcomingAt(truth, nowSeconds));
    for (const sideTruth of sideTruths)
      sideCheckers.get(sideTruth.platform)!.compareUpcoming(hour, ofPlatform(sideTruth.platform), upcomingAt(sideTruth, nowSeconds));
    await usersAct(view, nowSeconds);
  }

  const reminders = checker.finishReminders(truth.yearStart + hours * HOUR);
  const platforms: Partial<Record<SidePlatform, PlatformFigures>> = {};
  for (const side of sideJobs) {
    const each = sideCheckers.get(side.truth.platform)!;
    const sideReminders = each.finishReminders(truth.yearStart + hours * HOUR);
    const changes: Record<string, number> = {};
    // What the year saw: a change, placeholder or wrong listing drawn for a round past its end is not counted.
    const end = side.truth.end;
    for (const change of side.truth.changes) if (change.at < end) changes[change.kind] = (changes[change.kind] ?? 0) + 1;
    platforms[side.truth.platform] = {
      truth: {
        contests: side.truth.contests.filter((c) => c.announcedAt < end && c.starts[0]!.value >= truth.yearStart - 7 * DAY).length,
        changes,
        placeholders: side.truth.placeholders.filter((p) => p.from < end).length,
        misdated: side.truth.misdated.filter((m) => m.from < end).length,
      },
      ...side.figures,
      violations: each.violations.map((v) => ({ ...v, detail: qualifyDetail(v.detail, ids) })),
      violationsTotal: each.violationsTotal,
      violationsByInvariant: each.byInvariant,
      maxStalenessIntervals: each.maxStalenessIntervals,
      staleHours: each.staleHours,
      contestsDeletedWhileListed: each.contestsDeletedWhileListed,
      reminders: sideReminders,
    };
  }
  const allInvocations = invocations + sideJobs.reduce((n, side) => n + side.figures.invocations, 0);
  const sideViolations = Object.values(platforms).flatMap((figures) => figures.violations);
  const violationsByInvariant: Record<string, number> = { ...checker.byInvariant };
  for (const figures of Object.values(platforms))
    for (const [invariant, n] of Object.entries(figures.violationsByInvariant))
      violationsByInvariant[invariant] = (violationsByInvariant[invariant] ?? 0) + n;
  const byOperation = Object.fromEntries([...proxy.counts].sort());
  const deliveryRequests: Record<string, number> = Object.fromEntries([...deliveryProxy.counts].sort());
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
    violations: [...checker.violations, ...sideViolations],
    violationsTotal: checker.violationsTotal + Object.values(platforms).reduce((n, figures) => n + figures.violationsTotal, 0),
    violationsByInvariant,
    maxStalenessIntervals: checker.maxStalenessIntervals,
    staleHours: checker.staleHours,
    contestsDeletedWhileListed: checker.contestsDeletedWhileListed,
    reminders,
    delivery: { ...deliveryFigures, requests: deliveryRequests },
    events: eventPath.figures,
    contestEvents,
    app: { appWrites, fickle: fickle.actions, ...(ownApp ? { ownNotifier } : {}) },
    requests: { total, byOperation, perInvocation: allInvocations === 0 ? 0 : Math.round((total / allInvocations) * 10) / 10, injected },
    costUsdPerMonth: monthlyDynamoCost(byOperation, transactItems, hours),
    deliveryCostUsdPerMonth: monthlyDynamoCost(
      { ...deliveryRequests, Query: (deliveryRequests.Query ?? 0) + deliveryFigures.idleMinutesSkipped },
      deliveryTransactItems,
      hours,
    ),
    ttlSwept: swept,
    storageByMonth,
    sources,
    platforms,
    runTimeSeconds: Math.round((Date.now() - startedReal) / 100) / 10,
  };
  admin.destroy();
  return report;
}

/** How each other platform's stand-in answers its source's one request: the platform's own reply format. */
const SIDE_STAND_INS: Record<
  SidePlatform,
  {
    create: (options: Parameters<typeof createHandler>[0]) => Handler;
    job: typeof ATCODER_JOB | typeof CODECHEF_JOB | typeof LEETCODE_JOB;
    origin: string;
    method: 'GET' | 'POST';
    path: (path: string) => boolean;
    contentType: string;
    body: (truth: PlatformTruth, t: number) => string;
  }
> = {
  atcoder: {
    create: createAtCoderHandler,
    job: ATCODER_JOB,
    origin: 'https://atcoder.jp',
    method: 'GET',
    path: (path) => path.startsWith('/contests/'),
    contentType: 'text/html; charset=utf-8',
    body: atcoderPage,
  },
  codechef: {
    create: createCodeChefHandler,
    job: CODECHEF_JOB,
    origin: 'https://www.codechef.com',
    method: 'GET',
    path: (path) => path.startsWith('/api/list/contests/all'),
    contentType: 'application/json',
    body: codechefList,
  },
  leetcode: {
    create: createLeetCodeHandler,
    job: LEETCODE_JOB,
    origin: 'https://leetcode.com',
    method: 'POST',
    path: (path) => path === '/graphql',
    contentType: 'application/json',
    body: leetcodeReply,
  },
};

/** A violation's detail with the simulation's numbers of other platforms' contests as their qualified ids. */
function qualifyDetail(detail: string, ids: SimIds): string {
  return detail.replace(/\b[123]\d{6}\b/g, (n) => ids.qualified(Number(n)));
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

function storageOf(
  month: number,
  contests: number,
  coordination: Record<string, unknown>[],
  reminders: Record<string, unknown>[],
): MonthStorage {
  const deliveryRuns = coordination.filter((item) => String(item.pk).startsWith(DELIVERY_RUN_PREFIX));
  const runs = coordination.filter((item) => String(item.pk).startsWith('run#') && !String(item.pk).startsWith(DELIVERY_RUN_PREFIX));
  const lease = coordination.find((item) => item.pk === LEASE_PK);
  const sizeOf = (item: unknown): number =>
    Buffer.byteLength(JSON.stringify(item, (_, value: unknown) => (value instanceof Set ? [...(value as Set<unknown>)] : value)));
  const setSize = (value: unknown): number => (value instanceof Set ? value.size : Array.isArray(value) ? value.length : 0);
  return {
    month,
    contests,
    reminders: reminders.length,
    remindersDue: reminders.filter((item) => item.dueAt !== undefined).length,
    runRecords: runs.length,
    runRecordsByJob: runs.reduce<Record<string, number>>((byJob, item) => {
      const job = String(item.pk).split('#')[1] ?? '';
      byJob[job] = (byJob[job] ?? 0) + 1;
      return byJob;
    }, {}),
    runRecordsBytes: runs.reduce((n, item) => n + sizeOf(item), 0),
    deliveryRunRecords: deliveryRuns.length,
    leaseItemBytes: lease === undefined ? 0 : sizeOf(lease),
    ledgerEntries: ledgerSlots(lease).size,
    handoffEntries: setSize(lease?.handoff),
  };
}

/** What the replies of one hour were: wrong for everyone, or a lie about one contest. */
export interface HourServed {
  wrong: boolean;
  /** The contests a per-contest lie was about. */
  wrongFor?: number[];
}

/** Codeforces: the truth at the virtual moment of each request, shaped by the current glitch. */
function codeforces(truth: Truth, clock: Clock, tracer?: Tracer) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  let glitch: HourGlitch | undefined;
  let attempts = 0;
  let served: HourServed = { wrong: false };
  /** Per episode: when its first reply was made, and the contest a per-contest lie is about. */
  const episodes = new Map<number, { t0: number; targets: number[]; body?: string }>();
  const json = { 'content-type': 'application/json;charset=UTF-8' };
  const reply = () => {
    attempts += 1;
    const t = Math.floor(clock.now() / 1000);
    const kind = glitch !== undefined && isCodeforcesGlitch(glitch.kind) ? glitch.kind : undefined;
    const failFirst = attempts === 1 && (kind === 'http-503' || kind === 'call-limit' || kind === 'timeout');
    if (kind === 'outage' || (failFirst && kind === 'http-503')) {
      // An outage lasts the run's whole Codeforces budget: the client gives up at its deadline.
      clock.advance(kind === 'outage' ? 100_000 : 2_500);
      return {
        statusCode: 503,
        data: '<html><body>503 Service Temporarily Unavailable</body></html>',
        responseOptions: { headers: { 'content-type': 'text/html' } },
      };
    }
    if (failFirst && kind === 'timeout') {
      clock.advance(10_000);
      throw Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' });
    }
    if (failFirst && kind === 'call-limit') {
      clock.advance(2_100);
      return {
        statusCode: 200,
        data: JSON.stringify({ status: 'FAILED', comment: 'Call limit exceeded' }),
        responseOptions: { headers: json },
      };
    }
    clock.advance(300);
    let data: string;
    if (kind !== undefined && WRONG_LISTS.has(kind)) {
      let episode = episodes.get(glitch!.fromHour);
      if (episode === undefined) {
        episode = { t0: t, targets: pickTargets(truth, glitch!, t) };
        episodes.set(glitch!.fromHour, episode);
      }
      // A frozen body served in a later hour is an old reply (dated when it was made): no current
      // evidence about any contest, whatever it lied about when it was made.
      const replayed = glitch!.mode === 'frozen' && Math.floor(t / HOUR) !== Math.floor(episode.t0 / HOUR);
      served =
        PER_CONTEST_LIES.has(kind) && !replayed
          ? episode.targets.length === 0
            ? { wrong: false }
            : { wrong: false, wrongFor: episode.targets }
          : { wrong: true };
      if (glitch!.mode === 'frozen') {
        // A stale cache: the first reply's body, byte for byte.
        episode.body ??= JSON.stringify({ status: 'OK', result: wrongList(truth, glitch!, episode.t0, episode.t0, episode.targets) });
        data = episode.body;
      } else {
        data = JSON.stringify({ status: 'OK', result: wrongList(truth, glitch!, episode.t0, t, episode.targets) });
      }
    } else {
      let result = listAt(truth, t);
      if (kind === 'empty') result = [];
      data = JSON.stringify({ status: 'OK', result });
      if (kind === 'truncated') data = data.slice(0, Math.floor(data.length * 0.6));
    }
    if (tracer !== undefined) {
      const note = kind === undefined ? 'honest' : kind === 'truncated' ? 'truncated: not JSON' : kind;
      let entries: ApiEntry[] | undefined;
      try {
        entries = (JSON.parse(data) as { result: ApiEntry[] }).result;
      } catch {
        entries = undefined;
      }
      tracer.reply(t, entries, note);
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
