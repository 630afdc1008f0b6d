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
  | { kind: 'ok' }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'failed' }
  | { kind: 'unavailable' }
  | { kind: 'html' };

export interface DynamoDelayWindow {
  /** ms after the faults phase began. */
  fromMs: number;
  toMs: number;
  /** DynamoDB operation (X-Amz-Target suffix) or '*' for all. */
  operation: string;
  minMs: number;
  maxMs: number;
}

export interface TrialPlan {
  seed: number;
  leaseSeconds: number;
  /** Scheduled intervals of the trial (ISO), delivered in the faults phase and re-delivered after. */
  intervals: string[];
  workers: WorkerPlan[];
  /** The n-th Codeforces request of the faults phase gets `codeforces[n]` (then `ok`). */
  codeforces: CodeforcesFault[];
  dynamoDelays: DynamoDelayWindow[];
  /** How long the faults phase lasts at least (every worker started by then). */
  faultsPhaseMs: number;
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
  | 'short-lease';

export function planTrial(seed: number, options: { workers: number; baseTimeMs: number }): TrialPlan {
  const random = new Random(seed);
  const leaseSeconds = random.int(2, 4);
  const leaseMs = leaseSeconds * 1000;
  const hour = 3_600_000;
  const top = Math.floor(options.baseTimeMs / hour) * hour;
  const intervalCount = random.int(3, 5);
  const intervals = Array.from({ length: intervalCount }, (_, i) => new Date(top - (intervalCount - i) * hour).toISOString().replace('.000Z', 'Z'));

  const spreadMs = random.int(3_000, 7_000);
  const workers: WorkerPlan[] = [];
  for (let id = 0; id < options.workers; id += 1) {
    const event: WorkerEvent = random.chance(0.12) ? { kind: 'console' } : { kind: 'schedule', interval: random.pick(intervals) };
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
        contenders.push({ event: random.chance(0.6) ? { kind: 'console' } : { kind: 'schedule', interval: random.pick(intervals) }, afterMs });
      }
    }
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
