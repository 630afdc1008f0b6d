/**
 * The other source jobs of a chaos trial (docs/proof.md, "Every source's job"): AtCoder's,
 * CodeChef's and LeetCode's bundles, each invoked as the platform would (several at once for one
 * interval, retries, duplicates, console runs) beside the Codeforces sync and one another, each
 * against its platform's stand-in (local/source-standins.ts, the recorded fixtures) and through
 * its own DynamoDB recorder, so that each job's history is its own. Faults per source: signals
 * (SIGKILL, SIGSTOP, at a time or once holding the lease) and its upstream misbehaving (503,
 * challenge page, truncated body, slow replies; one source drawn down for the whole faults phase).
 * One source's faults never touch another's workers. Quiet phase per source, as for Codeforces:
 * every interval re-delivered until done, then one console sync. Each job is judged on its own
 * (checker.ts with the job's lease key and platform): fences, no overlap, no write after a later
 * fence, one success per interval, every interval done, only its own platform's items written.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { jobNames, type SourceJob } from '../../lambda/sources/job.js';
import { SOURCE_JOBS } from '../../lambda/sources/jobs.js';
import { functionEnv } from '../../local/local-events.js';
import { misbehave, type SourceStandin, type SourceStandinReply, type StandinPlatform } from '../../local/source-standins.js';
import type { ListedContest, Source } from '../../lambda/sources/source.js';
import type { SourceOptions } from '../../lambda/sources/settings.js';
import { atcoderSource } from '../../lambda/sources/atcoder/index.js';
import { codechefSource } from '../../lambda/sources/codechef/index.js';
import { leetcodeSource } from '../../lambda/sources/leetcode/index.js';
import { sourceFunctionId } from '../../local/sync-sources.js';
import type { TableNames } from '../../local/tables.js';
import { bundleDirOfFunction, type CfnTemplate } from '../../local/template.js';
import { join } from 'node:path';
import { judge, type Violation } from './checker.js';
import { Random, type FaultKind, type TrialPlan, type WorkerEvent, type WorkerFault } from './faults.js';
import { startFaultyProxy, takeInjected, workerFaultRandom } from './proxies.js';
import type { DynamoProxy, ProxyFault, TransactionLocks } from '../../local/dynamo-proxy.js';
import { storeOps, type RunHistory } from './history.js';
import { OTHER_SOON_IDS } from './dataset.js';
import { syncDueWrites, type DueWrite } from './delivery-history.js';
import { slowLeaseAnswers, starvationOfRun, stallsOfSamples } from './starvation.js';
import { startDynamoRecorder } from './taps.js';
import { runWorker } from './worker.js';
import type { StarvationSample } from '../support/starvation-probe.mjs';

/** The source jobs a trial runs beside Codeforces' (whose part is the runner's own). */
export const OTHER_SOURCE_JOBS: readonly SourceJob[] = SOURCE_JOBS.filter((job) => job.platform !== 'codeforces');

/** Each other source's bundle entry (`<bundleDir>/index.mjs`) in the synthesized output `outdir`. */
export function sourceEntriesOf(outdir: string, template: CfnTemplate): Record<string, string> {
  return Object.fromEntries(
    OTHER_SOURCE_JOBS.map((job) => [
      job.platform,
      join(bundleDirOfFunction(outdir, template, sourceFunctionId(template, job)), 'index.mjs'),
    ]),
  );
}

const SOURCES: Readonly<Record<StandinPlatform, (options: SourceOptions) => Source>> = {
  atcoder: atcoderSource,
  codechef: codechefSource,
  leetcode: leetcodeSource,
};

/**
 * Each platform's soon contest (dataset.ts, OTHER_SOON_IDS) as its source lists it from the
 * stand-in (its real client and mapping): what the trial seeds, so that the contest is the one its
 * job's syncs keep listing. Throws if a fixture no longer lists it.
 */
