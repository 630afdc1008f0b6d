/**
 * The starvation measure on hand-made figures: stalls merged so that a moment is counted once,
 * DynamoDB Local's late lease answers, and the window at stake starting at the run's last
 * confirmed lease.
 */
import { describe, expect, it } from 'vitest';
import type { RunHistory, StoreOp } from './history.js';
import {
  cover,
  describeStarvation,
  LEASE_ANSWER_MS,
  slowLeaseAnswers,
  starvationOfRun,
  stallsOfSamples,
  type Stall,
} from './starvation.js';

const T = 1_750_000_000_000;
const LEASE = 9_000;

function run(extra: Partial<RunHistory> = {}): RunHistory {
  return {
    worker: 1,
    runId: 'r',
    source: 'manual',
    killed: false,
    commits: [],
    startedAtMs: T,
    endedAtMs: T + 10_000,
    summary: { outcome: 'failed', reason: 'lease-lost' },
    ...extra,
  };
}

describe('starvation', () => {
  it('places each tick’s wait at the end of its tick, and skips ticks that did not wait', () => {
    expect(
      stallsOfSamples(
        [
          { atMs: T + 500, waitMs: 300 },
          { atMs: T + 900, waitMs: 0 },
        ],
        'worker',
      ),
    ).toEqual([{ fromMs: T + 200, toMs: T + 500, source: 'worker' }]);
  });

  it('counts a moment once however many wait at once, clipped to the window, and each source on its own', () => {
    const stalls: Stall[] = [
      { fromMs: T + 1_000, toMs: T + 2_000, source: 'worker' },
      { fromMs: T + 1_500, toMs: T + 2_500, source: 'harness' },
      { fromMs: T + 9_500, toMs: T + 11_000, source: 'dynamodb-local' },
    ];
    expect(cover(stalls, { fromMs: T, toMs: T + 10_000 })).toEqual({
      ms: 1_500 + 500,
      bySource: { worker: 1_000, harness: 1_000, 'dynamodb-local': 500 },
    });
  });

  it('takes from DynamoDB Local only the time a lease write’s answer took beyond a normal answer, never a data write’s', () => {
    const landing = { outcome: 'ok' as const, runId: 'r', fence: 1, nowMs: T, expiresAtMs: T + LEASE };
    const store: StoreOp[] = [
      { ...landing, kind: 'renew', forwardedAtMs: T, repliedAtMs: T + 2_000 },
      { ...landing, kind: 'renew', forwardedAtMs: T + 3_000, repliedAtMs: T + 3_000 + LEASE_ANSWER_MS },
      {
        kind: 'write',
        versions: [],
        contestsPut: [],
        contestsDeleted: [],
        actions: 25,
        outcome: 'ok',
        forwardedAtMs: T,
        repliedAtMs: T + 5_000,
      },
    ];
    expect(slowLeaseAnswers(store)).toEqual([{ fromMs: T + LEASE_ANSWER_MS, toMs: T + 2_000, source: 'dynamodb-local' }]);
  });

  it('judges a run on the window from its last confirmed lease: a slow start does not excuse a lost lease', () => {
    // Starved 3 s at its start, then 6.5 s from its last renewal to its end with 300 ms of waiting.
    const lost = run({
      acquired: { fence: 1, acquiredAtMs: T + 3_200, expiresAtMs: T + 2_500 + LEASE },
      renewals: [T + 3_500 + LEASE],
      starvation: {
        waitMs: 3_300,
        samples: [
          { atMs: T + 3_000, spanMs: 3_000, waitMs: 3_000, lagMs: 2_950 },
          { atMs: T + 8_000, spanMs: 350, waitMs: 300, lagMs: 300 },
        ],
      },
    });
    const starvation = starvationOfRun(lost, [], LEASE)!;
    expect(starvation).toMatchObject({ windowMs: 6_500, starvedMs: 300, starved: false });
    expect(describeStarvation(starvation)).toBe('starved 300 of 6500 ms (worker 300)');
    // The same run, its renewal window starved by the test process: the harness's.
    const harness: Stall[] = [{ fromMs: T + 5_000, toMs: T + 7_500, source: 'harness' }];
    expect(starvationOfRun(lost, harness, LEASE)).toMatchObject({ starvedMs: 2_800, starved: true });
  });

  it('has no verdict on a run without its times', () => {
    expect(starvationOfRun(run({ startedAtMs: undefined }), [], LEASE)).toBeUndefined();
  });
});
