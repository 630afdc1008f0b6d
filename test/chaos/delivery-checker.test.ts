/**
 * The delivery checker on hand-made histories: a clean one passes (writes whose outcome or order
 * is uncertain convict nobody), and a history that breaks each rule is reported under that rule.
 * And the wire parser that feeds it reads a sync's reminder updates and a claim transaction as
 * the functions send them (marshalled).
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { checkDelivery, type DeliveryFinal, type DeliveryTrialHistory } from './delivery-checker.js';
import {
  claimDueWrites,
  claimTransactions,
  reminderKey,
  seededDue,
  syncDueWrites,
  type ClaimTransaction,
  type DueWrite,
  type EventRecord,
} from './delivery-history.js';
import type { WireRecord } from './taps.js';
import { contestKeyOf } from '../../lambda/reminders/table.js';

const T = 1_750_000_000_000;
const BASE = T / 1000;
const A = { contestId: 'codeforces:3021', userId: 'u1' };
const B = { contestId: 'codeforces:3023', userId: 'u1' };
const C = { contestId: 'codeforces:3099', userId: 'u1' };
const keyOf = (r: { contestId: string; userId: string }) => reminderKey(r.contestId, r.userId);
// A: due 5 s into the trial; B: due 10 s in, moved 20 s later by a sync at +2 s.
const A_DUE = { dueAt: BASE + 5, dueStart: BASE + 1205 };
const B_DUE = { dueAt: BASE + 10, dueStart: BASE + 1510 };
const B_MOVED = { dueAt: BASE + 30, dueStart: BASE + 1530 };

const event = (
  r: { contestId: string; userId: string },
  due: { dueAt: number; dueStart: number },
  runId: string,
  fence: number,
  eventId = `e-${keyOf(r)}-${due.dueStart}`,
): EventRecord => ({
  eventId,
  key: keyOf(r),
  ...r,
  startTimeSeconds: due.dueStart,
  dueAt: due.dueAt,
  runId,
  fence,
});

function claimTxn(
  at: number,
  runId: string,
  fence: number,
  rows: { r: { contestId: string; userId: string }; due: { dueAt: number; dueStart: number } }[],
  extra: Partial<ClaimTransaction> = {},
): ClaimTransaction {
  return {
    forwardedAtMs: at,
    repliedAtMs: at + 10,
    outcome: 'ok',
    check: { runId, fence },
    claims: rows.map(({ r, due }) => ({ key: keyOf(r), ...r, ...due, nowSeconds: Math.floor(at / 1000) })),
    events: rows.map(({ r, due }) => event(r, due, runId, fence)),
    ...extra,
  };
}

const syncWrite = (
  r: { contestId: string; userId: string },
  at: number,
  due: DueWrite['due'],
  outcome: DueWrite['outcome'] = 'ok',
): DueWrite => ({
  key: keyOf(r),
  by: 'sync',
  forwardedAtMs: at,
  repliedAtMs: at + 20,
  outcome,
  due,
});

const seed = seededDue([
  { ...A, contestKey: contestKeyOf(A.contestId, A.userId), minutesBefore: 20, remindAt: A_DUE.dueAt, ...A_DUE },
  { ...B, contestKey: contestKeyOf(B.contestId, B.userId), minutesBefore: 25, remindAt: B_DUE.dueAt, ...B_DUE },
  { ...C, contestKey: contestKeyOf(C.contestId, C.userId), minutesBefore: 30, remindAt: BASE + 3 },
]);

/** r1 (fence 1) sends A at +6 s; the sync moves B at +2 s; r2 (fence 2) sends B at its new time. */
function clean(): { history: DeliveryTrialHistory; final: DeliveryFinal } {
  const txns = [claimTxn(T + 6_000, 'r1', 1, [{ r: A, due: A_DUE }]), claimTxn(T + 31_000, 'r2', 2, [{ r: B, due: B_MOVED }])];
  return {
    history: {
      dueWrites: [...seed, syncWrite(B, T + 2_000, B_MOVED), ...claimDueWrites(txns)],
      claimTransactions: txns,
      leaseGrants: [
        { runId: 'r1', fence: 1, forwardedAtMs: T + 1_000, repliedAtMs: T + 1_004 },
        { runId: 'r2', fence: 2, forwardedAtMs: T + 30_000, repliedAtMs: T + 30_004 },
      ],
      deliveredUntilSeconds: BASE + 40,
    },
    final: {
      outbox: txns.flatMap((txn) => txn.events),
      reminders: [
        { ...A, notifiedStart: A_DUE.dueStart, notifiedAt: BASE + 6 },
        { ...B, notifiedStart: B_MOVED.dueStart, notifiedAt: BASE + 31 },
        { ...C, paused: 'vanished' },
        { contestId: 'codeforces:3021', userId: 'u9', dueAt: BASE + 600, dueStart: BASE + 1205 },
      ],
    },
  };
}

