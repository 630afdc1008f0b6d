/**
 * Runs one chaos trial end to end:
 *
 * 1. fresh tables from the synthesized template, seeded with contests and reminders;
 * 2. a Codeforces stand-in behind a recording tap (each request gets a new list version, and the
 *    planned one-shot fault if any), and DynamoDB Local behind the delaying proxy and a recorder;
 * 3. the faults phase: the planned workers start staggered, deliver scheduled events for a few
 *    overlapping intervals (and some `{}` console runs), and get killed, frozen and slowed;
 * 4. the quiet phase, faults off: every interval is re-delivered until it has succeeded once (as
 *    Lambda's retries would), then one console sync whose reply the final tables must reflect;
 * 5. the history and the final tables go to the checker.
 *
 * With the delivery bundle (`deliveryEntry`), the reminder delivery job runs beside the syncs:
 * its workers (minute ticks, duplicates, console runs) start during the faults phase with the
 * same kinds of faults, through their own proxies and their own recorder, against reminders that
 * fall due during the trial while the syncs re-time and pause them; after the final sync, console
 * passes run until one succeeds with nothing left. The delivery checker (delivery-checker.ts)
 * reads the claims and events on the wire, the syncs' reminder writes and the final tables.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeleteTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { LEASE_PK } from '../../lambda/contract.js';
import { createReminderClient, ReminderError, type ReminderClient } from '../../lambda/reminders/index.js';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { startCodeforcesStandin, type StandinReply } from '../../local/codeforces-standin.js';
import { transactionLocks, type DynamoProxy, type ProxyFault } from '../../local/dynamo-proxy.js';
import { createTablesFromTemplate, tableDefinitionsFromTemplate, type TableNames } from '../../local/tables.js';
import { findDeliveryFunction, type CfnTemplate } from '../../local/template.js';
import { deliveryLeaseKey } from '../../lambda/delivery/schema.js';
import { judge, ownItem, type Violation } from './checker.js';
import { checkDelivery } from './delivery-checker.js';
import {
  appDueWrites,
  appWrites,
  claimDueWrites,
  claimTransactions,
  eventOf,
  type DueWrite,
  leaseGrants,
  seededDue,
  syncDueWrites,
} from './delivery-history.js';
import { contestList, expectedRows, seedRows, SOON_IDS, type Dataset } from './dataset.js';
import { planTrial, Random, type CodeforcesFault, type FaultKind, type TrialPlan, type WorkerEvent, type WorkerPlan } from './faults.js';
import { storeOps, type RunHistory } from './history.js';
import { startCodeforcesTap, startDynamoRecorder } from './taps.js';
import { startFaultyProxy, takeInjected, workerFaultRandom } from './proxies.js';
import { runSources, soonContests, type SourcesResult } from './sources.js';
import { startSourceStandins } from '../../local/source-standins.js';
import { runWorker, type WorkerControl } from './worker.js';
import { startStarvationProbe } from '../support/starvation-probe.mjs';
import { slowLeaseAnswers, starvationOfRun, stallsOfSamples } from './starvation.js';
import { gatesOf, scanAll } from '../support/contests.js';
import { codeforcesId } from '../../lambda/sources/codeforces/source.js';

export interface ChaosEnvironment {
  /** DynamoDB Local endpoint. */
  dynamoEndpoint: string;
  /** `<bundleDir>/index.mjs` of the synthesized function. */
  bundleEntry: string;
  /** `<bundleDir>/index.mjs` of the synthesized reminder delivery function (absent: no delivery part). */
  deliveryEntry?: string;
  template: CfnTemplate;
  client: DynamoDBClient;
  /** `<bundleDir>/index.mjs` of the other source jobs' functions, by platform (sources.ts; absent: Codeforces' alone). */
  sourceEntries?: Readonly<Record<string, string>>;
}

export interface TrialResult {
  seed: number;
  plan: TrialPlan;
  violations: Violation[];
  /** What the harness's starvation kept from being judged (checker.ts, starvation.ts): the harness's, not the product's. */
  starved: Violation[];
  /** Sync workers whose run the harness starved, whatever its outcome (a fault planned for one may not have been reached). */
  starvedWorkers: number[];
  faults: Partial<Record<FaultKind, number>>;
  outcomes: Record<string, number>;
  /** AWS faults the proxies injected, by kind and operation. */
  awsFaults: Partial<Record<ProxyFault, Record<string, number>>>;
  /** Contention retries the runs logged, by operation (acquire, renew, release, commit). */
  contentionRetries: Record<string, number>;
  /** Contenders that skipped `lease-held` because contention outlasted their acquire's budget. */
  contentionSkips: number;
  invocations: number;
  durationMs: number;
  /** How long the faults phase and the quiet phase took. */
  phasesMs: { faults: number; quiet: number };
  /** The reminder delivery part, if the trial had one. */
  delivery?: DeliveryFigures;
  /** The other source jobs' part (sources.ts), by platform, if the trial had one. */
  sources?: SourcesResult['byPlatform'];
}

