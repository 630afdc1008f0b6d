/**
 * The chaos checker: a pure function from a trial's history and final tables to violations.
 *
 * Every rule is sound: it only reports what the recorded times prove. Times come from one clock
 * (all processes run on this machine). A run's acquisition landed between its send time
 * (`expiresAt − lease duration`, the `:now` of its condition) and its `acquiredAtMs`; a commit
 * landed after its `sentAtMs`; on the wire, a request landed between `forwardedAtMs` and
 * `repliedAtMs`. Under a correct lease, once fence g was acquired no write or release conditioned
 * on an older fence can land, and no acquisition succeeds while the previous holder's confirmed
 * lease is unexpired and not released.
 *
 * Contention (`contention-failure`): no invocation fails or throws because of DynamoDB contention
 * alone. Sound by construction of the trials it applies to, not by attributing each fault: in a
 * trial marked `contentionOnly` the proxies inject nothing but contention (transaction conflicts,
 * throttling, HTTP 500; no dropped connections), in bounded bursts — at most 3 consecutive faults
 * per kind of request of one worker, at most one of them a throttle, then a request that passes —
 * (a request that meets a held transaction's lock counts in the burst, and a full burst gets no
 * further injection until a request goes through), which is fewer than the retry budget of every operation (lease operations 4 attempts, commits 5,
 * each with up to 3 SDK attempts), and the trial has no other fault that can fail a run: no signals,
 * no failing Codeforces replies, no DynamoDB delays, a 9 s lease whose 3 s renewal window holds a
 * burst of conflicts plus one throttle. The store's reads (Scan, Query) are retried by the SDK alone
 * (3 attempts), so their bursts stay at 2. Transactions held in flight add genuine conflicts on top;
 * a contender that cannot decide then skips (`lease-held`, holder unknown), which is allowed. So in
 * such a trial any `failed` invocation, or one that ended without a result and was not killed, is a
 * violation. (Per-invocation attribution would also be possible — each worker has its own proxy —
 * but a run can fail for a reason that another worker's fault caused, such as a takeover after a
 * frozen holder; restricting the rule to contention-only trials keeps it free of such guesses.)
 *
 * Starvation (starvation.ts): the contention rule also assumes that every run had the CPU. A run
 * that the harness measurably starved (its process waiting for a CPU, the test process carrying its
 * requests waiting for one, DynamoDB Local answering its lease writes late, for a third of the
 * window at stake) is not judged by it: it is reported as `starved`, the harness's, with its
 * figures. So are an interval the quiet phase could not get done, and a final sync it could not
 * get through, when every attempt that failed was starved (`starvedIntervals`, `finalSyncStarved`).
 * Every other rule is free of timing and judged whatever the machine did.
 */
import { ledgerSlots, slotOf } from '@contest-sync/scheduled-singleton';
import type { ContestRow, ReminderRow } from './dataset.js';
import type { RunHistory, StoreOp } from './history.js';
import { describeStarvation, slowLeaseAnswers, starvationOfRun, type Stall } from './starvation.js';
import type { CodeforcesRecord } from './taps.js';
import { GATE_PREFIX, gateKeys } from '../../lambda/contests/bucket-gates.js';
import { isContestItem } from '../support/contests.js';
import { replyClockId } from '../../lambda/contests/model.js';

export type Rule =
  | 'fence-order'
  | 'fence-reused'
  | 'stale-commit'
  | 'stale-write'
  | 'unfenced-write'
  | 'foreign-release'
  | 'lease-overlap'
  | 'lease-too-long'
  | 'duplicate-success'
  | 'interval-not-done'
  | 'lease-held-at-end'
  | 'final-contests'
  | 'final-reminders'
  | 'unverifiable'
  | 'contention-failure'
  | 'foreign-platform-write'
  // Reminder delivery (delivery-checker.ts):
  | 'delivery-duplicate'
  | 'delivery-event-without-claim'
  | 'delivery-claim-without-event'
  | 'delivery-not-due'
  | 'delivery-unfenced'
  | 'delivery-stale-claim'
  | 'delivery-lost'
  | 'delivery-after-cancel'
  | 'delivery-final-pass'
  // Reported by the runner (liveness of the trial itself):
  | 'hung-worker'
  | 'worker-crashed'
  | 'no-final-sync';

