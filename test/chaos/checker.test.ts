/**
 * The chaos checker on hand-made histories: a clean one passes, and each kind of broken lease or
 * stale data it must catch is flagged (and nothing else is).
 */
import { slotOf } from '@contest-sync/scheduled-singleton';
import { describe, expect, it } from 'vitest';
import { check, judge, type FinalTables, type TrialHistory, type Violation } from './checker.js';
import { expectedRows, type Dataset } from './dataset.js';
import { storeOps, type RunHistory, type StoreOp } from './history.js';
import type { CodeforcesRecord } from './taps.js';

const LEASE = 2_000;
const T = 1_750_000_000_000;
const dataset: Dataset = { baseSeconds: T / 1000 };
const expected = (version: number) => expectedRows(dataset, version);
const I1 = '2026-01-01T10:00:00Z';
const I2 = '2026-01-01T11:00:00Z';

function run(worker: number, runId: string, fence: number, at: number, extra: Partial<RunHistory> = {}): RunHistory {
  return {
    worker,
    runId,
    source: 'schedule',
    interval: I1,
    killed: false,
    acquired: { fence, acquiredAtMs: at + 5, expiresAtMs: at + LEASE },
    commits: [{ fence, sentAtMs: at + 100, committedAtMs: at + 120, contestsPut: ['codeforces:3001'], contestsDeleted: [] }],
    summary: { outcome: 'succeeded', interval: I1, fence },
    ...extra,
  };
}

const acquire = (runId: string, fence: number, at: number, outcome: StoreOp['outcome'] = 'ok'): StoreOp => ({
  kind: 'acquire',
  runId,
  fence,
  nowMs: at,
  expiresAtMs: at + LEASE,
  forwardedAtMs: at + 1,
  repliedAtMs: at + 4,
  outcome,
});
const renew = (runId: string, fence: number, at: number): StoreOp => ({
  kind: 'renew',
  runId,
  fence,
  nowMs: at,
  expiresAtMs: at + LEASE,
  forwardedAtMs: at + 1,
  repliedAtMs: at + 3,
  outcome: 'ok',
});
const write = (runId: string | undefined, fence: number, version: number, at: number): StoreOp => ({
  kind: 'write',
  ...(runId !== undefined ? { check: { runId, fence } } : {}),
  versions: [version],
  contestsPut: ['codeforces:3001'],
  contestsDeleted: [],
  actions: 18,
  forwardedAtMs: at,
  repliedAtMs: at + 15,
  outcome: 'ok',
});
const release = (runId: string, fence: number, at: number, interval: string | null = I1): StoreOp => ({
  kind: 'release',
  runId,
  fence,
  nowMs: at,
  lastRun: { runId, fence, outcome: 'succeeded', interval },
  marksDone: interval !== null,
  forwardedAtMs: at + 1,
  repliedAtMs: at + 5,
  outcome: 'ok',
});
const served = (worker: number, n: number, version: number, at: number): CodeforcesRecord => ({
  worker,
  n,
  arrivedAtMs: at,
  endedAtMs: at + 10,
  status: 200,
  version,
});

/** Two runs one after the other, for two intervals; the second's reply (v3) is what the tables hold. */
function cleanHistory(): TrialHistory {
  return {
    leaseDurationMs: LEASE,
    intervals: [I1, I2],
    runs: [
      run(0, 'a', 1, T),
      run(1, 'b', 2, T + 1_000, { interval: I2, summary: { outcome: 'succeeded', interval: I2, fence: 2 } }),
      {
        worker: 2,
        runId: 'c',
        source: 'schedule',
        interval: I1,
        killed: false,
        commits: [],
        summary: { outcome: 'skipped', reason: 'already-done' },
      },
    ],
    store: [
      acquire('a', 1, T),
      write('a', 1, 2, T + 100),
      release('a', 1, T + 200),
      acquire('b', 2, T + 1_000),
      renew('b', 2, T + 1_600),
      write('b', 2, 3, T + 1_700),
      release('b', 2, T + 1_800, I2),
    ],
    codeforces: [served(0, 0, 2, T + 20), served(1, 1, 3, T + 1_020)],
  };
}