export async function soonContests(standins: SourceStandin, platforms: readonly string[]): Promise<ListedContest[]> {
  return Promise.all(
    platforms.map(async (platform) => {
      const source = SOURCES[platform as StandinPlatform]({ baseUrl: standins.baseUrls[platform as StandinPlatform] });
      const reply = await source.fetchReply({ signal: AbortSignal.timeout(20_000), deadline: Date.now() + 20_000 });
      const contest = reply.contests.find((c) => c.contestId === OTHER_SOON_IDS[platform]);
      if (contest === undefined) throw new Error(`${platform}'s stand-in does not list ${OTHER_SOON_IDS[platform]}: the trial seeds it`);
      return contest;
    }),
  );
}

/** Workers per source in the faults phase, and the intervals (the trial's last ones) they are delivered. */
const WORKERS_PER_SOURCE = 3;
const SOURCE_INTERVALS = 1;
const QUIET_ATTEMPTS = 8;
const STARVED_ATTEMPTS = 8;

export interface SourceWorkerPlan {
  id: number;
  event: WorkerEvent;
  startAtMs: number;
  fault: WorkerFault;
}

export interface SourcePlan {
  platform: StandinPlatform;
  workers: SourceWorkerPlan[];
  /** One-shot replies of its stand-in, in order, while faults are on. */
  replies: SourceStandinReply[];
  /** Every reply's delay while faults are on (a slow platform). */
  delayMs: number;
  /** Every reply fails while faults are on (a platform down). */
  down: boolean;
}

/**
 * Each source's plan, from the trial's seed: two workers for one interval at once (a retry and
 * its original), a duplicate of it or a console run, each with a signal fault drawn as the
 * Codeforces workers' are, and one source down, one slow. In a contention-only trial
 * (`contentionOnly`), as for Codeforces (faults.ts, `contentionOnlyPlan`): the same workers without
 * signals, every source answering, half its replies slow (2.5–5 s, so that runs last past a
 * renewal, within the client's 10 s attempt), none down or slow on every reply.
 */
export function planSources(
  seed: number,
  intervals: readonly string[],
  leaseMs: number,
  platforms: readonly string[],
  options: { contentionOnly?: boolean } = {},
): SourcePlan[] {
  const drawn = planFaultySources(seed, intervals, leaseMs, platforms);
  if (options.contentionOnly !== true) return drawn;
  const random = new Random((seed ^ 0x68e3_1da5) >>> 0);
  return drawn.map((plan) => ({
    ...plan,
    workers: plan.workers.map((worker) => ({ ...worker, fault: { kind: 'none' } })),
    replies: plan.replies.map(() => (random.chance(0.5) ? misbehave.slow(random.int(2_500, 5_000)) : {})),
    delayMs: 0,
    down: false,
  }));
}

function planFaultySources(seed: number, intervals: readonly string[], leaseMs: number, platforms: readonly string[]): SourcePlan[] {
  const random = new Random((seed ^ 0x50c3_e5a1) >>> 0);
  const chosen = intervals.slice(-SOURCE_INTERVALS);
  const down = random.int(0, platforms.length - 1);
  const slow = (down + 1) % platforms.length;
  return platforms.map((platform, p) => {
    const interval = random.pick(chosen);
    const together = random.int(0, 2_000);
    const workers: SourceWorkerPlan[] = Array.from({ length: WORKERS_PER_SOURCE }, (_, i) => {
      const event: WorkerEvent = i === 2 && random.chance(0.7) ? { kind: 'console' } : { kind: 'schedule', interval };
      const roll = random.float();
      const fault: WorkerFault =
        roll < 0.2
          ? { kind: 'kill-holder', delayMs: random.int(0, leaseMs) }
          : roll < 0.4
            ? { kind: 'stop-holder', delayMs: random.int(0, Math.round(leaseMs / 2)), forMs: Math.round(leaseMs * (1.2 + random.float())) }
            : roll < 0.5
              ? { kind: 'kill', afterMs: random.int(200, 1_500) }
              : { kind: 'none' };
      return { id: p * WORKERS_PER_SOURCE + i, event, startAtMs: i < 2 ? together : random.int(0, 3_000), fault };
    });
    const replies = Array.from({ length: 4 }, () =>
      random.pick([
        {},
        misbehave.status(503),
        misbehave.challenge(),
        misbehave.truncated(0.4),
        misbehave.slow(random.int(200, Math.round(leaseMs * 1.5))),
      ]),
    );
    return {
      platform: platform as StandinPlatform,
      workers,
      replies,
      delayMs: p === slow ? random.int(300, leaseMs) : 0,
      down: p === down && platforms.length > 1,
    };
  });
}