const rules = (history: DeliveryTrialHistory, final: DeliveryFinal) => checkDelivery(history, final).map((v) => v.rule);

describe('delivery checker', () => {
  it('passes a clean history: each due reminder once per start, fenced, with its event', () => {
    const { history, final } = clean();
    expect(checkDelivery(history, final)).toEqual([]);
  });

  it('convicts nobody on uncertain evidence: a pause of unknown outcome, or one that overlaps the claim', () => {
    const { history, final } = clean();
    // A sync write that may or may not have paused A before it was claimed; another that overlaps the claim.
    const dueWrites = [...history.dueWrites, syncWrite(A, T + 3_000, undefined, 'unknown'), syncWrite(A, T + 5_995, undefined)];
    expect(checkDelivery({ ...history, dueWrites }, final)).toEqual([]);
  });

  it('delivery-duplicate: one reminder and start claimed twice, or two events for it in the outbox', () => {
    const { history, final } = clean();
    const again = claimTxn(T + 7_000, 'r1', 1, [{ r: A, due: A_DUE }]);
    expect(rules({ ...history, claimTransactions: [...history.claimTransactions, again] }, final)).toContain('delivery-duplicate');
    // An event id that is not a function of (reminder, start) alone: a second event for one start.
    const second = claimTxn(T + 7_000, 'r1', 1, [{ r: A, due: A_DUE }]);
    second.events = [event(A, A_DUE, 'r1', 1, 'e-other')];
    const found = rules(
      { ...history, claimTransactions: [...history.claimTransactions, second] },
      { ...final, outbox: [...final.outbox, ...second.events] },
    );
    expect(found.filter((rule) => rule === 'delivery-duplicate')).toHaveLength(2);
  });

  it('per intent: a reminder set again after its send (a new intent) is told once more for the same start; the same intent twice is a duplicate', () => {
    const { history, final } = clean();
    const first = claimTxn(T + 40_000, 'r2', 2, [{ r: { contestId: 'codeforces:3022', userId: 'app-1' }, due: A_DUE }]);
    first.claims[0]!.intent = 'i1';
    const second = claimTxn(T + 41_000, 'r2', 2, [{ r: { contestId: 'codeforces:3022', userId: 'app-1' }, due: A_DUE }]);
    second.claims[0]!.intent = 'i2';
    second.events = [event({ contestId: 'codeforces:3022', userId: 'app-1' }, A_DUE, 'r2', 2, 'e-i2')];
    const appWrite = (at: number, intent: string) => ({
      key: keyOf({ contestId: 'codeforces:3022', userId: 'app-1' }),
      by: 'app' as const,
      forwardedAtMs: at,
      repliedAtMs: at + 5,
      outcome: 'ok' as const,
      due: A_DUE,
      intent,
    });
    const dueWrites = [...history.dueWrites, appWrite(T + 39_000, 'i1'), appWrite(T + 40_500, 'i2'), ...claimDueWrites([first, second])];
    const both = { ...history, dueWrites, claimTransactions: [...history.claimTransactions, first, second] };
    const outbox = [...final.outbox, ...first.events, ...second.events];
    expect(rules(both, { ...final, outbox })).toEqual([]);
    second.claims[0]!.intent = 'i1';
    expect(rules(both, { ...final, outbox })).toContain('delivery-duplicate');
  });

  it('delivery-after-cancel: an intent claimed after the cancel of its row landed', () => {
    const { history, final } = clean();
    const r = { contestId: 'codeforces:3022', userId: 'app-2' };
    const claim = claimTxn(T + 45_000, 'r2', 2, [{ r, due: A_DUE }]);
    claim.claims[0]!.intent = 'i9';
    const dueWrites = [
      ...history.dueWrites,
      { key: keyOf(r), by: 'app' as const, forwardedAtMs: T + 39_000, repliedAtMs: T + 39_005, outcome: 'ok' as const, due: A_DUE },
      ...claimDueWrites([claim]),
    ];
    const set = {
      key: keyOf(r),
      kind: 'set' as const,
      intent: 'i9',
      forwardedAtMs: T + 39_000,
      repliedAtMs: T + 39_005,
      outcome: 'ok' as const,
    };
    const cancel = { key: keyOf(r), kind: 'cancel' as const, forwardedAtMs: T + 44_000, repliedAtMs: T + 44_005, outcome: 'ok' as const };
    const withClaim = { ...history, dueWrites, claimTransactions: [...history.claimTransactions, claim] };
    const outbox = [...final.outbox, ...claim.events];
    expect(rules({ ...withClaim, appWrites: [set] }, { ...final, outbox })).toEqual([]);
    expect(rules({ ...withClaim, appWrites: [set, cancel] }, { ...final, outbox })).toContain('delivery-after-cancel');
    // A cancel that lands after the claim was sent convicts nobody (the event was committed first).
    expect(
      rules({ ...withClaim, appWrites: [set, { ...cancel, forwardedAtMs: T + 46_000, repliedAtMs: T + 46_005 }] }, { ...final, outbox }),
    ).toEqual([]);
  });

  it('delivery-event-without-claim: an event no transaction wrote, one written without its claim, one naming another fence', () => {
    const { history, final } = clean();
    const stray = event(C, { dueAt: BASE + 3, dueStart: BASE + 1803 }, 'r1', 1, 'e-stray');
    expect(rules(history, { ...final, outbox: [...final.outbox, stray] })).toEqual(['delivery-event-without-claim']);

    const alone = claimTxn(T + 8_000, 'r1', 1, []);
    alone.events = [stray];
    expect(
      rules({ ...history, claimTransactions: [...history.claimTransactions, alone] }, { ...final, outbox: [...final.outbox, stray] }),
    ).toEqual(['delivery-event-without-claim', 'delivery-event-without-claim']);

    const misnamed = { ...final, outbox: final.outbox.map((e) => (e.key === keyOf(A) ? { ...e, fence: 7 } : e)) };
    expect(rules(history, misnamed)).toEqual(['delivery-event-without-claim']);
  });

  it('delivery-claim-without-event: a claim committed without its event, an event missing from the outbox, a row marked sent without one', () => {
    const { history, final } = clean();
    const split = history.claimTransactions.map((txn, i) => (i === 0 ? { ...txn, events: [] } : txn));
    const outboxWithout = final.outbox.filter((e) => e.key !== keyOf(A));
    expect(rules({ ...history, claimTransactions: split }, { ...final, outbox: outboxWithout })).toEqual([
      'delivery-claim-without-event',
      'delivery-claim-without-event',
    ]);
    expect(rules(history, { ...final, outbox: outboxWithout })).toEqual(['delivery-claim-without-event', 'delivery-claim-without-event']);
    const markedOnly = {
      ...final,
      reminders: [...final.reminders, { contestId: 'codeforces:3022', userId: 'u4', notifiedStart: BASE + 1815 }],
    };
    expect(rules(history, markedOnly)).toEqual(['delivery-claim-without-event']);
  });

  it('delivery-not-due: claimed before its due time, at a start the sync had moved it from, or never due', () => {
    const { history, final } = clean();
    const withTxn = (txn: ClaimTransaction) => {
      const claimTransactions = [...history.claimTransactions, txn];
      return rules(
        { ...history, claimTransactions, dueWrites: [...seed, syncWrite(B, T + 2_000, B_MOVED), ...claimDueWrites(claimTransactions)] },
        { ...final, outbox: [...final.outbox, ...txn.events] },
      );
    };
    // B claimed at its new time, but 3 s before it was due.
    const early = claimTxn(T + 27_000, 'r2', 2, [{ r: B, due: B_MOVED }]);
    expect(
      rules(
        {
          ...history,
          claimTransactions: [history.claimTransactions[0]!, early],
          dueWrites: [...seed, syncWrite(B, T + 2_000, B_MOVED), ...claimDueWrites([history.claimTransactions[0]!, early])],
        },
        { ...final, outbox: [history.claimTransactions[0]!.events[0]!, ...early.events] },
      ),
    ).toEqual(['delivery-not-due']);
    // B claimed again at the old start after the sync had certainly moved it (another start: no duplicate).
    expect(withTxn(claimTxn(T + 35_000, 'r2', 2, [{ r: B, due: B_DUE }]))).toEqual(['delivery-not-due']);
    // C (its contest cancelled) was never due.
    expect(withTxn(claimTxn(T + 12_000, 'r1', 1, [{ r: C, due: { dueAt: BASE + 3, dueStart: BASE + 1803 } }]))).toEqual([
      'delivery-not-due',
    ]);
  });

  it('delivery-unfenced and delivery-stale-claim: a claim without the lease check, or sent after a later fence was granted', () => {
    const { history, final } = clean();
    const { check: _check, ...unfencedTxn } = history.claimTransactions[0]!;
    const unfenced = [unfencedTxn, history.claimTransactions[1]!];
    // The event names its run and fence; the transaction carried no check: both rules see it.
    expect(rules({ ...history, claimTransactions: unfenced }, final)).toEqual(['delivery-event-without-claim', 'delivery-unfenced']);
    // r1 (fence 1) sends A after fence 2 was granted to r2 (at +5 s).
    const grants = [history.leaseGrants[0]!, { runId: 'r2', fence: 2, forwardedAtMs: T + 5_000, repliedAtMs: T + 5_004 }];
    expect(rules({ ...history, leaseGrants: grants }, final)).toEqual(['delivery-stale-claim']);
  });

  it('delivery-lost: a row still due after the last pass that began after its due time', () => {
    const { history, final } = clean();
    const stuck = {
      ...final,
      reminders: [...final.reminders, { contestId: 'codeforces:3022', userId: 'u1', dueAt: BASE + 15, dueStart: BASE + 1815 }],
    };
    expect(rules(history, stuck)).toEqual(['delivery-lost']);
    // Not due yet when the last pass began: not owed.
    expect(rules({ ...history, deliveredUntilSeconds: BASE + 14 }, stuck)).toEqual([]);
  });
});