function finalTables(version: number, overrides: Partial<FinalTables> = {}): FinalTables {
  const want = expected(version);
  return {
    contests: want.contests.map((row) => ({ ...row, updatedAt: new Date(T).toISOString() })),
    reminders: want.reminders.map((row) => ({ ...row })),
    lease: { pk: 'lease#contest-sync', fence: 2, expiresAtMs: T + 1_800, ledger: new Set([slotOf(I1), slotOf(I2)]) },
    checkedAtMs: T + 5_000,
    ...overrides,
  };
}

const rules = (violations: Violation[]) => [...new Set(violations.map((v) => v.rule))].sort();

describe('chaos checker', () => {
  it('passes a clean history whose tables match the last successful reply', () => {
    expect(check(cleanHistory(), finalTables(3), expected)).toEqual([]);
  });

  it("flags a source job's transaction that names another platform's items, and passes its own", () => {
    const history = { ...cleanHistory(), platform: 'atcoder' };
    const own = (id: string, at: number): StoreOp => ({
      ...(write('b', 2, 3, at) as Extract<StoreOp, { kind: 'write' }>),
      itemContests: [id],
    });
    const store = [
      ...history.store,
      own('atcoder:abc200', T + 1_710),
      own('gate#atcoder:abc200#00', T + 1_720),
      own('clock#atcoder', T + 1_730),
    ];
    const ownOnly = judge({ ...history, store }, finalTables(3), undefined);
    expect(ownOnly.violations).toEqual([]);
    const foreign = judge({ ...history, store: [...store, own('codechef:START135D', T + 1_740)] }, finalTables(3), undefined);
    expect(rules(foreign.violations)).toEqual(['foreign-platform-write']);
    expect(foreign.violations[0]!.message).toContain('codechef:START135D');
  });

  it('flags one fence acquired by two runs, and fences out of acquisition order', () => {
    const history = cleanHistory();
    const runs = [...history.runs];
    runs[1] = run(1, 'b', 1, T + 1_000); // b logs fence 1 too, long after a got it
    expect(rules(check({ ...history, runs }, finalTables(3), expected))).toContain('fence-reused');
    expect(rules(check({ ...history, runs }, finalTables(3), expected))).toContain('fence-order');
  });

  it('flags a commit sent after a later fence was acquired (from the logs alone)', () => {
    const history = cleanHistory();
    const late = run(0, 'a', 1, T);
    late.commits.push({ fence: 1, sentAtMs: T + 1_200, committedAtMs: T + 1_210, contestsPut: ['codeforces:3001'], contestsDeleted: [] });
    const violations = check({ ...history, runs: [late, ...history.runs.slice(1)] }, finalTables(3), expected);
    expect(rules(violations)).toEqual(['stale-commit']);
  });

  it('does not flag a commit sent before the next acquisition even if its reply came back after', () => {
    const history = cleanHistory();
    const slow = run(0, 'a', 1, T);
    slow.commits = [{ fence: 1, sentAtMs: T + 990, committedAtMs: T + 1_500, contestsPut: ['codeforces:3001'], contestsDeleted: [] }];
    expect(check({ ...history, runs: [slow, ...history.runs.slice(1)] }, finalTables(3), expected)).toEqual([]);
  });

  it('flags a write of an old fence that reached DynamoDB after a newer fence was granted', () => {
    const history = cleanHistory();
    const violations = check({ ...history, store: [...history.store, write('a', 1, 2, T + 1_900)] }, finalTables(3), expected);
    expect(rules(violations)).toEqual(['stale-write']);
  });

  it('flags a write without a lease check, and attributes it through the reply version it carries', () => {
    const history = cleanHistory();
    // Version 2 was served only to worker 0 (run a, fence 1): the unfenced write is a's, and late.
    const violations = check({ ...history, store: [...history.store, write(undefined, 1, 2, T + 1_900)] }, finalTables(3), expected);
    expect(rules(violations)).toEqual(['stale-write', 'unfenced-write']);
  });

  it('flags a release that landed after the lease passed to another run (unconditional release)', () => {
    const history = cleanHistory();
    // a's lease lapsed (T+2000), b took it over at T+2100, then a's delayed release landed.
    const store = [
      acquire('a', 1, T),
      write('a', 1, 2, T + 100),
      acquire('b', 2, T + 2_100),
      release('a', 1, T + 2_200),
      write('b', 2, 3, T + 2_300),
      release('b', 2, T + 2_400, I2),
    ];
    const runs = [
      history.runs[0]!,
      run(1, 'b', 2, T + 2_100, { interval: I2, summary: { outcome: 'succeeded', interval: I2, fence: 2 } }),
      history.runs[2]!,
    ];
    expect(rules(check({ ...history, store, runs }, finalTables(3), expected))).toEqual(['foreign-release']);
  });

  it('flags a lease granted while the previous holder still held it unexpired and had not released', () => {
    const history = cleanHistory();
    const store = [
      acquire('a', 1, T),
      renew('a', 1, T + 600), // a holds until T+2600
      acquire('b', 2, T + 1_000), // granted anyway: someone deleted a's lease
      release('a', 1, T + 1_100),
      write('b', 2, 3, T + 1_700),
      release('b', 2, T + 1_800, I2),
    ];
    const runs = [run(0, 'a', 1, T, { commits: [] }), history.runs[1]!, history.runs[2]!];
    const violations = check({ ...history, store, runs }, finalTables(3), expected);
    expect(rules(violations)).toEqual(['foreign-release', 'lease-overlap']);
  });

  it('does not flag a lease granted after the previous holder’s lease expired (holder killed)', () => {
    const history = cleanHistory();
    const store = [acquire('a', 1, T), acquire('b', 2, T + 2_100), write('b', 2, 3, T + 2_200), release('b', 2, T + 2_300, I2)];
    const runs = [
      { ...run(0, 'a', 1, T, { commits: [] }), killed: true, summary: undefined } as RunHistory,
      run(1, 'b', 2, T + 2_100, { interval: I2, summary: { outcome: 'succeeded', interval: I2, fence: 2 } }),
      run(2, 'c', 3, T + 2_500, { commits: [] }),
    ];
    const final = finalTables(3);
    const violations = check(
      {
        ...history,
        store: [...store, acquire('c', 3, T + 2_500), release('c', 3, T + 2_600)],
        runs,
        codeforces: [served(1, 0, 3, T + 2_110), served(2, 1, 3, T + 2_510)],
      },
      final,
      expected,
    );
    expect(violations).toEqual([]);
  });

  it('flags a lease set further ahead than its duration', () => {
    const history = cleanHistory();
    const store = history.store.map((op) => (op.kind === 'renew' ? { ...op, expiresAtMs: op.nowMs + 3 * LEASE } : op));
    expect(rules(check({ ...history, store }, finalTables(3), expected))).toEqual(['lease-too-long']);
  });

  it('flags two successes of one interval, and an interval that never succeeded', () => {
    const history = cleanHistory();
    const runs = [...history.runs];
    runs[1] = run(1, 'b', 2, T + 1_000); // b ran I1 again instead of I2
    const store = history.store.map((op) =>
      op.kind === 'release' && op.runId === 'b' ? { ...op, lastRun: { ...op.lastRun, interval: I1 } } : op,
    );
    const final = finalTables(3, { lease: { pk: 'lease#contest-sync', expiresAtMs: T, ledger: new Set([slotOf(I1)]) } });
    expect(rules(check({ ...history, runs, store }, final, expected))).toEqual(['duplicate-success', 'interval-not-done']);
  });

  it('flags a lease still held after the trial', () => {
    const final = finalTables(3, {
      lease: { pk: 'lease#contest-sync', holder: 'zombie', expiresAtMs: T + 60_000, ledger: new Set([slotOf(I1), slotOf(I2)]) },
    });
    expect(rules(check(cleanHistory(), final, expected))).toEqual(['lease-held-at-end']);
  });

  it('accepts a leftover holder whose lease has expired (killed holder)', () => {
    const final = finalTables(3, {
      lease: { pk: 'lease#contest-sync', holder: 'dead', expiresAtMs: T + 4_000, ledger: new Set([slotOf(I1), slotOf(I2)]) },
    });
    expect(check(cleanHistory(), final, expected)).toEqual([]);
  });

  it('flags contests that do not match the last successful reply (a stale write landed late)', () => {
    const stale = finalTables(3);
    const older = expected(2).contests[0]!;
    stale.contests[0] = { ...older, updatedAt: new Date(T).toISOString() };
    const violations = check(cleanHistory(), stale, expected);
    expect(rules(violations)).toEqual(['final-contests']);
    expect(violations[0]?.message).toMatch(/\[v2\].*≠.*\[v3\]/);
  });

  it('flags a cancelled contest left stored and reminders not moved or not deleted', () => {
    const final = finalTables(3);
    final.contests.push({ contestId: 3099, name: 'cancelled' });
    final.reminders[0] = { ...final.reminders[0]!, remindAt: 1 };
    final.reminders.push({ contestId: 3013, userId: 'u3', minutesBefore: 10, remindAt: 5 });
    const violations = check(cleanHistory(), final, expected);
    expect(rules(violations)).toEqual(['final-contests', 'final-reminders']);
    expect(violations.filter((v) => v.rule === 'final-reminders')).toHaveLength(2);
  });

  it('cannot vouch for the tables when no successful sync’s reply is known', () => {
    const history = { ...cleanHistory(), codeforces: [] };
    expect(rules(check(history, finalTables(3), expected))).toEqual(['unverifiable']);
  });

  describe('contention alone never fails an invocation (contention-only trials)', () => {
    /** Clean, plus a contender that skipped after contention outlasted its budget, and retries logged. */
    function contended(): TrialHistory {
      const history = cleanHistory();
      const runs = history.runs.map((r) => (r.runId === 'b' ? { ...r, contentionRetries: { renew: 2, commit: 1 } } : r));
      runs.push({
        worker: 3,
        runId: 'd',
        source: 'manual',
        killed: false,
        commits: [],
        summary: {
          outcome: 'skipped',
          reason: 'lease-held',
          holder: 'unknown',
          detail: 'DynamoDB contention did not clear within 4 attempts',
        },
        contentionRetries: { acquire: 3 },
      });
      return { ...history, runs, contentionOnly: true };
    }

    it('passes runs that succeeded or skipped through contention, even a skip whose holder is unknown', () => {
      expect(check(contended(), finalTables(3), expected)).toEqual([]);
    });

    it('flags a run that failed, and one that threw without a result, in a contention-only trial', () => {
      const history = contended();
      const runs = [
        ...history.runs,
        {
          worker: 4,
          runId: 'e',
          source: 'manual',
          killed: false,
          commits: [],
          summary: { outcome: 'failed', reason: 'lease' },
          contentionRetries: {},
        },
        { worker: 5, source: 'schedule', interval: I2, killed: false, commits: [] },
      ] satisfies RunHistory[];
      const violations = check({ ...history, runs }, finalTables(3), expected);
      expect(rules(violations)).toEqual(['contention-failure']);
      expect(violations.map((v) => v.message)).toEqual([
        'run e failed (lease) in a trial whose only fault was contention (retries logged: none)',
        'run of worker 5 ended without a result in a trial whose only fault was contention (retries logged: none)',
      ]);
    });

    it('names the retries of a run that failed after meeting contention (e.g. conflicts not retried)', () => {
      const history = contended();
      const runs = history.runs.map((r) =>
        r.runId === 'b' ? { ...r, summary: { outcome: 'failed' as const, reason: 'store' }, contentionRetries: { renew: 1 } } : r,
      );
      const violations = check({ ...history, runs }, finalTables(3), expected);
      expect(violations.filter((v) => v.rule === 'contention-failure').map((v) => v.message)).toEqual([
        'run b failed (store) in a trial whose only fault was contention (retries logged: renew 1)',
      ]);
    });

    it('does not count a sync whose reminder update lost to a claim the wire shows committed during the run (a race with the notifier)', () => {
      const history = contended();
      const error =
        'FencedWriteError: a write was refused by its condition (Update chaos-1-reminders {"contestKey":"codeforces:3023#05","userId":"u2"}): the item changed during the run; the next run redoes it';
      const runs = history.runs.map((r) =>
        r.runId === 'b' ? { ...r, summary: { outcome: 'failed' as const, reason: 'store', error } } : r,
      );
      const acquiredAtMs = runs.find((r) => r.runId === 'b')!.acquired!.acquiredAtMs;
      const claimed = { ...history, runs, claims: [{ key: 'codeforces:3023/u2', repliedAtMs: acquiredAtMs + 50 }] };
      expect(check(claimed, finalTables(3), expected)).toEqual([]);
      // No such claim (another row, or before the run): still contention's failure.
      for (const claims of [
        [{ key: 'codeforces:3023/u1', repliedAtMs: acquiredAtMs + 50 }],
        [{ key: 'codeforces:3023/u2', repliedAtMs: acquiredAtMs - 50 }],
        [],
      ]) {
        expect(rules(check({ ...claimed, claims }, finalTables(3), expected))).toEqual(['contention-failure']);
      }
    });

    it("judges another source job's runs alike: a claim of the row its update lost to excuses it, another platform's does not", () => {
      const history = contended();
      const error =
        'FencedWriteError: a write was refused by its condition (Update chaos-1-reminders {"contestKey":"leetcode:weekly-contest-91#05","userId":"u2"}): the item changed during the run; the next run redoes it';
      const runs = history.runs.map((r) =>
        r.runId === 'b' ? { ...r, summary: { outcome: 'failed' as const, reason: 'store', error } } : r,
      );
      const acquiredAtMs = runs.find((r) => r.runId === 'b')!.acquired!.acquiredAtMs;
      const judged = (key: string) =>
        judge({ ...history, runs, claims: [{ key, repliedAtMs: acquiredAtMs + 50 }] }, finalTables(3), undefined);
      expect(judged('leetcode:weekly-contest-91/u2')).toEqual({ violations: [], starved: [] });
      // The same user's reminder of a contest of another platform is another row.
      expect(rules(judged('codeforces:91/u2').violations)).toEqual(['contention-failure']);
    });

    describe('a run the harness starved is reported as starved, not judged', () => {
      /** Run e lost its lease: acquired at T + 2 s (lease 2 s), renewed once, ended at T + 4 s; window at stake T + 2.5 s .. T + 4 s. */
      const lost = (extra: Partial<RunHistory> = {}): RunHistory => ({
        worker: 4,
        runId: 'e',
        source: 'manual',
        killed: false,
        commits: [],
        acquired: { fence: 3, acquiredAtMs: T + 2_010, expiresAtMs: T + 2_000 + LEASE },
        renewals: [T + 2_500 + LEASE],
        startedAtMs: T + 1_900,
        endedAtMs: T + 4_000,
        summary: { outcome: 'failed', reason: 'lease-lost', error: 'LeaseLostError: lease lost: no renewal confirmed within 1333 ms' },
        ...extra,
      });
      const withRun = (r: RunHistory, extra: Partial<TrialHistory> = {}): TrialHistory => ({
        ...contended(),
        runs: [...contended().runs, r],
        ...extra,
      });

      it('its own process waiting for a CPU for a third of the window at stake', () => {
        const starvedRun = lost({ starvation: { waitMs: 600, samples: [{ atMs: T + 3_500, spanMs: 650, waitMs: 600, lagMs: 600 }] } });
        const judgement = judge(withRun(starvedRun), finalTables(3), expected);
        expect(judgement.violations).toEqual([]);
        expect(judgement.starved).toEqual([
          {
            rule: 'contention-failure',
            message:
              'run e failed (lease-lost: LeaseLostError: lease lost: no renewal confirmed within 1333 ms) in a trial whose only fault was contention (retries logged: none); starved 600 of 1500 ms (worker 600)',
          },
        ]);
      });

      it('the test process carrying its requests, or DynamoDB Local answering a lease write late', () => {
        const harness = judge(
          withRun(lost(), { harnessStalls: [{ fromMs: T + 3_000, toMs: T + 3_600, source: 'harness' }] }),
          finalTables(3),
          expected,
        );
        expect(harness.violations).toEqual([]);
        expect(harness.starved.map((note) => note.message.split('; ')[1])).toEqual(['starved 600 of 1500 ms (harness 600)']);
        const slowRenewal: StoreOp = { ...renew('e', 3, T + 3_000), forwardedAtMs: T + 3_001, repliedAtMs: T + 3_701 };
        const dynamo = judge(withRun(lost(), { store: [...contended().store, slowRenewal] }), finalTables(3), expected);
        expect(dynamo.violations).toEqual([]);
        expect(dynamo.starved.map((note) => note.message.split('; ')[1])).toEqual(['starved 600 of 1500 ms (dynamodb-local 600)']);
      });

      it('but a loss the harness took less than a third of is still the product’s, with the figures', () => {
        const barely = lost({ starvation: { waitMs: 400, samples: [{ atMs: T + 3_500, spanMs: 450, waitMs: 400, lagMs: 400 }] } });
        const judgement = judge(withRun(barely), finalTables(3), expected);
        expect(judgement.starved).toEqual([]);
        expect(judgement.violations.map((v) => [v.rule, v.message.split('; ')[1]])).toEqual([
          ['contention-failure', 'starved 400 of 1500 ms (worker 400)'],
        ]);
        // No figures at all (the probe's line lost): judged, as before.
        const unmeasured = lost({ startedAtMs: undefined, endedAtMs: undefined });
        expect(rules(check(withRun(unmeasured), finalTables(3), expected))).toEqual(['contention-failure']);
      });

      it('an interval, or the final sync, the quiet phase could not get through with every failed attempt starved', () => {
        const history = cleanHistory();
        const final = finalTables(3, { lease: { pk: 'lease#contest-sync', fence: 2, expiresAtMs: T, ledger: new Set([slotOf(I1)]) } });
        expect(rules(check(history, final, expected))).toEqual(['interval-not-done']);
        const starved = judge({ ...history, starvedIntervals: [I2] }, final, expected);
        expect(starved.violations).toEqual([]);
        expect(starved.starved.map((note) => note.rule)).toEqual(['interval-not-done']);
        // Another interval starved: this one is still judged.
        expect(rules(check({ ...history, starvedIntervals: [I1] }, final, expected))).toEqual(['interval-not-done']);

        const nothing = { ...history, runs: [], store: [] };
        const empty = finalTables(3, { lease: { pk: 'lease#contest-sync', fence: 0, expiresAtMs: T, ledger: new Set() } });
        expect(rules(check(nothing, empty, expected))).toEqual(['interval-not-done', 'unverifiable']);
        const starvedFinal = judge({ ...nothing, finalSyncStarved: true, starvedIntervals: [I1, I2] }, empty, expected);
        expect(starvedFinal.violations).toEqual([]);
        expect(starvedFinal.starved.map((note) => note.rule)).toEqual(['interval-not-done', 'interval-not-done', 'unverifiable']);
      });
    });

    it('does not apply where other faults could fail a run (a killed run, or a trial not marked contention-only)', () => {
      const history = contended();
      const failed = {
        worker: 4,
        runId: 'e',
        source: 'manual',
        killed: false,
        commits: [],
        summary: { outcome: 'failed', reason: 'lease-lost' },
      } satisfies RunHistory;
      const killed = { worker: 5, runId: 'f', source: 'manual', killed: true, commits: [] } satisfies RunHistory;
      expect(check({ ...history, runs: [...history.runs, killed] }, finalTables(3), expected)).toEqual([]);
      expect(check({ ...history, contentionOnly: false, runs: [...history.runs, failed] }, finalTables(3), expected)).toEqual([]);
    });
  });
});

describe('store history from the wire', () => {
  it('counts a transaction replayed with its ClientRequestToken after a dropped answer once, at its first success', () => {
    const tables = { contests: 'c', reminders: 'r', coordination: 'k' };
    const release = {
      ClientRequestToken: 'tok-1',
      TransactItems: [
        {
          Update: {
            TableName: 'k',
            Key: { pk: { S: 'lease#contest-sync' } },
            UpdateExpression: 'SET expiresAtMs = :now REMOVE holder',
            ExpressionAttributeValues: { ':runId': { S: 'a' }, ':fence': { N: '1' }, ':now': { N: String(T) } },
          },
        },
      ],
    };
    const wire = (seq: number, at: number, request: unknown) => ({
      seq,
      operation: 'TransactWriteItems',
      forwardedAtMs: at,
      repliedAtMs: at + 5,
      status: 200,
      request,
    });
    const ops = storeOps(
      [wire(0, T, release), wire(1, T + 3_000, release), wire(2, T + 4_000, { ...release, ClientRequestToken: 'tok-2' })],
      tables,
    );
    expect(ops.map((op) => [op.kind, op.forwardedAtMs])).toEqual([
      ['release', T],
      ['release', T + 4_000],
    ]);
  });
});