export interface SourceFigures {
  invocations: number;
  outcomes: Record<string, number>;
  requests: number;
  /** AWS faults its workers' proxies injected (every kind), and transactions they held. */
  awsFaults: number;
}

export interface SourcesResult {
  violations: Violation[];
  starved: Violation[];
  /** Per platform: invocations, outcomes, upstream requests, the DynamoDB faults its proxies injected. */
  byPlatform: Record<string, SourceFigures>;
  /** Every source's faults, AWS faults by kind and operation, contention retries and skips (added to the trial's). */
  faults: Partial<Record<FaultKind, number>>;
  awsFaults: Partial<Record<ProxyFault, Record<string, number>>>;
  contentionRetries: Record<string, number>;
  contentionSkips: number;
  /** The jobs' reminder updates that made a row due or not (for the delivery checker: delivery-history.ts). */
  dueWrites: DueWrite[];
}

/**
 * Runs the other sources' part of a trial: its faults phase (each source's faults off once its
 * workers ended), quiet phase, check. `harnessSamples` is the test process's starvation probe.
 */
export async function runSources(options: {
  seed: number;
  platforms: readonly string[];
  entries: Readonly<Record<string, string>>;
  template: CfnTemplate;
  names: TableNames;
  doc: DynamoDBDocumentClient;
  dynamoEndpoint: string;
  /** The trial's AWS faults and DynamoDB delay windows, given to every source's workers through their own proxies. */
  plan: Pick<TrialPlan, 'aws' | 'dynamoDelays'>;
  /** The transactions' item locks every worker's proxy shares (one DynamoDB). */
  locks: TransactionLocks;
  /** The platforms' stand-ins (the runner's: the trial's seed was read from them). */
  standins: SourceStandin;
  leaseSeconds: number;
  intervals: readonly string[];
  timeoutMs: number;
  harnessSamples: () => StarvationSample[];
  /**
   * The reminder rows delivery claimed in committed transactions so far (checker.ts, `claims`): in a
   * contention-only trial, a sync that lost its reminder update to one of them failed by design.
   */
  claims?: () => readonly { key: string; repliedAtMs: number }[];
  /** Called once every source's quiet phase ended (its final sync done, or given up), before the checks. */
  onQuiet?: (quiet: { finalSyncStarved: boolean }) => void;
}): Promise<SourcesResult> {
  const leaseMs = options.leaseSeconds * 1000;
  const jobs = OTHER_SOURCE_JOBS.filter((job) => options.platforms.includes(job.platform));
  const plans = planSources(
    options.seed,
    options.intervals,
    leaseMs,
    jobs.map((job) => job.platform),
    { contentionOnly: options.plan.aws?.contentionOnly === true },
  );
  const standins = options.standins;
  const recorders = await Promise.all(jobs.map(() => startDynamoRecorder(options.dynamoEndpoint)));
  const result: SourcesResult = {
    violations: [],
    starved: [],
    byPlatform: {},
    dueWrites: [],
    faults: {},
    awsFaults: {},
    contentionRetries: {},
    contentionSkips: 0,
  };
  const proxies: DynamoProxy[] = [];
  const phaseStart = Date.now();
  try {
    for (const plan of plans) {
      standins.setDelay(plan.platform, plan.delayMs);
      standins.enqueue(plan.platform, ...(plan.down ? Array.from({ length: 40 }, () => misbehave.status(503)) : plan.replies));
    }
    let nextId = 1_000;
    const perJob = await Promise.all(
      jobs.map(async (job, j) => {
        const plan = plans[j]!;
        const recorder = recorders[j]!;
        const leaseKey = jobNames(job).leaseKey;
        const figures: SourceFigures = { invocations: 0, outcomes: {}, requests: 0, awsFaults: 0 };
        result.byPlatform[job.platform] = figures;
        const count = (kind: FaultKind, n = 1): void => {
          result.faults[kind] = (result.faults[kind] ?? 0) + n;
          if (kind.startsWith('aws-')) figures.awsFaults += n;
        };
        let faultsOn = true;
        let drainAtMs = 0;
        const holdRandom = new Random((options.seed ^ Math.imul(j + 1, 0x3c6ef372)) >>> 0);
        const delayRandom = new Random((options.seed ^ Math.imul(j + 1, 0x5bd1e995)) >>> 0);
        const env = {
          ...functionEnv(options.template, sourceFunctionId(options.template, job), options.names),
          [job.baseUrlVariable]: standins.baseUrls[plan.platform],
          LEASE_DURATION_SECONDS: String(options.leaseSeconds),
          POWERTOOLS_LOG_LEVEL: 'DEBUG',
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        };
        const runs: RunHistory[] = [];
        const invoke = async (event: WorkerEvent, fault: WorkerFault, id = nextId++) => {
          // Its own proxy, as every worker of the trial has: the AWS faults and delays while this source's faults last.
          const { proxy } = await startFaultyProxy(recorder.endpoint, {
            locks: options.locks,
            plan: options.plan,
            leaseKey,
            faultRandom: workerFaultRandom(options.seed, id),
            holdRandom,
            delayRandom,
            active: () => faultsOn,
            elapsedMs: () => Date.now() - phaseStart,
            count,
            delayedUntil: (atMs) => void (drainAtMs = Math.max(drainAtMs, atMs)),
          });
          proxies.push(proxy);
          const done = await runWorker({
            id,
            bundleEntry: options.entries[job.platform]!,
            event,
            fault,
            timeoutMs: options.timeoutMs,
            env: { ...env, AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint },
          });
          takeInjected(proxy, result.awsFaults, count);
          for (const [operation, n] of Object.entries(done.history.contentionRetries ?? {}))
            result.contentionRetries[operation] = (result.contentionRetries[operation] ?? 0) + n;
          if (done.history.summary?.reason === 'lease-held' && done.history.summary.detail !== undefined) result.contentionSkips += 1;
          runs.push(done.history);
          figures.invocations += 1;
          const s = done.history.summary;
          const key = s === undefined ? (done.signal ?? `exit ${done.exitCode}`) : `${s.outcome}${s.reason ? `:${s.reason}` : ''}`;
          figures.outcomes[key] = (figures.outcomes[key] ?? 0) + 1;
          if (done.hung)
            result.violations.push({ rule: 'hung-worker', message: `[${job.platform}] worker ${id} did not finish within 90 s` });
          if (s === undefined && !done.sent.sigkill && !done.hung)
            result.violations.push({
              rule: 'worker-crashed',
              message: `[${job.platform}] worker ${id} ended (${done.signal ?? done.exitCode}) without a result; stderr: ${done.stderrTail}`,
            });
          return done.history;
        };
        // Faults phase: the planned workers, staggered, some at once.
        await Promise.all(
          plan.workers.map(async (worker) => {
            await sleep(worker.startAtMs);
            await invoke(worker.event, worker.fault, j * 100 + worker.id);
          }),
        );
        // This source's faults off (the others' are theirs).
        faultsOn = false;
        standins.clearQueue(plan.platform);
        standins.setDelay(plan.platform, 0);
        const starvedRun = (history: RunHistory): boolean => {
          const harness = [
            ...stallsOfSamples(options.harnessSamples(), 'harness'),
            ...slowLeaseAnswers(storeOps(recorder.records, options.names, leaseKey)),
          ];
          return starvationOfRun(history, harness, leaseMs)?.starved === true;
        };
        let starvedAttempts = 0;
        /** Whether a run succeeded with this source's faults off: its reply then stands for every reminder of its contests. */
        let succeededQuiet = false;
        const untilSucceeded = async (event: WorkerEvent): Promise<'done' | 'failed' | 'starved'> => {
          for (let fair = 0; fair < QUIET_ATTEMPTS;) {
            const history = await invoke(event, { kind: 'none' });
            const s = history.summary;
            if (s?.outcome === 'succeeded') succeededQuiet = true;
            if (s?.outcome === 'succeeded' || (s?.outcome === 'skipped' && s.reason === 'already-done')) return 'done';
            const skipped = s?.outcome === 'skipped';
            if (skipped || !starvedRun(history)) fair += 1;
            else if (++starvedAttempts > STARVED_ATTEMPTS) return 'starved';
            await sleep(skipped ? leaseMs / 2 : 200);
          }
          return 'failed';
        };
        const intervals = [...new Set(plan.workers.flatMap((w) => (w.event.kind === 'schedule' ? [w.event.interval] : [])))];
        const starvedIntervals: string[] = [];
        for (const interval of intervals)
          if ((await untilSucceeded({ kind: 'schedule', interval })) === 'starved') starvedIntervals.push(interval);
        // A console run last, unless a run of the quiet phase succeeded (the short run's budget: every
        // process counts): a run that failed in the faults phase may have paused reminders due soon
        // (doubt), and only a success after it brings them back for delivery's last pass.
        const finalSync = succeededQuiet ? 'done' : await untilSucceeded({ kind: 'console' });
        if (finalSync !== 'done')
          (finalSync === 'starved' ? result.starved : result.violations).push({
            rule: 'no-final-sync',
            message: `[${job.platform}] the final console sync did not succeed with faults off (${finalSync})`,
          });
        // A request delayed in the faults phase (a killed worker's) reaches DynamoDB before the checks.
        if (drainAtMs + 500 > Date.now()) await sleep(drainAtMs + 500 - Date.now());
        return { job, runs, recorder, leaseKey, intervals, starvedIntervals, finalSyncStarved: finalSync === 'starved' };
      }),
    );
    // Every source's final sync is done: delivery's last pass may run meanwhile.
    options.onQuiet?.({ finalSyncStarved: perJob.some((done) => done.finalSyncStarved) });
    // A holder killed in the faults phase leaves its lease to expire (the quiet phase may not need it): read it after.
    await sleep(leaseMs + 200);
    for (const { job, runs, recorder, leaseKey, intervals, starvedIntervals, finalSyncStarved } of perJob) {
      const lease = await options.doc.send(
        new GetCommand({ TableName: options.names.coordination, Key: { pk: leaseKey }, ConsistentRead: true }),
      );
      const store = storeOps(recorder.records, options.names, leaseKey);
      const judgement = judge(
        {
          leaseDurationMs: leaseMs,
          intervals,
          runs,
          store,
          codeforces: [],
          contentionOnly: options.plan.aws?.contentionOnly === true,
          claims: options.claims?.() ?? [],
          harnessStalls: stallsOfSamples(options.harnessSamples(), 'harness'),
          starvedIntervals,
          finalSyncStarved,
          platform: job.platform,
        },
        { contests: [], reminders: [], ...(lease.Item !== undefined ? { lease: lease.Item } : {}), checkedAtMs: Date.now() },
        undefined,
      );
      const tag = (v: Violation): Violation => ({ rule: v.rule, message: `[${job.platform}] ${v.message}` });
      result.violations.push(...judgement.violations.map(tag));
      result.starved.push(...judgement.starved.map(tag));
      result.byPlatform[job.platform]!.requests = standins.requests.filter((r) => r.platform === job.platform).length;
      result.dueWrites.push(...syncDueWrites(recorder.records, options.names));
    }
  } finally {
    await Promise.all([...recorders.map((r) => r.close()), ...proxies.map((p) => p.close())]);
  }
  return result;
}
