/**
 * Seeded randomness and the fault plan of one chaos trial. Everything random about a trial is
 * decided here, up front, from its seed: which events the workers deliver and when, which worker
 * gets SIGKILL or SIGSTOP, which Codeforces replies fail or crawl, when DynamoDB is slow. Replaying
 * a seed replays the plan exactly (process timing on the machine still varies).
 */

/** mulberry32: small, fast, good enough for test plans. Returns floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed of trial `index` of a run: a hash of both, so trials are independent. */
export function trialSeed(runSeed: number, index: number): number {
  const mix = (x: number): number => {
    let h = x >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
    return (h ^ (h >>> 16)) >>> 0;
  };
  return mix((mix(runSeed ^ 0x9e3779b9) + Math.imul(index + 1, 0x27d4eb2f)) >>> 0);
}

export class Random {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = prng(seed);
  }
  float(): number {
    return this.next();
  }
  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }
}

export type WorkerFault =
  | { kind: 'none' }
  /** SIGKILL `afterMs` after the process started. */
  | { kind: 'kill'; afterMs: number }
  /** SIGKILL `delayMs` after the worker logged `lease acquired` (if it does). */
  | { kind: 'kill-holder'; delayMs: number }
  /** SIGSTOP `delayMs` after `lease acquired`, SIGCONT `forMs` later (beyond the lease). */
  | { kind: 'stop-holder'; delayMs: number; forMs: number }
  /** SIGSTOP `afterMs` after start, whatever it is doing, SIGCONT `forMs` later. */
  | { kind: 'stop'; afterMs: number; forMs: number }
  /**
   * SIGSTOP the moment the worker's `nth` TransactWriteItems reaches its DynamoDB proxy (1: usually
   * the data, 2: usually the release), hold that request `holdMs` (past the lease), SIGCONT `forMs` later.
   */
  | { kind: 'stop-at-write'; nth: number; holdMs: number; forMs: number };

export type WorkerEvent = { kind: 'schedule'; interval: string } | { kind: 'console' };

export interface WorkerPlan {
  id: number;
  event: WorkerEvent;
  /** Start, in ms after the faults phase began. */
  startAtMs: number;
  fault: WorkerFault;
  /** Delivered by new workers once this worker's fault fired (its lease could have lapsed by then). */
  contenders: { event: WorkerEvent; afterMs: number }[];
}

export type CodeforcesFault =
  { kind: 'ok' } | { kind: 'slow'; delayMs: number } | { kind: 'failed' } | { kind: 'unavailable' } | { kind: 'html' };

export interface DynamoDelayWindow {
  /** ms after the faults phase began. */
  fromMs: number;
  toMs: number;
  /** DynamoDB operation (X-Amz-Target suffix) or '*' for all. */
  operation: string;
  minMs: number;
  maxMs: number;
}

/**
 * What AWS returns and DynamoDB Local never does, injected by each worker's DynamoDB proxy
 * (local/dynamo-proxy.ts) while the faults phase lasts.
 */
export interface AwsFaults {
  /**
   * Contention is the trial's only fault: no signals, no failing Codeforces replies, no DynamoDB
   * delays, no dropped connections, a lease long enough for the bounded bursts below. The checker's
   * `contention-failure` rule holds such a trial to "no invocation fails".
   */
  contentionOnly: boolean;
  /** Chance that one request gets each injected fault (conflicts only on plain writes). */
  rates: { conflict: number; throughputExceeded: number; throttling: number; internalError: number; dropAfterApply: number };
  /**
   * Longest run of consecutive injected faults on one kind of request (acquire, renew, release,
   * commit, or another operation) of one worker; at most one of them a throttle (the SDK backs off
   * up to 1 s on a throttle). Below every retry budget: lease operations get 4 attempts, commits 5,
   * each of them up to 3 SDK attempts.
   */
  maxBurst: number;
  /**
   * The same for the store's reads (Scan, Query): the function leaves them to the SDK alone (3
   * attempts), so their bursts stay at 2.
   */
  maxReadBurst: number;
  /** Chance that a TransactWriteItems holds its items (plain writes to them conflict), and how long. */
  holdChance: number;
  holdMs: { min: number; max: number };
}