export interface Violation {
  rule: Rule;
  message: string;
}

/** What the checker's verdict is: the product's violations, and what it left to the harness (starved runs, with their figures). */
export interface Judgement {
  violations: Violation[];
  /** Each under the rule it would have been judged by, had the harness not starved it. */
  starved: Violation[];
}

export interface FinalTables {
  contests: Record<string, unknown>[];
  reminders: Record<string, unknown>[];
  /** The lease item (pk `lease#contest-sync`), if any. */
  lease?: Record<string, unknown>;
  /** When the tables were read. */
  checkedAtMs: number;
}

export interface TrialHistory {
  leaseDurationMs: number;
  /** Scheduled intervals the trial delivered: each must have succeeded exactly once. */
  intervals: readonly string[];
  runs: readonly RunHistory[];
  store: readonly StoreOp[];
  codeforces: readonly CodeforcesRecord[];
  /** Contention was the trial's only fault, in bursts below the retry budgets: no run may fail. */
  contentionOnly?: boolean;
  /**
   * Reminder rows the delivery job claimed in committed transactions (`contestId/userId`, when the
   * claim landed). A sync whose reminder update is refused because a claim landed between its read
   * and its write fails by design (docs/tables.md: whichever writes second fails); that is a race
   * with the notifier, not contention, and the contention rule does not count it.
   */
  claims?: readonly { key: string; repliedAtMs: number }[];
  /** The test process's stalls while the trial ran (its starvation probe); DynamoDB Local's come from `store`. */
  harnessStalls?: readonly Stall[];
  /** Intervals the quiet phase gave up on with every failed attempt starved; and whether the final sync ended so. */
  starvedIntervals?: readonly string[];
  finalSyncStarved?: boolean;
  /**
   * The platform whose job the runs are (every item a write names must be its own: its contests,
   * their gates and reminder rows, its reply clock). Absent: not checked.
   */
  platform?: string;
}

/** Whether a Contests key or a reminder row's contest belongs to `platform` (`<platform>:<id>`, its gates, its reply clock). */
export function ownItem(platform: string, contestId: string): boolean {
  const id = contestId.startsWith(GATE_PREFIX) ? contestId.slice(GATE_PREFIX.length) : contestId;
  return id.startsWith(`${platform}:`) || id === replyClockId(platform);
}

export type Expectation = (version: number) => { contests: ContestRow[]; reminders: ReminderRow[] };

type Acquire = Extract<StoreOp, { kind: 'acquire' }>;

const CONTEST_FIELDS = [
  'platform',
  'platformId',
  'name',
  'type',
  'phase',
  'startTimeSeconds',
  'durationSeconds',
  'url',
  'expiresAt',
] as const;

