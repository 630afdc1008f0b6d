/**
 * Single execution across concurrent, retried, killed and frozen invocations. Every invocation is
 * its own Node.js process running the bundled artifact from cdk.out (what `cdk deploy` uploads),
 * against DynamoDB Local and a local Codeforces stand-in that counts requests.
 */
import { describe, expect, inject, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { CodeforcesStandin } from '../../local/codeforces-standin.js';
import { sampleList, snapshot } from '../support/contests.js';
import { invokeBundle, scheduledEvent, type InvocationOutcome } from '../support/processes.js';
import type { TestTables } from '../support/tables.js';
import { useWorld } from '../support/world.js';

let standin: CodeforcesStandin;
let tables: TestTables;

useWorld('multi', (world) => {
  ({ standin, tables } = world);
});

function invoke(event: unknown, leaseSeconds = 10) {
  return invokeBundle({
    entry: inject('bundleEntry'),
    event,
    env: { ...tables.env, CODEFORCES_API_URL: standin.baseUrl, LEASE_DURATION_SECONDS: String(leaseSeconds) },
  });
}

const acquired = (line: Record<string, unknown>) => line.message === 'lease acquired';
const outcomes = (results: InvocationOutcome[]) => results.map((r) => r.summary?.outcome).sort();
const intervalAt = (hoursAgo: number) => new Date(Date.now() - hoursAgo * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One line per scenario with what it saw (outcomes and reasons, Codeforces requests). */
function report(scenario: string, results: InvocationOutcome[]) {
  const seen: Record<string, number> = {};
  for (const r of results) {
    const key = r.summary === undefined ? `killed(${r.signal})` : [r.summary.outcome, r.summary.reason].filter(Boolean).join(':');
    seen[key] = (seen[key] ?? 0) + 1;
  }
  console.info(`[scenario ${scenario}] ${JSON.stringify({ ...seen, codeforcesRequests: standin.requests.length })}`);
}

async function leaseItem() {
  const out = await tables.doc.send(
    new GetCommand({ TableName: tables.names.coordination, Key: { pk: 'lease#contest-sync' }, ConsistentRead: true }),
  );
  return out.Item;
}

describe('single execution (multi-process, bundled function)', { timeout: 120_000 }, () => {
  it('1+2. eight simultaneous deliveries of one tick: one Codeforces request, one success; a later duplicate is already-done', async () => {
    standin.setDelay(1_500);
    const event = scheduledEvent(intervalAt(1));
    const results = await Promise.all(Array.from({ length: 8 }, () => invoke(event).done));
    expect(standin.requests).toHaveLength(1);
    expect(outcomes(results)).toEqual(['skipped', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped', 'succeeded']);
    for (const skipped of results.filter((r) => r.summary?.outcome === 'skipped')) {
      expect(['lease-held', 'already-done']).toContain(skipped.summary?.reason);
      expect(skipped.ok).toBe(true); // a skip is not an error to retry
    }
    report('1', results);
    const again = await invoke(event).done;
    expect(again.summary).toMatchObject({ outcome: 'skipped', reason: 'already-done' });
    expect(standin.requests).toHaveLength(1);
    report('2', [again]);
  });

  it('3. six different intervals while the first is slow: one request, five lease-held naming the holder', async () => {
    const release = standin.hold();
    const first = invoke(scheduledEvent(intervalAt(1)));
    const holder = await first.waitForLog(acquired);
    const pending = Promise.all([2, 3, 4, 5, 6].map((h) => invoke(scheduledEvent(intervalAt(h))).done));
    // Release within the client's 10 s per-attempt timeout even on a loaded machine.
    await Promise.race([pending, sleep(9_000)]);
    release();
    const others = await pending;
    const firstResult = await first.done;
    report('3', [firstResult, ...others]);
    expect(firstResult.summary?.outcome).toBe('succeeded');
    expect(standin.requests).toHaveLength(1);
    for (const other of others) {
      expect(other.summary).toMatchObject({ outcome: 'skipped', reason: 'lease-held', holder: holder.runId });
      expect(Date.parse(other.summary?.holderExpiresAt ?? '')).toBeGreaterThan(Date.now() - 60_000);
    }
  });

  it('4. a holder killed mid-sync: others skip while its lease lives; after it lapses the retry runs', async () => {
    const release = standin.hold();
    const event = scheduledEvent(intervalAt(1));
    const victim = invoke(event, 2);
    await victim.waitForLog(acquired);
    victim.child.kill('SIGKILL');
    const killed = await victim.done;
    expect(killed.signal).toBe('SIGKILL');
    const during = await invoke(event, 2).done;
    expect(during.summary).toMatchObject({ outcome: 'skipped', reason: 'lease-held' });
    release();
    const item = await leaseItem();
    await sleep(Math.max(0, Number(item?.expiresAtMs) - Date.now()) + 100);
    const retry = await invoke(event, 2).done;
    report('4', [killed, during, retry]);
    expect(retry.summary).toMatchObject({ outcome: 'succeeded' });
    expect((await snapshot(tables)).contests.length).toBeGreaterThan(0);
  });

  it('5. a sync longer than three lease lifetimes keeps its lease by heartbeat; contenders skip', async () => {
    // Lease 2 s. The Codeforces reply is held for more than three lease lifetimes (and until the
    // contenders, started about a lease lifetime apart, have decided), within the client's 10 s
    // per-attempt timeout.
    const release = standin.hold();
    const long = invoke(scheduledEvent(intervalAt(1)), 2);
    const acquiredLine = await long.waitForLog(acquired);
    const started = Date.now();
    const contenders = [0, 2_000, 4_000].map(async (offset, i) => {
      await sleep(offset);
      return invoke(scheduledEvent(intervalAt(2 + i)), 2).done;
    });
    await Promise.race([Promise.all(contenders), sleep(9_000)]);
    await sleep(Math.max(0, 6_500 - (Date.now() - started)));
    release();
    const result = await long.done;
    const decided = await Promise.all(contenders);
    report('5', [result, ...decided]);
    console.info(`[scenario 5] heartbeats ${result.summary?.counts.heartbeats}, durationMs ${result.summary?.durationMs}`);
    expect(result.summary).toMatchObject({ outcome: 'succeeded' });
    expect(result.summary?.durationMs).toBeGreaterThan(3 * 2_000);
    expect(result.summary?.counts.heartbeats).toBeGreaterThanOrEqual(3);
    for (const contender of decided) {
      expect(contender.summary).toMatchObject({ outcome: 'skipped', reason: 'lease-held', holder: acquiredLine.runId });
    }
    expect(standin.requests).toHaveLength(1);
  });

  it('6. a holder frozen past its lease wakes after another run took over: its data does not land', async () => {
    const old = sampleList();
    const newer = old.map((c) => ({ ...c, name: `${c.name} [newer]` }));
    standin.enqueue({ body: { status: 'OK', result: old }, delayMs: 3_000 });
    const frozen = invoke(scheduledEvent(intervalAt(1)), 2);
    await frozen.waitForLog(acquired);
    while (standin.requests.length < 1) await sleep(20);
    frozen.child.kill('SIGSTOP');
    await sleep(2_500); // its lease lapses
    standin.setContests(newer);
    const takeover = await invoke(scheduledEvent(intervalAt(2)), 2).done;
    expect(takeover.summary).toMatchObject({ outcome: 'succeeded', fence: 2 });
    frozen.child.kill('SIGCONT');
    const woke = await frozen.done;
    report('6', [takeover, woke]);
    expect(woke.summary).toMatchObject({ outcome: 'failed', reason: 'lease-lost' });
    const { contests } = await snapshot(tables);
    expect(contests.length).toBeGreaterThan(0);
    for (const contest of contests) expect(String(contest.name)).toMatch(/\[newer\]$/);
    expect(await leaseItem()).toMatchObject({ fence: 2 });
  });

  it('7. Codeforces fails: the run fails and releases the lease, and the retry of the interval runs', async () => {
    standin.enqueue({ status: 400, body: { status: 'FAILED', comment: 'contest.list: Internal error' } });
    const event = scheduledEvent(intervalAt(1));
    const failed = await invoke(event).done;
    expect(failed.ok).toBe(false);
    expect(failed.error?.name).toBe('SyncFailedError');
    expect(failed.summary).toMatchObject({ outcome: 'failed', reason: 'codeforces' });
    const item = await leaseItem();
    expect(item?.holder).toBeUndefined();
    const retry = await invoke(event).done;
    report('7', [failed, retry]);
    expect(retry.summary).toMatchObject({ outcome: 'succeeded', fence: 2 });
  });
});