export interface TrialPlan {
  seed: number;
  /** AWS faults of the trial (absent: off). */
  aws?: AwsFaults;
  leaseSeconds: number;
  /** Scheduled intervals of the trial (ISO), delivered in the faults phase and re-delivered after. */
  intervals: string[];
  workers: WorkerPlan[];
  /** The n-th Codeforces request of the faults phase gets `codeforces[n]` (then `ok`). */
  codeforces: CodeforcesFault[];
  dynamoDelays: DynamoDelayWindow[];
  /** How long the faults phase lasts at least (every worker started by then). */
  faultsPhaseMs: number;
  /** The reminder delivery job's part of the trial (absent: no delivery workers). */
  delivery?: DeliveryPlan;
}

/**
 * Reminder delivery in the faults phase: minute ticks of the delivery job (several of one minute:
 * duplicates; staggered and overlapping: concurrent), some console runs, each worker with a fault
 * drawn like the syncs'. The reply clock is seeded fresh, or over 70 minutes old (delivery then
 * sends nothing until a sync applies a reply).
 */
export interface DeliveryPlan {
  workers: WorkerPlan[];
  /** Seconds before the trial that the seeded reply clock says the newest reply was made. */
  clockAgeSeconds: number;
}

/** Fault kinds as counted in the report. */
export type FaultKind =
  | 'sigkill'
  | 'sigstop'
  | 'codeforces-slow'
  | 'codeforces-failed'
  | 'codeforces-503'
  | 'codeforces-html'
  | 'dynamo-delay'
  | 'short-lease'
  // AWS faults injected by the proxies (each HTTP request answered so counts once):
  | 'aws-conflict'
  | 'aws-throughput-exceeded'
  | 'aws-throttling'
  | 'aws-internal-error'
  | 'aws-drop-after-apply'
  | 'aws-transaction-hold'
  | 'contention-only-trial'
  // The app writing reminders through the write path beside the syncs and delivery:
  | 'app-set'
  | 'app-cancel'
  | 'app-during-commit'
  | 'app-refused'
  // Hundreds of reminders on a contest that moves, moved in transactions the proxy holds:
  | 'large-commit'
  | 'large-commit-hold';

export function planTrial(
  seed: number,
  options: { workers: number; baseTimeMs: number; aws?: boolean; deliveryWorkers?: number },
): TrialPlan {
  const classic = planClassic(seed, options);
  const plan =
    options.deliveryWorkers === undefined || options.deliveryWorkers === 0
      ? classic
      : { ...classic, delivery: planDelivery(seed, classic, options.deliveryWorkers, options.baseTimeMs) };
  if (options.aws !== true) return plan;
  // Drawn from their own stream, so that the rest of a seed's plan is the same with AWS faults off.
  const random = new Random(seed ^ 0x2545f491);
  const contentionOnly = random.chance(0.3);
  const aws: AwsFaults = {
    contentionOnly,
    rates: contentionOnly
      ? { conflict: 0.3, throughputExceeded: 0.06, throttling: 0.06, internalError: 0.08, dropAfterApply: 0 }
      : { conflict: 0.15, throughputExceeded: 0.03, throttling: 0.03, internalError: 0.04, dropAfterApply: 0.04 },
    maxBurst: 3,
    maxReadBurst: 2,
    holdChance: random.float() * 0.6,
    holdMs: { min: 50, max: random.int(150, 300) },
  };
  return contentionOnly ? contentionOnlyPlan({ ...plan, aws }, random) : { ...plan, aws };
}

/**
 * The plan with contention as its only fault: no signals, contenders or DynamoDB delays, Codeforces
 * answering (half the replies slow, so that runs last past a renewal), a 9 s lease (its 3 s renewal
 * window holds a burst of conflicts plus one throttle with room for a loaded machine), no dropped
 * connections.
 */
export function contentionOnlyPlan(plan: TrialPlan, random = new Random(plan.seed ^ 0x68e31da4)): TrialPlan {
  const aws: AwsFaults = plan.aws ?? {
    contentionOnly: true,
    rates: { conflict: 0.3, throughputExceeded: 0.06, throttling: 0.06, internalError: 0.08, dropAfterApply: 0 },
    maxBurst: 3,
    maxReadBurst: 2,
    holdChance: 0.4,
    holdMs: { min: 50, max: 300 },
  };
  const calm = (worker: WorkerPlan): WorkerPlan => ({ ...worker, fault: { kind: 'none' }, contenders: [] });
  return {
    ...plan,
    aws: { ...aws, contentionOnly: true, rates: { ...aws.rates, dropAfterApply: 0 } },
    leaseSeconds: 9,
    workers: plan.workers.map(calm),
    ...(plan.delivery !== undefined ? { delivery: { ...plan.delivery, workers: plan.delivery.workers.map(calm) } } : {}),
    codeforces: plan.codeforces.map((): CodeforcesFault =>
      random.chance(0.5) ? { kind: 'slow', delayMs: random.int(2_500, 5_000) } : { kind: 'ok' },
    ),
    dynamoDelays: [],
  };
}

