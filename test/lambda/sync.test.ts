/**
 * runSync with in-memory ports: the release paths that are hard to provoke on a real engine
 * (an answer lost on the way back, a release that keeps failing). The real lease and store run in
 * test/integration and test/multiprocess.
 */
import { describe, expect, it, vi } from 'vitest';
import type { FetchContestsResult } from '../../lambda/codeforces/client.js';
import type { HeldLease } from '../../lambda/lease/record.js';
import { leaseTiming } from '../../lambda/lease/timing.js';
import { runSync, type LeasePort, type StorePort } from '../../lambda/sync.js';

const timing = leaseTiming(10);
const interval = '2026-11-29T14:00:00Z';

function ports(release: LeasePort['release'], releaseLanded: LeasePort['releaseLanded'] = async () => false) {
  const held: HeldLease = { runId: 'run-1', fence: 9, expiresAtMs: Date.now() + 10_000, doneIntervals: new Set() };
  const lease: LeasePort = {
    acquire: vi.fn(async () => ({ acquired: true as const, lease: held })),
    renew: vi.fn(async (l: HeldLease) => l),
    release: vi.fn(release),
    releaseLanded: vi.fn(releaseLanded),
    fenceCheck: () => ({ ConditionCheck: { TableName: 'coordination', Key: { pk: 'lease' }, ConditionExpression: 'x' } }),
  };
  const store: StorePort = {
    scanContests: async () => [],
    remindersOf: async () => [],
    apply: async () => ({ transactions: 1, contestsWritten: 1, contestsDeleted: 0, remindersMoved: 0, remindersDeleted: 0 }),
  };
  const fetched: FetchContestsResult = {
    contests: [
      { id: 1, name: 'Round 1', type: 'CF', phase: 'BEFORE', frozen: false, durationSeconds: 7200, startTimeSeconds: 2_000_000_000 },
    ],
    listedIds: [1],
    invalid: 0,
    unscheduled: 0,
    attempts: 1,
    latencyMs: 5,
  };
  return { lease, store, fetchContests: async () => fetched, now: Date.now, timing };
}

const scheduled = { source: 'schedule' as const, interval, dryRun: false, force: false };
const context = { runId: 'run-1', remainingMs: () => 60_000 };
const lost = () => Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });

describe('runSync release', () => {
  it('marks the interval done in the release and reports success', async () => {
    const deps = ports(async () => true);
    const summary = await runSync(scheduled, deps, context);
    expect(summary).toMatchObject({ outcome: 'succeeded', fence: 9, interval });
    expect(deps.lease.release).toHaveBeenCalledWith(
      expect.objectContaining({ fence: 9 }),
      expect.objectContaining({ doneInterval: interval, runRecord: expect.objectContaining({ pk: `run#${interval}`, outcome: 'succeeded' }) }),
      expect.any(AbortSignal),
    );
  });

  it('an answer lost, then a refusal: reads the lease back and counts the release that landed', async () => {
    let calls = 0;
    const deps = ports(
      async () => {
        calls += 1;
        if (calls === 1) throw lost();
        return false;
      },
      async () => true,
    );
    expect(await runSync(scheduled, deps, context)).toMatchObject({ outcome: 'succeeded' });
    expect(deps.lease.releaseLanded).toHaveBeenCalledTimes(1);
  });

  it('an error, then a refusal, and the read-back shows another run: lease-lost, not success', async () => {
    let calls = 0;
    const deps = ports(async () => {
      calls += 1;
      if (calls === 1) throw lost();
      return false;
    });
    expect(await runSync(scheduled, deps, context)).toMatchObject({ outcome: 'failed', reason: 'lease-lost' });
  });

  it('a release that keeps failing after a success: failed (the interval is not marked done, so it is retried)', async () => {
    const deps = ports(async () => {
      throw lost();
    });
    const summary = await runSync(scheduled, deps, context);
    expect(summary).toMatchObject({ outcome: 'failed', reason: 'lease', error: expect.stringMatching(/release failed: TimeoutError/) });
    expect(deps.lease.release).toHaveBeenCalledTimes(3);
  });

  it('a dry run for an interval neither marks it done nor takes its run record', async () => {
    const deps = ports(async () => true);
    const summary = await runSync({ source: 'console', interval, dryRun: true, force: false }, deps, context);
    expect(summary).toMatchObject({ outcome: 'succeeded', dryRun: true });
    const options = vi.mocked(deps.lease.release).mock.calls[0]?.[1];
    expect(options?.doneInterval).toBeUndefined();
    expect(options?.runRecord?.pk).toBe('run#console#run-1');
  });
});
