/**
 * DynamoDB contention on the bundled function, in child processes, through the DynamoDB proxy that
 * answers what AWS does and DynamoDB Local never does: plain writes to an item held by an in-flight
 * transaction get TransactionConflictException; throttling and HTTP 500 are injected by script.
 * Contention alone never fails an invocation: a contender that cannot decide skips, the holder keeps
 * its lease, and throttles or 500s on acquire and commits clear within the retry budget.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { CodeforcesStandin } from '../../local/codeforces-standin.js';
import {
  leaseOperation,
  scriptedFaults,
  startDynamoProxy,
  transactionLocks,
  type DynamoProxy,
  type ProxyRequest,
} from '../../local/dynamo-proxy.js';
import { jsonLines } from '../chaos/history.js';
import { invokeBundle, scheduledEvent, type InvocationOutcome } from '../support/processes.js';
import type { TestTables } from '../support/tables.js';
import { useWorld } from '../support/world.js';

let standin: CodeforcesStandin;
let tables: TestTables;
let proxy: DynamoProxy | undefined;

useWorld('contention', (world) => {
  ({ standin, tables } = world);
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

async function startProxy(): Promise<DynamoProxy> {
  const { names } = tables;
  proxy = await startDynamoProxy(tables.endpoint, {
    locks: transactionLocks({ [names.contests]: ['contestId'], [names.reminders]: ['contestId', 'userId'], [names.coordination]: ['pk'] }),
  });
  return proxy;
}

function invoke(event: unknown, leaseSeconds: number) {
  if (proxy === undefined) throw new Error('no proxy');
  return invokeBundle({
    entry: inject('bundleEntry'),
    event,
    env: {
      ...tables.env,
      AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint,
      CODEFORCES_API_URL: standin.baseUrl,
      LEASE_DURATION_SECONDS: String(leaseSeconds),
    },
  });
}

const intervalAt = (hoursAgo: number) => new Date(Date.now() - hoursAgo * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const acquired = (line: Record<string, unknown>) => line.message === 'lease acquired';
/** Contention retries the run logged (WARN lines go to stderr, as in Lambda). */
const retries = (result: InvocationOutcome) =>
  jsonLines(`${result.stdout}\n${result.stderr}`)
    .filter((line) => line.message === 'DynamoDB contention; retrying')
    .map((line) => `${String(line.operation)}:${String(line.reason)}`);
const isLease = (kind: 'acquire' | 'renew' | 'release') => (request: ProxyRequest) => leaseOperation(request) === kind;
const isCommit = (request: ProxyRequest) =>
  request.operation === 'TransactWriteItems' && JSON.stringify(request.body).includes(tables.names.contests);

function report(scenario: string, results: InvocationOutcome[]) {
  const seen: Record<string, number> = {};
  for (const r of results) {
    const key =
      r.summary === undefined ? `no-result(${r.signal ?? r.code})` : [r.summary.outcome, r.summary.reason].filter(Boolean).join(':');
    seen[key] = (seen[key] ?? 0) + 1;
  }
  console.info(`[contention ${scenario}] ${JSON.stringify({ ...seen, injected: proxy?.injected(), retries: results.map(retries) })}`);
}

async function leaseItem() {
  const out = await tables.doc.send(
    new GetCommand({ TableName: tables.names.coordination, Key: { pk: 'lease#contest-sync' }, ConsistentRead: true }),
  );
  return out.Item;
}