export interface DeliveryFigures {
  invocations: number;
  outcomes: Record<string, number>;
  /** Claims in committed transactions (each with its event). */
  claims: number;
  /** ReminderDue events in the outbox at the end, and by their contest's platform. */
  events: number;
  eventsByPlatform: Record<string, number>;
  /** Distinct reminders sent, and those sent at more than one start (the syncs moved them). */
  reminders: number;
  resent: number;
  /** Events committed while the faults phase lasted. */
  duringFaults: number;
  /** Claims refused (the row changed or was claimed meanwhile) and rows deferred, by the runs' counts. */
  lost: number;
  deferred: number;
  /** The app's sets and cancels through the write path that landed (judged per intent). */
  appWrites: number;
}
/**
 * Attempts the quiet phase gives each interval (and the final sync, and delivery's final pass), as
 * Lambda's retries would. An attempt that failed because the harness starved it (starvation.ts)
 * does not count; the whole quiet phase tries at most STARVED_ATTEMPTS such attempts more, and
 * what it could not get done once they are spent is the harness's verdict, not the product's.
 */
const QUIET_ATTEMPTS = 8;
const STARVED_ATTEMPTS = 16;
/** Reminders of the large-commit fault (dataset.ts, LARGE_COMMIT_ID), and how long the proxy holds each of the syncs' reminder transactions then. */
const LARGE_COMMIT_REMINDERS = 300;
const LARGE_COMMIT_HOLD_MS = { min: 150, max: 350 };
/** The app's actions at random moments of the faults phase, and the chance that a sync's transaction sets one off as it commits. */
const APP_ACTIONS = 10;
const APP_DURING_COMMIT = 0.25;

/** The app's users (their ids mark the app's rows, which the delivery checker judges per intent). */
export const APP_USER_PREFIX = 'app-';

/**
 * One action of the app through the write path, on one of its users' reminders of a contest
 * due soon (Codeforces' three, the other platforms' soon one each): set (a lead time that makes it
 * due within a minute, or already due),
 * change the lead, or cancel. A refusal (the contest started, a conflict) is the app's to handle.
 */
async function appAction(
  app: ReminderClient,
  doc: DynamoDBDocumentClient,
  contests: string,
  soonIds: readonly string[],
  random: Random,
  count: (kind: FaultKind) => void,
): Promise<void> {
  const contestId = random.pick(soonIds);
  const userId = `${APP_USER_PREFIX}${random.int(0, 3)}`;
  try {
    if (random.chance(0.25)) {
      await app.cancelReminder({ contestId, userId });
      count('app-cancel');
      return;
    }
    const contest = (await doc.send(new GetCommand({ TableName: contests, Key: { contestId }, ConsistentRead: true }))).Item;
    const start = Number(contest?.startTimeSeconds);
    if (!Number.isFinite(start)) return;
    const minutesBefore = Math.max(0, Math.floor((start - Date.now() / 1000) / 60) + random.int(-1, 1));
    await app.setReminder({ contestId, userId, minutesBefore });
    count('app-set');
  } catch (error) {
    if (!(error instanceof ReminderError)) throw error;
    count('app-refused');
  }
}
/**
 * Lambda's remaining time given to each invocation: short, so that retries end within a trial, yet
 * above the function's minimum (its stop margin, one DynamoDB call with every SDK retry ≈ 13.6 s,
 * plus one renewal period), which the function refuses below as a configuration error.
 */
const INVOCATION_TIMEOUT_MS = 30_000;
/**
 * The same in a contention-only trial, whose rule says no run fails: its time must hold the work
 * under contention, not only its retry budgets. An AtCoder sync's first reply (a 2.5–5 s slow
 * reply, then 16 bucket Queries for each of its 8 new contests, a fifth of them refused and retried
 * with the SDK's backoff) took 14 s of the 16.4 s that 30 s leave before the stop margin, and once
 * more than that (`RunDeadlineError`). Half of the deployed 120 s.
 */
const CONTENTION_ONLY_INVOCATION_TIMEOUT_MS = 60_000;