/** A worker's fault and the contenders started once it fired, drawn as for every worker of a trial. */
function drawFault(random: Random, leaseMs: number, intervals: readonly string[]): Pick<WorkerPlan, 'fault' | 'contenders'> {
  const roll = random.float();
  const beyondLease = (): number => Math.round(leaseMs * (1.2 + random.float() * 1.3));
  let fault: WorkerFault = { kind: 'none' };
  if (roll < 0.08) fault = { kind: 'kill', afterMs: random.int(200, 2_500) };
  else if (roll < 0.2) fault = { kind: 'kill-holder', delayMs: random.int(0, leaseMs) };
  else if (roll < 0.38) fault = { kind: 'stop-holder', delayMs: random.int(0, Math.round(leaseMs / 2)), forMs: beyondLease() };
  else if (roll < 0.45) fault = { kind: 'stop', afterMs: random.int(300, 2_500), forMs: beyondLease() };
  else if (roll < 0.75) fault = { kind: 'stop-at-write', nth: random.int(1, 2), holdMs: beyondLease(), forMs: beyondLease() };
  const contenders: WorkerPlan['contenders'] = [];
  if (fault.kind !== 'none') {
    for (const afterMs of [leaseMs + random.int(50, 600), Math.round(leaseMs * (1.5 + random.float()))]) {
      if (!random.chance(0.75)) continue;
      contenders.push({
        event: random.chance(0.6) ? { kind: 'console' } : { kind: 'schedule', interval: random.pick(intervals) },
        afterMs,
      });
    }
  }
  return { fault, contenders };
}

function planClassic(seed: number, options: { workers: number; baseTimeMs: number }): TrialPlan {
  const random = new Random(seed);
  const leaseSeconds = random.int(2, 4);
  const leaseMs = leaseSeconds * 1000;
  const hour = 3_600_000;
  const top = Math.floor(options.baseTimeMs / hour) * hour;
  const intervalCount = random.int(3, 5);
  // The current hour and the ones before it, at most 4 hours back: what EventBridge and Lambda can
  // still deliver (each keeps an event 2 hours), so that the interval ledger still remembers them.
  const intervals = Array.from({ length: intervalCount }, (_, i) =>
    new Date(top - (intervalCount - 1 - i) * hour).toISOString().replace('.000Z', 'Z'),
  );

  const spreadMs = random.int(3_000, 7_000);
  const workers: WorkerPlan[] = [];
  for (let id = 0; id < options.workers; id += 1) {
    const event: WorkerEvent = random.chance(0.12) ? { kind: 'console' } : { kind: 'schedule', interval: random.pick(intervals) };
    const { fault, contenders } = drawFault(random, leaseMs, intervals);
    workers.push({ id, event, startAtMs: random.int(0, spreadMs), fault, contenders });
  }

  const codeforces: CodeforcesFault[] = [];
  for (let n = 0; n < 12; n += 1) {
    const roll = random.float();
    if (roll < 0.45) codeforces.push({ kind: 'ok' });
    else if (roll < 0.7) codeforces.push({ kind: 'slow', delayMs: random.int(200, Math.round(leaseMs * 1.5)) });
    else if (roll < 0.8) codeforces.push({ kind: 'failed' });
    else if (roll < 0.9) codeforces.push({ kind: 'unavailable' });
    else codeforces.push({ kind: 'html' });
  }

  const dynamoDelays: DynamoDelayWindow[] = [];
  const windows = random.int(0, 2);
  for (let w = 0; w < windows; w += 1) {
    const fromMs = random.int(0, spreadMs + leaseMs);
    const operation = random.pick(['*', '*', 'UpdateItem', 'TransactWriteItems', 'Scan']);
    const maxMs = random.int(Math.round(leaseMs / 2), Math.round(leaseMs * 1.5));
    dynamoDelays.push({ fromMs, toMs: fromMs + random.int(1_000, 3_000), operation, minMs: Math.round(maxMs / 4), maxMs });
  }

  return { seed, leaseSeconds, intervals, workers, codeforces, dynamoDelays, faultsPhaseMs: spreadMs };
}

/**
 * The delivery workers: ticks of three past minutes (so several share one: duplicates), 15% console
 * runs, started over the syncs' spread and 4 s beyond (the soon reminders fall due meanwhile),
 * with faults drawn like the syncs' (contenders are console runs or ticks). Drawn from their own
 * stream: the rest of a seed's plan is the same with delivery on or off.
 */