/** The row a FencedWriteError names first when a reminder update was refused by its condition (its key: the bucket key and the user). */
const REFUSED_REMINDER = /refused by its condition \(Update \S+ (\{"contestKey":("(?:[^"\\]|\\.)*"),"userId":("(?:[^"\\]|\\.)*")\})/;

/** The run failed because its reminder update lost to a claim the wire shows committed while it ran. */
function lostToClaim(run: RunHistory, claims: readonly { key: string; repliedAtMs: number }[]): boolean {
  if (run.summary?.outcome !== 'failed' || run.summary.error === undefined) return false;
  const match = REFUSED_REMINDER.exec(run.summary.error);
  if (match === null) return false;
  // The claim names the row by its contest: the bucket key without its bucket.
  const contestId = (JSON.parse(match[2]!) as string).replace(/#\d{2}$/, '');
  const key = `${contestId}/${JSON.parse(match[3]!) as string}`;
  const since = run.acquired?.acquiredAtMs ?? 0;
  return claims.some((claim) => claim.key === key && claim.repliedAtMs >= since);
}

/** The violations alone (judge() also says what the harness starved). */
export function check(history: TrialHistory, final: FinalTables, expected: Expectation): Violation[] {
  return judge(history, final, expected).violations;
}

/**
 * `expected` absent (a source job whose reply the trial does not version): every rule but the
 * final tables' comparison.
 */
export function judge(history: TrialHistory, final: FinalTables, expected: Expectation | undefined): Judgement {
  const violations: Violation[] = [];
  const starved: Violation[] = [];
  const add = (rule: Rule, message: string): void => {
    violations.push({ rule, message });
  };
  const harness = [...(history.harnessStalls ?? []), ...slowLeaseAnswers(history.store)];
  const runsById = new Map(history.runs.flatMap((run) => (run.runId === undefined ? [] : [[run.runId, run] as const])));
  const acquires = history.store.filter((op): op is Acquire => op.kind === 'acquire' && op.outcome === 'ok' && op.fence !== undefined);

  // --- Contention alone never fails an invocation -----------------------------------------------
  if (history.contentionOnly === true) {
    for (const run of history.runs) {
      if (lostToClaim(run, history.claims ?? [])) continue;
      const ended =
        run.summary === undefined
          ? run.killed
            ? undefined
            : 'ended without a result'
          : run.summary.outcome === 'failed'
            ? `failed (${run.summary.reason ?? '?'}${run.summary.error !== undefined ? `: ${run.summary.error}` : ''})`
            : undefined;
      if (ended === undefined) continue;
      const retries = Object.entries(run.contentionRetries ?? {})
        .map(([operation, n]) => `${operation} ${n}`)
        .join(', ');
      const message = `run ${run.runId ?? `of worker ${run.worker}`} ${ended} in a trial whose only fault was contention (retries logged: ${retries || 'none'})`;
      const starvation = starvationOfRun(run, harness, history.leaseDurationMs);
      if (starvation?.starved === true)
        starved.push({ rule: 'contention-failure', message: `${message}; ${describeStarvation(starvation)}` });
      else add('contention-failure', starvation === undefined ? message : `${message}; ${describeStarvation(starvation)}`);
    }
  }

  // --- Fences: one run each, increasing in acquisition order (logs and store) ----------------
  const holders = new Map<number, Set<string>>();
  const noteHolder = (fence: number, runId: string): void => {
    const set = holders.get(fence) ?? new Set<string>();
    set.add(runId);
    holders.set(fence, set);
  };
  const logged = history.runs.flatMap((run) =>
    run.acquired !== undefined && run.runId !== undefined
      ? [{ runId: run.runId, ...run.acquired, sentAtMs: run.acquired.expiresAtMs - history.leaseDurationMs }]
      : [],
  );
  for (const a of logged) noteHolder(a.fence, a.runId);
  for (const a of acquires) noteHolder(a.fence!, a.runId);
  for (const [fence, runIds] of holders) {
    if (runIds.size > 1) add('fence-reused', `fence ${fence} was acquired by ${runIds.size} runs: ${[...runIds].join(', ')}`);
  }
  for (const a of logged) {
    for (const b of logged) {
      if (a.acquiredAtMs < b.sentAtMs && a.fence >= b.fence) {
        add(
          'fence-order',
          `run ${a.runId} acquired fence ${a.fence} before run ${b.runId} asked for the lease, which got fence ${b.fence}`,
        );
      }
    }
  }
  for (const a of acquires) {
    for (const b of acquires) {
      if (a.repliedAtMs < b.forwardedAtMs && a.fence! >= b.fence!) {
        add('fence-order', `the store granted fence ${a.fence} (run ${a.runId}) before fence ${b.fence} (run ${b.runId}) was asked for`);
      }
    }
  }

  // --- No write after a later fence was acquired --------------------------------------------
  for (const run of history.runs) {
    for (const commit of run.commits) {
      const fence = commit.fence ?? run.acquired?.fence;
      if (fence === undefined) continue;
      const later = logged.find((a) => a.fence > fence && commit.sentAtMs > a.acquiredAtMs);
      if (later !== undefined) {
        add(
          'stale-commit',
          `run ${run.runId} (fence ${fence}) committed a transaction sent at ${commit.sentAtMs}, ` +
            `${commit.sentAtMs - later.acquiredAtMs} ms after run ${later.runId} had acquired fence ${later.fence}`,
        );
      }
    }
  }

  // Who fetched which list version: attributes an unfenced write to the run that fetched its data.
  const runOfWorker = new Map(history.runs.map((run) => [run.worker, run]));
  const fetchedBy = new Map<number, Set<number>>();
  for (const record of history.codeforces) {
    if (record.version === undefined) continue;
    const workers = fetchedBy.get(record.version) ?? new Set<number>();
    workers.add(record.worker);
    fetchedBy.set(record.version, workers);
  }
  const fenceOfRun = (runId: string | undefined): number | undefined => {
    if (runId === undefined) return undefined;
    return runsById.get(runId)?.acquired?.fence ?? acquires.find((a) => a.runId === runId)?.fence;
  };
  const writerOf = (op: Extract<StoreOp, { kind: 'write' }>): { runId?: string; fence: number } | undefined => {
    if (op.check !== undefined) return op.check;
    if (op.versions.length !== 1) return undefined;
    const workers = fetchedBy.get(op.versions[0]!);
    if (workers === undefined || workers.size !== 1) return undefined;
    const runId = runOfWorker.get([...workers][0]!)?.runId;
    const fence = fenceOfRun(runId);
    return fence === undefined ? undefined : { ...(runId !== undefined ? { runId } : {}), fence };
  };

  for (const op of history.store) {
    if (op.kind !== 'write' || op.outcome === 'refused') continue;
    const platform = history.platform;
    const foreign = platform === undefined ? [] : (op.itemContests ?? []).filter((id) => !ownItem(platform, id));
    if (foreign.length > 0)
      add(
        'foreign-platform-write',
        `a transaction of ${platform}'s job wrote items of another platform: ${[...new Set(foreign)].join(', ')}`,
      );
    if (op.check === undefined && op.outcome === 'ok') {
      add(
        'unfenced-write',
        `a transaction of ${op.actions} data writes (versions ${op.versions.join(',') || 'none'}) committed without a lease ConditionCheck`,
      );
    }
    if (op.outcome !== 'ok') continue;
    const writer = writerOf(op);
    if (writer === undefined) continue;
    const later = acquires.find((a) => a.fence! > writer.fence && a.repliedAtMs < op.forwardedAtMs);
    if (later !== undefined) {
      add(
        'stale-write',
        `a write of fence ${writer.fence} (run ${writer.runId ?? '?'}, versions ${op.versions.join(',')}) reached DynamoDB ` +
          `${op.forwardedAtMs - later.repliedAtMs} ms after fence ${later.fence} was granted to run ${later.runId}`,
      );
    }
  }

  // --- The store's record of the lease: one holder at a time --------------------------------
  for (const op of history.store) {
    if (op.kind === 'release' && op.outcome === 'ok') {
      const later = acquires.find((a) => a.fence! > op.fence && a.repliedAtMs < op.forwardedAtMs);
      if (later !== undefined) {
        add(
          'foreign-release',
          `run ${op.runId} (fence ${op.fence}) released the lease after fence ${later.fence} had been granted to run ${later.runId}`,
        );
      }
    }
    if ((op.kind === 'acquire' || op.kind === 'renew') && op.outcome === 'ok' && op.expiresAtMs - op.nowMs > history.leaseDurationMs) {
      add('lease-too-long', `run ${op.runId} set the lease ${op.expiresAtMs - op.nowMs} ms ahead (duration ${history.leaseDurationMs} ms)`);
    }
  }
  for (const next of acquires) {
    const previous = acquires.find((a) => a.fence === next.fence! - 1);
    if (previous === undefined) continue;
    const holder = previous.runId;
    const confirmed = history.store.filter(
      (op) =>
        (op.kind === 'acquire' || op.kind === 'renew') && op.runId === holder && op.outcome === 'ok' && op.repliedAtMs < next.forwardedAtMs,
    ) as Extract<StoreOp, { kind: 'acquire' | 'renew' }>[];
    const expiresAtMs = Math.max(...confirmed.map((op) => op.expiresAtMs));
    const releasedBefore = history.store.some(
      (op) => op.kind === 'release' && op.runId === holder && op.outcome !== 'refused' && op.forwardedAtMs < next.repliedAtMs,
    );
    if (expiresAtMs > next.nowMs && !releasedBefore) {
      add(
        'lease-overlap',
        `fence ${next.fence} was granted to run ${next.runId} while run ${holder} (fence ${previous.fence}) held the lease ` +
          `for ${expiresAtMs - next.nowMs} ms more and had not released it`,
      );
    }
  }

  // --- One success per scheduled interval; every interval succeeded ------------------------
  const succeededBy = new Map<string, Set<string>>();
  const noteSuccess = (interval: string, runId: string): void => {
    const set = succeededBy.get(interval) ?? new Set<string>();
    set.add(runId);
    succeededBy.set(interval, set);
  };
  for (const run of history.runs) {
    if (run.source === 'schedule' && run.summary?.outcome === 'succeeded' && run.runId !== undefined) {
      noteSuccess(run.summary.interval ?? run.interval ?? '?', run.runId);
    }
  }
  for (const op of history.store) {
    if (
      op.kind === 'release' &&
      op.outcome === 'ok' &&
      op.marksDone &&
      op.lastRun?.outcome === 'succeeded' &&
      typeof op.lastRun.interval === 'string'
    ) {
      noteSuccess(op.lastRun.interval, op.runId);
    }
  }
  for (const [interval, runIds] of succeededBy) {
    if (runIds.size > 1) add('duplicate-success', `interval ${interval} succeeded ${runIds.size} times: ${[...runIds].join(', ')}`);
  }
  // The interval ledger holds slots (epoch minutes) of the intervals that succeeded.
  const doneSet = ledgerSlots(final.lease);
  for (const interval of history.intervals) {
    if (doneSet.has(slotOf(interval))) continue;
    const message = `interval ${interval} never succeeded (not in the ledger after the quiet phase)`;
    if (history.starvedIntervals?.includes(interval) === true)
      starved.push({ rule: 'interval-not-done', message: `${message}; every failed attempt of the quiet phase was starved` });
    else add('interval-not-done', message);
  }

  // --- No lease left held -------------------------------------------------------------------
  if (final.lease?.holder !== undefined) {
    const expiresAtMs = Number(final.lease.expiresAtMs);
    if (!(expiresAtMs <= final.checkedAtMs)) {
      add(
        'lease-held-at-end',
        `after the trial the lease is still held by ${String(final.lease.holder)} until ${expiresAtMs} (checked at ${final.checkedAtMs})`,
      );
    }
  }

  // --- Final tables: what the last successful sync's reply implies ------------------------
  if (expected === undefined) return { violations, starved };
  const successes = [
    ...history.runs.flatMap((run) =>
      run.summary?.outcome === 'succeeded' && run.runId !== undefined
        ? [{ runId: run.runId, fence: run.summary.fence ?? run.acquired?.fence }]
        : [],
    ),
    ...history.store.flatMap((op) =>
      op.kind === 'release' && op.outcome === 'ok' && op.lastRun?.outcome === 'succeeded' ? [{ runId: op.runId, fence: op.fence }] : [],
    ),
  ].filter((s): s is { runId: string; fence: number } => s.fence !== undefined);
  const last = successes.sort((a, b) => b.fence - a.fence)[0];
  if (last === undefined) {
    const message = 'no run succeeded: the final tables cannot be checked';
    if (history.finalSyncStarved === true)
      starved.push({ rule: 'unverifiable', message: `${message}; the final sync's failed attempts were starved` });
    else add('unverifiable', message);
    return { violations, starved };
  }
  const worker = runsById.get(last.runId)?.worker;
  const reply = [...history.codeforces].reverse().find((record) => record.worker === worker && record.version !== undefined);
  if (reply?.version === undefined) {
    add('unverifiable', `the reply of the last successful sync (run ${last.runId}, fence ${last.fence}) was not recorded`);
    return { violations, starved };
  }
  const want = expected(reply.version);
  compareContests(final.contests, want.contests, reply.version, last, add);
  compareReminders(final.reminders, want.reminders, add);
  return { violations, starved };
}

function compareContests(
  actual: Record<string, unknown>[],
  expected: ContestRow[],
  version: number,
  last: { runId: string; fence: number },
  add: (rule: Rule, message: string) => void,
): void {
  // The sync's reply clock and the bucket gates are not contests.
  const byId = new Map(actual.filter(isContestItem).map((item) => [String(item.contestId), item]));
  const why = `the last successful sync (run ${last.runId}, fence ${last.fence}) got reply v${version}`;
  for (const want of expected) {
    const item = byId.get(want.contestId);
    byId.delete(want.contestId);
    if (item === undefined) {
      add('final-contests', `contest ${want.contestId} is missing; ${why}`);
      continue;
    }
    const wrong = CONTEST_FIELDS.filter((field) => item[field] !== want[field]);
    if (wrong.length > 0 || typeof item.updatedAt !== 'string') {
      const detail = wrong.map((field) => `${field} ${JSON.stringify(item[field])} ≠ ${JSON.stringify(want[field])}`).join('; ');
      add('final-contests', `contest ${want.contestId}: ${detail || 'no updatedAt'}; ${why}`);
    }
  }
  for (const id of byId.keys()) add('final-contests', `contest ${id} should not be stored; ${why}`);
  compareGates(actual, add);
}

/**
 * The bucket gates agree with their contests (lambda/contests/bucket-gates.ts): a contest with a
 * `dueStart` has each bucket's gate holding it, and no gate exists for a contest without one —
 * whatever runs crashed, lost their lease or raced.
 */
function compareGates(actual: Record<string, unknown>[], add: (rule: Rule, message: string) => void): void {
  const gates = new Map(
    actual.filter((item) => String(item.contestId).startsWith(GATE_PREFIX)).map((item) => [String(item.contestId), item]),
  );
  for (const contest of actual.filter(isContestItem)) {
    for (const key of gateKeys(String(contest.contestId))) {
      const gate = gates.get(key);
      gates.delete(key);
      if (gate?.dueStart !== contest.dueStart)
        add(
          'final-contests',
          `gate ${key} holds ${JSON.stringify(gate?.dueStart)}, its contest's dueStart is ${JSON.stringify(contest.dueStart)}`,
        );
    }
  }
  for (const key of gates.keys()) add('final-contests', `gate ${key} has no contest`);
}

function compareReminders(actual: Record<string, unknown>[], expected: ReminderRow[], add: (rule: Rule, message: string) => void): void {
  const key = (r: { contestId: unknown; userId: unknown }) => `${String(r.contestId)}/${String(r.userId)}`;
  const byKey = new Map(actual.map((item) => [key(item as { contestId: unknown; userId: unknown }), item]));
  for (const want of expected) {
    const item = byKey.get(key(want));
    byKey.delete(key(want));
    if (item === undefined) {
      add('final-reminders', `reminder ${key(want)} is missing`);
    } else if (
      item.remindAt !== want.remindAt ||
      item.minutesBefore !== want.minutesBefore ||
      (item.notifiedAt !== undefined && typeof item.notifiedStart !== 'number')
    ) {
      // Sent (notifiedAt) only by the delivery job's claim, which records the start it sent for;
      // whether that claim was right is the delivery checker's (delivery-checker.ts).
      add(
        'final-reminders',
        `reminder ${key(want)}: remindAt ${String(item.remindAt)} ≠ ${want.remindAt} (minutesBefore ${String(item.minutesBefore)})`,
      );
    }
  }
  for (const stale of byKey.keys()) add('final-reminders', `reminder ${stale} should not be stored`);
}