describe('delivery history from the wire', () => {
  const tables = { contests: 'c', reminders: 'r', coordination: 'k', outbox: 'o' };
  const record = (seq: number, request: unknown, status = 200): WireRecord => ({
    seq,
    operation: 'TransactWriteItems',
    forwardedAtMs: T + seq * 100,
    repliedAtMs: T + seq * 100 + 5,
    status,
    request,
  });
  const m = (value: Record<string, unknown>) => marshall(value, { removeUndefinedValues: true });

  it('reads the syncs due and paused updates, and a claim transaction with its lease check and event (a retried token once)', () => {
    const syncTxn = {
      TransactItems: [
        {
          Update: {
            TableName: 'r',
            Key: m({ contestKey: contestKeyOf('codeforces:3023', 'u1'), userId: 'u1' }),
            UpdateExpression: 'SET #dueAt = :dueAt, #dueStart = :dueStart',
            ExpressionAttributeValues: m({ ':mb': 25, ':dueAt': B_MOVED.dueAt, ':dueStart': B_MOVED.dueStart }),
          },
        },
        {
          Update: {
            TableName: 'r',
            Key: m({ contestKey: contestKeyOf('codeforces:3021', 'u1'), userId: 'u1' }),
            UpdateExpression: 'SET #paused = :paused REMOVE #dueAt, #dueShard, #dueStart',
            ExpressionAttributeValues: m({ ':mb': 20, ':paused': 'held' }),
          },
        },
        { Put: { TableName: 'c', Item: m({ contestId: 'codeforces:3021' }) } },
      ],
    };
    expect(syncDueWrites([record(1, syncTxn), record(2, syncTxn, 400)], tables).map((w) => [w.key, w.outcome, w.due])).toEqual([
      ['codeforces:3023/u1', 'ok', B_MOVED],
      ['codeforces:3021/u1', 'ok', undefined],
      ['codeforces:3023/u1', 'refused', B_MOVED],
      ['codeforces:3021/u1', 'refused', undefined],
    ]);

    const claim = {
      ClientRequestToken: 'tok-1',
      TransactItems: [
        {
          ConditionCheck: {
            TableName: 'k',
            Key: m({ pk: 'lease#reminder-delivery#0' }),
            ConditionExpression: 'holder = :runId AND fence = :fence',
            ExpressionAttributeValues: m({ ':runId': 'r1', ':fence': 4 }),
          },
        },
        {
          Update: {
            TableName: 'r',
            Key: m({ contestKey: contestKeyOf('codeforces:3021', 'u1'), userId: 'u1' }),
            UpdateExpression: 'SET notifiedAt = :now, notifiedStart = :start, paused = :notified REMOVE dueAt, dueShard, dueStart',
            ExpressionAttributeValues: m({
              ':now': BASE + 6,
              ':start': A_DUE.dueStart,
              ':seen': A_DUE.dueAt,
              ':mb': 20,
              ':notified': 'notified',
            }),
          },
        },
        {
          Put: {
            TableName: 'o',
            Item: m({
              pk: 'src#e1',
              eventId: 'e1',
              detailType: 'ReminderDue',
              detail: JSON.stringify({ eventId: 'e1', ...A, startTimeSeconds: A_DUE.dueStart, dueAt: A_DUE.dueAt }),
              runId: 'r1',
              fence: 4,
            }),
          },
        },
      ],
    };
    const txns = claimTransactions([record(3, claim), record(4, claim)], tables, 'lease#reminder-delivery#0');
    expect(txns).toHaveLength(1);
    expect(txns[0]).toMatchObject({
      outcome: 'ok',
      check: { runId: 'r1', fence: 4 },
      claims: [{ key: 'codeforces:3021/u1', ...A_DUE, nowSeconds: BASE + 6 }],
      events: [{ eventId: 'e1', key: 'codeforces:3021/u1', startTimeSeconds: A_DUE.dueStart, dueAt: A_DUE.dueAt, runId: 'r1', fence: 4 }],
    });
    // The syncs' transactions are not claims; a claim transaction is not a sync's due write.
    expect(claimTransactions([record(1, syncTxn)], tables, 'lease#reminder-delivery#0')).toEqual([]);
    expect(syncDueWrites([record(3, claim)], tables)).toEqual([]);
  });
});