function reply(fault: CodeforcesFault): StandinReply | undefined {
  switch (fault.kind) {
    case 'ok':
      return undefined;
    case 'slow':
      return { delayMs: fault.delayMs };
    case 'failed':
      return { status: 400, body: { status: 'FAILED', comment: 'contest.list: Internal error' } };
    case 'unavailable':
      return { status: 503, body: 'Service Temporarily Unavailable' };
    case 'html':
      return { status: 403, body: '<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>challenge</body></html>' };
  }
}

const FAULT_OF_REPLY: Record<CodeforcesFault['kind'], FaultKind | undefined> = {
  ok: undefined,
  slow: 'codeforces-slow',
  failed: 'codeforces-failed',
  unavailable: 'codeforces-503',
  html: 'codeforces-html',
};

async function seedTables(doc: DynamoDBDocumentClient, names: TableNames, seed: ReturnType<typeof seedRows>): Promise<void> {
  const put = async (table: string, items: object[]) => {
    for (let i = 0; i < items.length; i += 25) {
      await doc.send(
        new BatchWriteCommand({ RequestItems: { [table]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }),
      );
    }
  };
  // The contests as the sync leaves them: with their bucket gates.
  await put(names.contests, [...seed.contests, ...seed.contests.flatMap(gatesOf), ...seed.clocks]);
  await put(names.reminders, seed.reminders);
}

/**
 * The delivery function's environment as the template sets it, its table references resolved to
 * the trial's tables; the lease is the trial's (short, like the syncs').
 */
export function deliveryEnvironment(template: CfnTemplate, names: TableNames, leaseSeconds: number): Record<string, string> {
  const variables = (findDeliveryFunction(template).resource.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
  const byLogicalId = new Map(tableDefinitionsFromTemplate(template).map((d) => [d.logicalId, names[d.role]]));
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(variables)) {
    if (typeof value === 'string') env[name] = value;
    else {
      const ref = (value as { Ref?: unknown }).Ref;
      const local = typeof ref === 'string' ? byLogicalId.get(ref) : undefined;
      if (local === undefined)
        throw new Error(`delivery function environment ${name} is neither text nor a { Ref } to a table: ${JSON.stringify(value)}`);
      env[name] = local;
    }
  }
  return { ...env, LEASE_DURATION_SECONDS: String(leaseSeconds), POWERTOOLS_LOG_LEVEL: 'DEBUG' };
}

/** Events by their contest's platform (the qualified id's prefix). */
function countPlatforms(events: readonly { contestId: string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { contestId } of events) {
    const platform = contestId.split(':')[0] ?? '?';
    counts[platform] = (counts[platform] ?? 0) + 1;
  }
  return counts;
}

export async function runTrial(
  env: ChaosEnvironment,
  seed: number,
  options: {
    workers: number;
    /** Inject AWS faults (conflicts, throttling, 500s, dropped connections) through the proxies. */
    aws?: boolean;
    /** Adjusts the seeded plan (targeted scenarios). */
    adjust?: (plan: TrialPlan) => TrialPlan;
    /** Delivery workers in the faults phase (needs `env.deliveryEntry`; default 6, 0: no delivery part). */
    deliveryWorkers?: number;
    /** The app writes reminders through the write path beside them (default: with the delivery part). */
    app?: boolean;
    /** The large-commit fault (default: drawn from the seed, two trials in five). */
    largeCommit?: boolean;
    /** The other source jobs run beside Codeforces' (default: every one with an entry in `env.sourceEntries`). */
    sources?: readonly string[];
  },
): Promise<TrialResult> {
  const startedAt = Date.now();
  const harnessProbe = startStarvationProbe();
  const deliveryWorkers = env.deliveryEntry === undefined ? 0 : (options.deliveryWorkers ?? 6);
  const seeded = planTrial(seed, { workers: options.workers, baseTimeMs: startedAt, aws: options.aws === true, deliveryWorkers });
  const plan = options.adjust?.(seeded) ?? seeded;
  const leaseMs = plan.leaseSeconds * 1000;
  // A trial whose only fault is contention has neither (its rule: contention alone never fails a run).
  const contentionOnly = plan.aws?.contentionOnly === true;
  const invocationTimeoutMs = contentionOnly ? CONTENTION_ONLY_INVOCATION_TIMEOUT_MS : INVOCATION_TIMEOUT_MS;
  const largeCommit = !contentionOnly && (options.largeCommit ?? new Random(seed ^ 0x1a7e).chance(0.4));
  // The other sources' jobs beside this one (sources.ts): their stand-ins serve the fixtures shifted
  // to the trial's start, and their soon contests are seeded as their sources list them there.
  const platforms = (options.sources ?? Object.keys(env.sourceEntries ?? {})).filter((p) => env.sourceEntries?.[p] !== undefined);
  const standins = platforms.length === 0 ? undefined : await startSourceStandins({ anchorMs: startedAt });
  const dataset: Dataset = {
    baseSeconds: Math.floor(startedAt / 1000),
    ...(largeCommit ? { largeCommit: LARGE_COMMIT_REMINDERS } : {}),
    ...(standins !== undefined ? { others: await soonContests(standins, platforms) } : {}),
  };
  const soonIds = [...SOON_IDS.map(codeforcesId), ...(dataset.others ?? []).map((contest) => contest.contestId)];
  const faults: Partial<Record<FaultKind, number>> = {};
  const count = (kind: FaultKind, n = 1): void => {
    faults[kind] = (faults[kind] ?? 0) + n;
  };
  if (plan.leaseSeconds === 2) count('short-lease');
  if (plan.aws?.contentionOnly === true) count('contention-only-trial');
  if (largeCommit) count('large-commit');
  const awsFaults: Partial<Record<ProxyFault, Record<string, number>>> = {};
  const contentionRetries: Record<string, number> = {};
  let contentionSkips = 0;

  const doc = DynamoDBDocumentClient.from(env.client, { marshallOptions: { removeUndefinedValues: true } });
  const names = await createTablesFromTemplate(env.client, env.template, `chaos-${seed}-${randomBytes(2).toString('hex')}`);
  const seedData = seedRows(dataset, plan.delivery?.clockAgeSeconds);
  await seedTables(doc, names, seedData);
  const delivery =
    plan.delivery !== undefined && env.deliveryEntry !== undefined ? { plan: plan.delivery, entry: env.deliveryEntry } : undefined;
  const deliveryLease = deliveryLeaseKey(0);
  if (delivery !== undefined && names.outbox === undefined)
    throw new Error('the template has no outbox table: the delivery part needs one');

  let version = 1;
  let faultsOn = true;
  let codeforcesIndex = 0;
  const standin = await startCodeforcesStandin({ contests: contestList(dataset, version) });
  const tap = await startCodeforcesTap(standin.baseUrl, () => {
    version += 1;
    standin.setContests(contestList(dataset, version));
    if (!faultsOn) return;
    const fault = plan.codeforces[codeforcesIndex++];
    if (fault === undefined) return;
    const planned = reply(fault);
    if (planned !== undefined) standin.enqueue(planned);
    const kind = FAULT_OF_REPLY[fault.kind];
    if (kind !== undefined) count(kind);
  });
  const recorder = await startDynamoRecorder(env.dynamoEndpoint);
  // The delivery workers' own recorder: the syncs' history stays theirs alone.
  const deliveryRecorder = await startDynamoRecorder(env.dynamoEndpoint);
  // The app's own recorder: its sets and cancels through the write path, on the wire.
  const appRecorder = await startDynamoRecorder(env.dynamoEndpoint);
  const appClient = localDynamoClient(appRecorder.endpoint);
  const appDoc = DynamoDBDocumentClient.from(appClient, { marshallOptions: { removeUndefinedValues: true } });
  const withApp = (options.app ?? true) && delivery !== undefined && !contentionOnly;
  const app = createReminderClient({ dynamo: appDoc, tables: { contests: names.contests, reminders: names.reminders } });
  const appRandom = new Random(seed ^ 0x0a99_1e55);
  const appPending: Promise<void>[] = [];
  const act = () => {
    appPending.push(appAction(app, appDoc, names.contests, soonIds, appRandom, count));
  };
  // One set of transaction locks for every worker's proxy: they stand in front of one DynamoDB.
  const locks = transactionLocks({
    [names.contests]: ['contestId'],
    [names.reminders]: ['contestKey', 'userId'],
    [names.coordination]: ['pk'],
    ...(names.outbox !== undefined ? { [names.outbox]: ['pk'] } : {}),
  });
  const deliveryEnv = delivery !== undefined ? deliveryEnvironment(env.template, names, plan.leaseSeconds) : {};
  const holdRandom = new Random(seed ^ 0x3c6ef372);
  const proxies: DynamoProxy[] = [];
  const delayRandom = new Random(seed ^ 0x5bd1e995);
  let phaseStart = Date.now();
  /** When the last delayed DynamoDB request will have been forwarded. */
  let drainAtMs = 0;

  const runs: RunHistory[] = [];
  const deliveryRuns: RunHistory[] = [];
  const outcomes: Record<string, number> = {};
  const deliveryOutcomes: Record<string, number> = {};
  const deliveryCounts = { lost: 0, deferred: 0 };
  const violations: Violation[] = [];
  const starved: Violation[] = [];
  const contenders: Promise<unknown>[] = [];
  let nextId = 0;
  const phasesMs = { faults: 0, quiet: 0 };
  let deliveryFigures: DeliveryFigures | undefined;
  let starvedWorkers: number[] = [];
  let quietStart = Number.POSITIVE_INFINITY;
  /** The rows delivery claimed in committed transactions so far, and when (a sync that lost its update to one failed by design). */
  const committedClaims = () =>
    (delivery !== undefined ? claimTransactions(deliveryRecorder.records, { ...names, outbox: names.outbox! }, deliveryLease) : [])
      .filter((txn) => txn.outcome === 'ok')
      .flatMap((txn) => txn.claims.map((claim) => ({ key: claim.key, repliedAtMs: txn.repliedAtMs })));
  let sourcesPart: Promise<SourcesResult> | undefined;
  let quietSources: (quiet: { finalSyncStarved: boolean }) => void = () => undefined;
  const sourcesQuiet = new Promise<{ finalSyncStarved: boolean }>((resolve) => (quietSources = resolve));
  let sourceFigures: SourcesResult['byPlatform'] | undefined;
  const invoke = async (
    event: WorkerEvent,
    worker: Pick<WorkerPlan, 'fault' | 'contenders'>,
    id = nextId++,
    job: 'sync' | 'delivery' = 'sync',
  ) => {
    let control: WorkerControl | undefined;
    let transactions = 0;
    const fault = worker.fault;
    // Each worker has its own delaying proxy, so a fault can follow its requests.
    const { proxy, awsHold } = await startFaultyProxy(job === 'sync' ? recorder.endpoint : deliveryRecorder.endpoint, {
      locks,
      plan,
      leaseKey: job === 'sync' ? LEASE_PK : deliveryLease,
      faultRandom: workerFaultRandom(seed, id),
      holdRandom,
      delayRandom,
      active: () => faultsOn,
      elapsedMs: () => Date.now() - phaseStart,
      count,
      delayedUntil: (atMs) => void (drainAtMs = Math.max(drainAtMs, atMs)),
      delayOf: (operation, delay) => {
        if (fault.kind !== 'stop-at-write' || operation !== 'TransactWriteItems' || ++transactions !== fault.nth) return delay;
        control?.stop(fault.forMs);
        return Math.max(delay, fault.holdMs);
      },
    });
    proxies.push(proxy);
    if (job === 'sync' && (largeCommit || withApp)) {
      proxy.setTransactionHold((request) => {
        const moves = ((request.body?.TransactItems as { Update?: { TableName?: string } }[] | undefined) ?? []).some(
          (action) => action.Update?.TableName === names.reminders,
        );
        // The app acts while a sync commits: its write lands between this transaction and the next.
        if (withApp && faultsOn && appRandom.chance(APP_DURING_COMMIT)) {
          count('app-during-commit');
          act();
        }
        const held = awsHold?.(request) ?? 0;
        if (!largeCommit || !moves || !faultsOn) return held;
        count('large-commit-hold');
        return Math.max(held, holdRandom.int(LARGE_COMMIT_HOLD_MS.min, LARGE_COMMIT_HOLD_MS.max));
      });
    }
    const done = await runWorker({
      id,
      bundleEntry: job === 'sync' ? env.bundleEntry : delivery!.entry,
      event,
      fault,
      timeoutMs: invocationTimeoutMs,
      onSpawn: (c) => {
        control = c;
      },
      onFault: () => {
        if (!faultsOn) return;
        for (const contender of worker.contenders) {
          contenders.push(
            sleep(contender.afterMs).then(() => invoke(contender.event, { fault: { kind: 'none' }, contenders: [] }, nextId++, job)),
          );
        }
      },
      env:
        job === 'delivery'
          ? { ...deliveryEnv, AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' }
          : {
              AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint,
              CONTESTS_TABLE_NAME: names.contests,
              REMINDERS_TABLE_NAME: names.reminders,
              COORDINATION_TABLE_NAME: names.coordination,
              CODEFORCES_API_URL: tap.baseUrlFor(id),
              LEASE_DURATION_SECONDS: String(plan.leaseSeconds),
              // A contest missing from a reply is deleted at once: the oracle (dataset.ts) is then the
              // last successful sync's reply alone, as before the grace period existed.
              MISSING_SYNCS_BEFORE_DELETE: '1',
              POWERTOOLS_LOG_LEVEL: 'DEBUG',
              AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
            },
    });
    (job === 'sync' ? runs : deliveryRuns).push(done.history);
    if (job === 'delivery') {
      const counts = done.result?.counts as { lost?: unknown; deferred?: unknown } | undefined;
      deliveryCounts.lost += typeof counts?.lost === 'number' ? counts.lost : 0;
      deliveryCounts.deferred += typeof counts?.deferred === 'number' ? counts.deferred : 0;
    }
    takeInjected(proxy, awsFaults, count);
    for (const [operation, n] of Object.entries(done.history.contentionRetries ?? {}))
      contentionRetries[operation] = (contentionRetries[operation] ?? 0) + n;
    if (done.history.summary?.reason === 'lease-held' && done.history.summary.detail !== undefined) contentionSkips += 1;
    if (done.sent.sigkill) count('sigkill');
    if (done.sent.sigstop) count('sigstop');
    const key =
      done.history.summary === undefined
        ? (done.signal ?? `exit ${done.exitCode}`)
        : `${done.history.summary.outcome}${done.history.summary.reason ? `:${done.history.summary.reason}` : ''}`;
    const tally = job === 'sync' ? outcomes : deliveryOutcomes;
    tally[key] = (tally[key] ?? 0) + 1;
    const who = job === 'sync' ? `worker ${id}` : `delivery worker ${id}`;
    if (done.hung) violations.push({ rule: 'hung-worker', message: `${who} did not finish within 90 s; stderr: ${done.stderrTail}` });
    if (done.history.summary === undefined && !done.sent.sigkill && !done.hung) {
      violations.push({
        rule: 'worker-crashed',
        message: `${who} ended (${done.signal ?? done.exitCode}) without a result; stderr: ${done.stderrTail}`,
      });
    }
    return done;
  };

  try {
    // --- Faults phase --------------------------------------------------------------------------
    nextId = plan.workers.length + (delivery?.plan.workers.length ?? 0);
    phaseStart = Date.now();
    // The other sources' jobs, beside this one: their own faults, quiet phase and checks (sources.ts).
    sourcesPart =
      standins === undefined
        ? undefined
        : runSources({
            seed,
            platforms,
            entries: env.sourceEntries!,
            template: env.template,
            names,
            doc,
            dynamoEndpoint: env.dynamoEndpoint,
            standins,
            plan,
            locks,
            leaseSeconds: plan.leaseSeconds,
            intervals: plan.intervals,
            timeoutMs: invocationTimeoutMs,
            harnessSamples: () => harnessProbe.samples(),
            onQuiet: (quiet) => quietSources(quiet),
            claims: () => committedClaims(),
          });
    const faultsSpanMs = Math.max(0, ...plan.workers.map((w) => w.startAtMs)) + 3_000;
    await Promise.all([
      ...(withApp
        ? Array.from({ length: APP_ACTIONS }, async () => {
            await sleep(appRandom.int(0, faultsSpanMs));
            act();
          })
        : []),
      ...plan.workers.map(async (worker) => {
        await sleep(worker.startAtMs);
        await invoke(worker.event, worker, worker.id);
      }),
      ...(delivery?.plan.workers ?? []).map(async (worker) => {
        await sleep(worker.startAtMs);
        await invoke(worker.event, worker, plan.workers.length + worker.id, 'delivery');
      }),
    ]);
    while (contenders.length > 0) await Promise.all(contenders.splice(0));
    while (appPending.length > 0) await Promise.all(appPending.splice(0));

    phasesMs.faults = Date.now() - phaseStart;
    quietStart = Date.now();
    // --- Quiet phase: faults off, re-deliver until each interval succeeded, then one final sync --
    faultsOn = false;
    standin.clearQueue();
    standin.setDelay(0);
    /** Whether the harness starved a failed run (its figures against the test process's stalls and DynamoDB Local's late lease answers). */
    const starvedRun = (history: RunHistory, job: 'sync' | 'delivery'): boolean => {
      const ops = job === 'sync' ? storeOps(recorder.records, names) : storeOps(deliveryRecorder.records, names, deliveryLease);
      const harness = [...stallsOfSamples(harnessProbe.samples(), 'harness'), ...slowLeaseAnswers(ops)];
      return starvationOfRun(history, harness, leaseMs)?.starved === true;
    };
    let starvedAttempts = 0;
    /** Attempts until `done` says so: 'done', 'failed' (QUIET_ATTEMPTS fair attempts spent) or 'starved'. */
    const untilDone = async (
      attempt: () => Promise<{ history: RunHistory; done: boolean }>,
      job: 'sync' | 'delivery',
    ): Promise<'done' | 'failed' | 'starved'> => {
      for (let fair = 0; fair < QUIET_ATTEMPTS;) {
        const { history, done } = await attempt();
        if (done) return 'done';
        const skipped = history.summary?.outcome === 'skipped';
        if (skipped || !starvedRun(history, job)) fair += 1;
        else if (++starvedAttempts > STARVED_ATTEMPTS) return 'starved';
        // Lease still held by a killed or frozen run: wait for it to lapse, as a retry would.
        await sleep(skipped ? leaseMs / 2 : 200);
      }
      return 'failed';
    };
    const untilSucceeded = (event: WorkerEvent) =>
      untilDone(async () => {
        const { history } = await invoke(event, { fault: { kind: 'none' }, contenders: [] });
        const summary = history.summary;
        const done = summary?.outcome === 'succeeded' || (summary?.outcome === 'skipped' && summary.reason === 'already-done');
        return { history, done };
      }, 'sync');
    const starvedIntervals: string[] = [];
    for (const interval of plan.intervals) {
      if ((await untilSucceeded({ kind: 'schedule', interval })) === 'starved') starvedIntervals.push(interval);
    }
    const finalSync = await untilSucceeded({ kind: 'console' });
    if (finalSync !== 'done') {
      (finalSync === 'starved' ? starved : violations).push({
        rule: 'no-final-sync',
        message:
          finalSync === 'starved'
            ? `the final console sync did not succeed with faults off: the harness starved its failed attempts (${STARVED_ATTEMPTS} starved attempts in the quiet phase)`
            : `the final console sync did not succeed in ${QUIET_ATTEMPTS} attempts with faults off`,
      });
    }
    // The other sources' quiet phases end with their final syncs: delivery's last pass comes after
    // every platform's, as it comes after Codeforces' (their checks run meanwhile).
    const sourceFinalStarved =
      sourcesPart !== undefined &&
      (await Promise.race([sourcesQuiet, sourcesPart.then(() => ({ finalSyncStarved: false }))])).finalSyncStarved;
    // Delivery, faults off: console passes until one succeeds with nothing left for later.
    let deliveredUntilSeconds: number | undefined;
    if (delivery !== undefined) {
      const from = Math.floor(Date.now() / 1000);
      const pass = await untilDone(async () => {
        const { history, result } = await invoke({ kind: 'console' }, { fault: { kind: 'none' }, contenders: [] }, nextId++, 'delivery');
        const more = (result?.counts as { more?: unknown } | undefined)?.more === true;
        return { history, done: history.summary?.outcome === 'succeeded' && !more };
      }, 'delivery');
      // Nothing may be left due once a pass ran after the final sync put every row right; with the
      // final sync starved, rows it would have put right stay deferred: not the product's to answer for.
      if (pass === 'done' && (finalSync === 'starved' || sourceFinalStarved)) {
        starved.push({
          rule: 'delivery-lost',
          message: `not judged: the final sync${finalSync === 'starved' ? '' : ' of another source'}, which puts right the rows left due at a moved start or under a paused contest, was starved`,
        });
      } else if (pass === 'done') deliveredUntilSeconds = from;
      else {
        (pass === 'starved' ? starved : violations).push({
          rule: 'delivery-final-pass',
          message:
            pass === 'starved'
              ? `no delivery pass succeeded with nothing left with faults off: the harness starved its failed attempts (${STARVED_ATTEMPTS} starved attempts in the quiet phase)`
              : `no delivery pass succeeded with nothing left in ${QUIET_ATTEMPTS} attempts with faults off`,
        });
      }
    }

    phasesMs.quiet = Date.now() - quietStart;
    let sourcesDue: DueWrite[] = [];
    if (sourcesPart !== undefined) {
      const part = await sourcesPart;
      violations.push(...part.violations);
      starved.push(...part.starved);
      sourceFigures = part.byPlatform;
      sourcesDue = part.dueWrites;
      // Their faults count in the trial's, as Codeforces' and delivery's do.
      for (const [kind, n] of Object.entries(part.faults) as [FaultKind, number][]) count(kind, n);
      for (const [fault, byOperation] of Object.entries(part.awsFaults) as [ProxyFault, Record<string, number>][])
        for (const [operation, n] of Object.entries(byOperation))
          (awsFaults[fault] ??= {})[operation] = (awsFaults[fault]?.[operation] ?? 0) + n;
      for (const [operation, n] of Object.entries(part.contentionRetries))
        contentionRetries[operation] = (contentionRetries[operation] ?? 0) + n;
      contentionSkips += part.contentionSkips;
    }
    // --- Check (once every delayed request has reached DynamoDB and been answered) -------------
    if (drainAtMs + 500 > Date.now()) await sleep(drainAtMs + 500 - Date.now());
    const [contests, reminders, lease, outbox] = await Promise.all([
      scanAll(doc, names.contests),
      scanAll(doc, names.reminders),
      doc.send(new GetCommand({ TableName: names.coordination, Key: { pk: LEASE_PK }, ConsistentRead: true })),
      delivery !== undefined ? scanAll(doc, names.outbox!) : Promise.resolve([]),
    ]);
    const checkedAtMs = Date.now();
    const txns =
      delivery !== undefined ? claimTransactions(deliveryRecorder.records, { ...names, outbox: names.outbox! }, deliveryLease) : [];
    harnessProbe.stop();
    const syncStalls = [...stallsOfSamples(harnessProbe.samples(), 'harness'), ...slowLeaseAnswers(storeOps(recorder.records, names))];
    starvedWorkers = runs.filter((run) => starvationOfRun(run, syncStalls, leaseMs)?.starved === true).map((run) => run.worker);
    const judgement = judge(
      {
        leaseDurationMs: leaseMs,
        intervals: plan.intervals,
        runs,
        store: storeOps(recorder.records, names),
        codeforces: tap.records,
        contentionOnly: plan.aws?.contentionOnly === true,
        claims: committedClaims(),
        harnessStalls: stallsOfSamples(harnessProbe.samples(), 'harness'),
        starvedIntervals,
        finalSyncStarved: finalSync === 'starved',
        platform: 'codeforces',
      },
      {
        // Codeforces' items: the other sources' jobs write theirs beside it (judged in sources.ts).
        contests: contests.filter((item) => ownItem('codeforces', String(item.contestId))),
        // The app's rows are its own (judged per intent by the delivery checker), not the seeded
        // expectation's; the other platforms' are their jobs' (judged by the delivery checker too).
        reminders: reminders.filter(
          (row) => !String(row.userId).startsWith(APP_USER_PREFIX) && ownItem('codeforces', String(row.contestId)),
        ),
        ...(lease.Item !== undefined ? { lease: lease.Item } : {}),
        checkedAtMs,
      },
      (v) => expectedRows(dataset, v),
    );
    violations.push(...judgement.violations);
    starved.push(...judgement.starved);
    if (delivery !== undefined) {
      const events = outbox.filter((item) => item.detailType === 'ReminderDue').map(eventOf);
      violations.push(
        ...checkDelivery(
          {
            dueWrites: [
              ...seededDue(seedData.reminders),
              ...syncDueWrites(recorder.records, names),
              ...sourcesDue,
              ...claimDueWrites(txns),
              ...appDueWrites(appRecorder.records, names),
            ],
            claimTransactions: txns,
            leaseGrants: leaseGrants(deliveryRecorder.records, names, deliveryLease),
            appWrites: appWrites(appRecorder.records, names),
            ...(deliveredUntilSeconds !== undefined ? { deliveredUntilSeconds } : {}),
          },
          { outbox: events, reminders },
        ),
      );
      const claims = txns
        .filter((txn) => txn.outcome === 'ok')
        .flatMap((txn) => txn.claims.map((claim) => ({ ...claim, repliedAtMs: txn.repliedAtMs })));
      const startsByReminder = new Map<string, Set<number>>();
      for (const event of events)
        startsByReminder.set(event.key, (startsByReminder.get(event.key) ?? new Set()).add(event.startTimeSeconds));
      deliveryFigures = {
        invocations: deliveryRuns.length,
        outcomes: deliveryOutcomes,
        claims: claims.length,
        events: events.length,
        eventsByPlatform: countPlatforms(events),
        reminders: startsByReminder.size,
        resent: [...startsByReminder.values()].filter((starts) => starts.size > 1).length,
        duringFaults: claims.filter((claim) => claim.repliedAtMs < quietStart).length,
        ...deliveryCounts,
        appWrites: appWrites(appRecorder.records, names).filter((w) => w.outcome === 'ok').length,
      };
    }
  } finally {
    await sourcesPart?.catch(() => undefined);
    harnessProbe.stop();
    while (appPending.length > 0) await Promise.allSettled(appPending.splice(0));
    appClient.destroy();
    await Promise.all([
      tap.close(),
      standin.close(),
      standins?.close(),
      recorder.close(),
      deliveryRecorder.close(),
      appRecorder.close(),
      ...proxies.map((proxy) => proxy.close()),
    ]);
    await Promise.all(
      Object.values(names).map((TableName) => env.client.send(new DeleteTableCommand({ TableName })).catch(() => undefined)),
    );
  }
  return {
    seed,
    plan,
    violations,
    starved,
    starvedWorkers,
    faults,
    awsFaults,
    contentionRetries,
    contentionSkips,
    outcomes,
    invocations: runs.length,
    durationMs: Date.now() - startedAt,
    phasesMs,
    ...(deliveryFigures !== undefined ? { delivery: deliveryFigures } : {}),
    ...(sourceFigures !== undefined ? { sources: sourceFigures } : {}),
  };
}