describe('DynamoDB contention (multi-process, bundled function, AWS answers through the proxy)', { timeout: 120_000 }, () => {
  it('a. contenders whose acquire meets the holder’s in-flight transaction (TransactionConflictException) skip lease-held; none fails', async () => {
    const through = await startProxy();
    let transactions = 0;
    // The holder's first transaction (its data write, fenced on the lease item) stays in flight 6 s
    // (its own renewals conflict too; a 15 s lease leaves them 10 s to get through).
    through.setTransactionHold((request) => (request.operation === 'TransactWriteItems' && ++transactions === 1 ? 6_000 : 0));
    const holder = invoke(scheduledEvent(intervalAt(1)), 15);
    const held = await holder.waitForLog(acquired);
    while (![...through.locks.held.keys()].some((key) => key.includes('lease#contest-sync'))) await sleep(20);
    const contenders = await Promise.all(
      [2, 3, 4].map((h) => invoke(scheduledEvent(intervalAt(h)), 15).done).concat([invoke({}, 15).done]),
    );
    const result = await holder.done;
    report('a', [result, ...contenders]);
    expect(result.summary).toMatchObject({ outcome: 'succeeded', fence: held.fence });
    for (const contender of contenders) {
      expect(contender.ok).toBe(true); // no throw: a scheduled skip is not retried by Lambda
      expect(contender.summary).toMatchObject({ outcome: 'skipped', reason: 'lease-held', holder: 'unknown' });
      expect(contender.summary?.detail).toMatch(/contention did not clear within 4 attempts \(last: TransactionConflictException\)/);
      expect(retries(contender)).toEqual([
        'acquire:TransactionConflictException',
        'acquire:TransactionConflictException',
        'acquire:TransactionConflictException',
      ]);
    }
    // Four conflicts per contender, none retried by the SDK (plus any renewal of the holder's).
    expect(through.injected().conflict?.UpdateItem).toBeGreaterThanOrEqual(16);
    expect(await leaseItem()).toMatchObject({ fence: 1 });
    expect(standin.requests).toHaveLength(1);
  });

  it('b. the holder’s renewals meet conflicts, throttling and a 500: it keeps its lease and succeeds; contenders skip naming it', async () => {
    const through = await startProxy();
    through.setFaults(
      scriptedFaults([
        { fault: 'conflict', match: isLease('renew'), nth: [1, 2, 5] },
        { fault: 'throughput-exceeded', match: isLease('renew'), nth: [3] },
        { fault: 'internal-error', match: isLease('renew'), nth: [6] },
        { fault: 'throttling', match: isLease('renew'), nth: [8] },
      ]),
    );
    // Lease 6 s: renewals every 2 s (later when one is retried); the reply is held 9 s: three renewals or more.
    const release = standin.hold();
    const holder = invoke(scheduledEvent(intervalAt(1)), 6);
    const held = await holder.waitForLog(acquired);
    const contenders = [1_500, 4_000].map(async (offset, i) => {
      await sleep(offset);
      return invoke(scheduledEvent(intervalAt(2 + i)), 6).done;
    });
    await sleep(9_000);
    release();
    const result = await holder.done;
    const skipped = await Promise.all(contenders);
    report('b', [result, ...skipped]);
    console.info(`[contention b] heartbeats ${result.summary?.counts.heartbeats}, durationMs ${result.summary?.durationMs}`);
    expect(result.summary).toMatchObject({ outcome: 'succeeded', fence: held.fence });
    expect(result.summary?.counts.heartbeats).toBeGreaterThanOrEqual(3);
    expect(retries(result).filter((r) => r.startsWith('renew:TransactionConflictException')).length).toBeGreaterThanOrEqual(2);
    for (const contender of skipped)
      expect(contender.summary).toMatchObject({ outcome: 'skipped', reason: 'lease-held', holder: held.runId });
    const injected = through.injected();
    expect(injected.conflict?.UpdateItem).toBe(3);
    expect(injected['throughput-exceeded']?.UpdateItem).toBe(1);
    expect(injected['internal-error']?.UpdateItem).toBe(1);
    // Nobody took over: still the holder's fence, released.
    expect(await leaseItem()).toMatchObject({ fence: 1 });
    expect((await leaseItem())?.holder).toBeUndefined();
  });

  it('c. throttling and 500s on acquire, reads and commits clear within the budget: the run succeeds', async () => {
    const through = await startProxy();
    through.setFaults(
      scriptedFaults([
        // Acquire: three 500s exhaust the SDK's 3 attempts; the lease's own retry goes through.
        { fault: 'internal-error', match: isLease('acquire'), nth: [1, 2, 3] },
        { fault: 'throttling', match: (r) => r.operation === 'Scan', nth: [1] },
        // The data commit: a 500, then throttles past the SDK's attempts, then it commits.
        { fault: 'internal-error', match: isCommit, nth: [1] },
        { fault: 'throughput-exceeded', match: isCommit, nth: [2, 3] },
        { fault: 'internal-error', match: (r) => r.operation === 'TransactWriteItems' && !isCommit(r), nth: [1] },
      ]),
    );
    const result = await invoke(scheduledEvent(intervalAt(1)), 10).done;
    report('c', [result]);
    expect(result.ok).toBe(true);
    expect(result.summary).toMatchObject({ outcome: 'succeeded', fence: 1 });
    expect(retries(result)).toEqual(['acquire:InternalServerError', 'commit:ProvisionedThroughputExceededException']);
    expect(through.injected()).toEqual({
      'internal-error': { UpdateItem: 3, TransactWriteItems: 2 },
      throttling: { Scan: 1 },
      'throughput-exceeded': { TransactWriteItems: 2 },
    });
    const again = await invoke(scheduledEvent(intervalAt(1)), 10).done;
    expect(again.summary).toMatchObject({ outcome: 'skipped', reason: 'already-done' });
  });
});
