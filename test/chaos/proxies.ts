/**
 * A worker's DynamoDB proxy as a trial fits it (docs/proof.md, "Chaos"): in front of its job's
 * recorder, sharing the transactions' item locks with every other worker's proxy, injecting the
 * trial's AWS faults (faults.ts, `awsFaultPolicy`: conflicts, throttling, HTTP 500, connections
 * dropped after apply), holding some transactions in flight, and delaying requests in the plan's
 * windows — while `active()` says the faults phase lasts. Every job's workers get theirs from here:
 * the Codeforces sync's and delivery's (runner.ts) and the other sources' (sources.ts).
 */
import {
  leaseOperation,
  startDynamoProxy,
  type DynamoProxy,
  type ProxyFault,
  type ProxyRequest,
  type TransactionLocks,
} from '../../local/dynamo-proxy.js';
import { awsFaultPolicy, dynamoDelayAt, Random, type FaultKind, type TrialPlan } from './faults.js';

export const FAULT_KIND_OF_PROXY: Record<ProxyFault, FaultKind> = {
  conflict: 'aws-conflict',
  'throughput-exceeded': 'aws-throughput-exceeded',
  throttling: 'aws-throttling',
  'internal-error': 'aws-internal-error',
  'drop-after-apply': 'aws-drop-after-apply',
};

/** A worker's own stream of AWS faults: the trial's seed and the worker's id, whichever job it runs. */
export function workerFaultRandom(seed: number, workerId: number): Random {
  return new Random((seed ^ Math.imul(workerId + 1, 0x9e3779b1)) >>> 0);
}

export interface FaultyProxyOptions {
  locks: TransactionLocks;
  plan: Pick<TrialPlan, 'aws' | 'dynamoDelays'>;
  /** The lease item of the worker's job: its acquire, renew and release are kinds of their own in a burst. */
  leaseKey: string;
  /** This worker's own stream of AWS faults (`workerFaultRandom`). */
  faultRandom: Random;
  /** The job's streams of transaction holds and request delays. */
  holdRandom: Random;
  delayRandom: Random;
  /** Whether the worker's faults phase lasts. */
  active: () => boolean;
  /** ms since the faults phase began (the plan's delay windows are in it). */
  elapsedMs: () => number;
  count: (kind: FaultKind) => void;
  /** Told when a delayed request will have been forwarded (the checks wait for it). */
  delayedUntil: (atMs: number) => void;
  /** Adjusts a request's delay (a fault that freezes the worker as a write reaches DynamoDB). */
  delayOf?: (operation: string, delay: number) => number;
}

/** The proxy, and its AWS transaction hold (to combine with a job's own holds), if the trial has AWS faults. */
export async function startFaultyProxy(
  target: string,
  options: FaultyProxyOptions,
): Promise<{ proxy: DynamoProxy; awsHold?: (request: ProxyRequest) => number }> {
  const proxy = await startDynamoProxy(target, { locks: options.locks });
  const aws = options.plan.aws;
  let awsHold: ((request: ProxyRequest) => number) | undefined;
  if (aws !== undefined) {
    const kindOf = (request: { operation: string; body: Record<string, unknown> | undefined }) =>
      leaseOperation({ ...request, n: 0 }, options.leaseKey) ?? (request.operation === 'TransactWriteItems' ? 'commit' : request.operation);
    proxy.setFaults(awsFaultPolicy(aws, options.faultRandom, kindOf, options.active));
    awsHold = () => {
      if (!options.active() || !options.holdRandom.chance(aws.holdChance)) return 0;
      options.count('aws-transaction-hold');
      return options.holdRandom.int(aws.holdMs.min, aws.holdMs.max);
    };
    proxy.setTransactionHold(awsHold);
  }
  proxy.setDelay((operation) => {
    if (!options.active()) return 0;
    const drawn = dynamoDelayAt(options.plan as TrialPlan, operation, options.elapsedMs(), options.delayRandom);
    const delay = options.delayOf?.(operation, drawn) ?? drawn;
    if (delay > 0) {
      options.count('dynamo-delay');
      options.delayedUntil(Date.now() + delay);
    }
    return delay;
  });
  return { proxy, ...(awsHold !== undefined ? { awsHold } : {}) };
}

/** Adds what the proxy injected to `into` (fault → operation → count) and to the fault counts, then clears it. */
export function takeInjected(
  proxy: DynamoProxy,
  into: Partial<Record<ProxyFault, Record<string, number>>>,
  count: (kind: FaultKind, n: number) => void,
): void {
  for (const [fault, byOperation] of Object.entries(proxy.injected()) as [ProxyFault, Record<string, number>][]) {
    const merged = (into[fault] ??= {});
    for (const [operation, n] of Object.entries(byOperation)) {
      merged[operation] = (merged[operation] ?? 0) + n;
      count(FAULT_KIND_OF_PROXY[fault], n);
    }
  }
  proxy.reset();
}