function planDelivery(seed: number, classic: TrialPlan, count: number, baseTimeMs: number): DeliveryPlan {
  const random = new Random(seed ^ 0x1b873593);
  const minute = 60_000;
  const top = Math.floor(baseTimeMs / minute) * minute;
  const minutes = [3, 2, 1].map((back) => new Date(top - back * minute).toISOString().replace('.000Z', 'Z'));
  const leaseMs = classic.leaseSeconds * 1000;
  const workers: WorkerPlan[] = [];
  for (let i = 0; i < count; i += 1) {
    const event: WorkerEvent = random.chance(0.15) ? { kind: 'console' } : { kind: 'schedule', interval: random.pick(minutes) };
    const { fault, contenders } = drawFault(random, leaseMs, minutes);
    workers.push({ id: i, event, startAtMs: random.int(0, classic.faultsPhaseMs + 4_000), fault, contenders });
  }
  return { workers, clockAgeSeconds: random.chance(0.3) ? 2 * 3600 : 300 };
}

/** Delay of one DynamoDB request arriving `atMs` into the faults phase (0 outside the windows). */
export function dynamoDelayAt(plan: TrialPlan, operation: string, atMs: number, random: Random): number {
  let delay = 0;
  for (const window of plan.dynamoDelays) {
    if (atMs < window.fromMs || atMs >= window.toMs) continue;
    if (window.operation !== '*' && window.operation !== operation) continue;
    delay = Math.max(delay, window.minMs + Math.floor(random.float() * (window.maxMs - window.minMs + 1)));
  }
  return delay;
}

/** Which kind of client request a DynamoDB request is, for bursts: a lease operation, a commit, or its operation. */
export type RequestKind = string;

/**
 * The fault policy of one worker's proxy: seeded draws per request, in bursts of at most
 * `maxBurst` consecutive failed requests per request kind (at most one throttle among them). A
 * request that meets a transaction's lock fails whatever the policy says: it counts in the burst,
 * and once a burst is full nothing more is injected until a request of that kind goes through.
 * `active()` turns it off (the quiet phase).
 */
export function awsFaultPolicy(
  aws: AwsFaults,
  random: Random,
  kindOf: (request: PolicyRequest) => RequestKind,
  active: () => boolean,
): (request: PolicyRequest) => ProxyFaultName | undefined {
  const streaks = new Map<RequestKind, { faults: number; throttles: number }>();
  const plainWrite = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);
  return (request) => {
    if (!active()) return undefined;
    const kind = kindOf(request);
    const streak = streaks.get(kind) ?? { faults: 0, throttles: 0 };
    const roll = random.float();
    let fault: ProxyFaultName | undefined;
    const read = request.operation === 'Scan' || request.operation === 'Query';
    if (streak.faults < (read ? aws.maxReadBurst : aws.maxBurst) && request.locked !== true) {
      const { conflict, throughputExceeded, throttling, internalError, dropAfterApply } = aws.rates;
      let edge = 0;
      const within = (p: number): boolean => roll >= edge && roll < (edge += p);
      if (within(plainWrite.has(request.operation) ? conflict : 0)) fault = 'conflict';
      else if (within(streak.throttles === 0 ? throughputExceeded : 0)) fault = 'throughput-exceeded';
      else if (within(streak.throttles === 0 ? throttling : 0)) fault = 'throttling';
      else if (within(internalError)) fault = 'internal-error';
      else if (within(dropAfterApply)) fault = 'drop-after-apply';
    }
    if ((fault === undefined && request.locked !== true) || fault === 'drop-after-apply') streaks.set(kind, { faults: 0, throttles: 0 });
    else {
      const throttle = fault === 'throughput-exceeded' || fault === 'throttling';
      streaks.set(kind, { faults: streak.faults + 1, throttles: streak.throttles + (throttle ? 1 : 0) });
    }
    return fault;
  };
}

/** What the policy reads of a request (local/dynamo-proxy.ts ProxyRequest). */
export interface PolicyRequest {
  operation: string;
  body: Record<string, unknown> | undefined;
  locked?: boolean;
}

/** The proxy's fault names (local/dynamo-proxy.ts ProxyFault), restated to keep this module free of I/O imports. */
export type ProxyFaultName = 'conflict' | 'throughput-exceeded' | 'throttling' | 'internal-error' | 'drop-after-apply';
