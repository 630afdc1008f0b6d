/**
 * The delivery checker: "exactly once per reminder and start", on what a chaos trial recorded of
 * reminder delivery (delivery-history.ts) and the final Reminders and outbox tables. Pure. Like
 * the sync's checker (checker.ts), it flags only what the recorded times prove; a write whose
 * outcome is unknown may have landed (it can justify, never convict).
 *
 * The rules, one function each:
 *   onceEach             — (delivery-duplicate) at most one committed claim and one outbox event
 *                          per (reminder, intent, start): the user's intent (the write path stamps a
 *                          new one at every set that changes it) is told once per start;
 *   eventsHaveClaims     — (delivery-event-without-claim) every outbox event was written in a
 *                          transaction that claimed its row at its start, by the run and fence the
 *                          transaction's lease check names;
 *   claimsHaveEvents     — (delivery-claim-without-event) every committed claim wrote its event in
 *                          the same transaction, and it is in the outbox; every row the final
 *                          table shows sent (`notifiedStart`) has its event;
 *   claimsWereDue        — (delivery-not-due) a claim at (dueAt, dueStart) was sent no earlier than
 *                          its due time, and the row was due at exactly that time and start as the
 *                          seed or a sync wrote it, not undone (paused, re-timed, claimed) by a
 *                          write that landed between that one and the claim;
 *   claimsFenced         — (delivery-unfenced, delivery-stale-claim) every committed claim carried
 *                          the delivery lease's check, and reached DynamoDB before any later fence
 *                          of that lease was granted;
 *   nothingLost          — (delivery-lost) once the faults stopped and a last pass ran, no row is
 *                          left due at or before the time that pass began;
 *   nothingAfterCancel   — (delivery-after-cancel) no claim of an intent committed after the app's
 *                          cancel of its row landed (a cancel deletes the row: the intent is over).
 */
import type { Rule, Violation } from './checker.js';
import {
  reminderKey,
  type AppWrite,
  type ClaimRecord,
  type ClaimTransaction,
  type DueWrite,
  type EventRecord,
  type LeaseGrant,
} from './delivery-history.js';

export interface DeliveryTrialHistory {
  /** Every write that set a row's due state: the seed, the syncs' updates, the claims. */
  dueWrites: readonly DueWrite[];
  /** The delivery job's claim transactions. */
  claimTransactions: readonly ClaimTransaction[];
  /** The delivery lease's grants. */
  leaseGrants: readonly LeaseGrant[];
  /** The app's sets and cancels through the write path (absent: no app in the trial). */
  appWrites?: readonly AppWrite[];
  /**
   * When the last delivery pass (faults off, after the final sync) began, epoch s; absent when no
   * such pass succeeded (the runner reports that) and then nothing can be required delivered.
   */
  deliveredUntilSeconds?: number;
}

export interface DeliveryFinal {
  /** The outbox table's ReminderDue items, as scanned. */
  outbox: readonly EventRecord[];
  reminders: readonly Record<string, unknown>[];
}

type Add = (rule: Rule, message: string) => void;

const startKey = (key: string, start: number): string => `${key}@${start}`;
const committed = (txns: readonly ClaimTransaction[]) => txns.filter((txn) => txn.outcome === 'ok');

export function checkDelivery(history: DeliveryTrialHistory, final: DeliveryFinal): Violation[] {
  const violations: Violation[] = [];
  const add: Add = (rule, message) => void violations.push({ rule, message });
  onceEach(history, final, add);
  eventsHaveClaims(history, final, add);
  claimsHaveEvents(history, final, add);
  claimsWereDue(history, add);
  claimsFenced(history, add);
  nothingLost(history, final, add);
  nothingAfterCancel(history, add);
  return violations;
}

function countBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(keyOf(item), (counts.get(keyOf(item)) ?? 0) + 1);
  return counts;
}

/** `key@start`, with the intent when the row had one (a row written before intents: the start alone). */
const intentKey = (key: string, intent: string | undefined, start: number): string =>
  intent === undefined ? startKey(key, start) : `${startKey(key, start)}#${intent}`;

/** At most one committed claim and one outbox event per (reminder, intent, start). */
export function onceEach(history: DeliveryTrialHistory, final: DeliveryFinal, add: Add): void {
  const claims = countBy(
    committed(history.claimTransactions).flatMap((txn) => txn.claims),
    (claim) => intentKey(claim.key, claim.intent, claim.dueStart),
  );
  for (const [at, n] of claims) if (n > 1) add('delivery-duplicate', `reminder ${at} was claimed by ${n} committed transactions`);
  // An event's intent is its claim's (the event id names it; the detail does not carry it).
  const intentOf = new Map<string, string | undefined>();
  for (const txn of history.claimTransactions)
    for (const event of txn.events) {
      const claim = txn.claims.find((c) => c.key === event.key && c.dueStart === event.startTimeSeconds);
      if (claim !== undefined) intentOf.set(event.eventId, claim.intent);
    }
  const events = countBy(final.outbox, (event) => intentKey(event.key, intentOf.get(event.eventId), event.startTimeSeconds));
  for (const [at, n] of events) if (n > 1) add('delivery-duplicate', `the outbox holds ${n} ReminderDue events for reminder ${at}`);
}

/** Every outbox event was written with its claim, by the run and fence that fenced the transaction. */
export function eventsHaveClaims(history: DeliveryTrialHistory, final: DeliveryFinal, add: Add): void {
  // Transactions that may have landed (an unknown outcome can justify an event).
  const landed = history.claimTransactions.filter((txn) => txn.outcome !== 'refused');
  for (const event of final.outbox) {
    const at = startKey(event.key, event.startTimeSeconds);
    const writers = landed.filter((txn) => txn.events.some((e) => e.eventId === event.eventId));
    if (writers.length === 0) {
      add('delivery-event-without-claim', `the outbox holds event ${event.eventId} (reminder ${at}) that no recorded transaction wrote`);
      continue;
    }
    const withClaim = writers.filter((txn) =>
      txn.claims.some((claim) => claim.key === event.key && claim.dueStart === event.startTimeSeconds && claim.dueAt === event.dueAt),
    );
    if (withClaim.length === 0) {
      add(
        'delivery-event-without-claim',
        `event ${event.eventId} (reminder ${at}, due ${event.dueAt}) was written in a transaction that did not claim its row at that start and due time`,
      );
      continue;
    }
    const byItsFence = withClaim.some(
      (txn) => txn.check !== undefined && txn.check.runId === event.runId && txn.check.fence === event.fence,
    );
    if (!byItsFence) {
      const checks = withClaim
        .map((txn) => (txn.check === undefined ? 'no lease check' : `run ${txn.check.runId} fence ${txn.check.fence}`))
        .join(', ');
      add(
        'delivery-event-without-claim',
        `event ${event.eventId} (reminder ${at}) says run ${event.runId ?? '?'} fence ${event.fence ?? '?'}, but the transaction that wrote it was fenced by ${checks}`,
      );
    }
  }
  for (const txn of committed(history.claimTransactions)) {
    for (const event of txn.events) {
      if (!txn.claims.some((claim) => claim.key === event.key && claim.dueStart === event.startTimeSeconds)) {
        add(
          'delivery-event-without-claim',
          `a committed transaction wrote event ${event.eventId} (reminder ${startKey(event.key, event.startTimeSeconds)}) without claiming its row`,
        );
      }
    }
  }
}

/** Every committed claim wrote its event in the same transaction, and every row marked sent has its event. */
export function claimsHaveEvents(history: DeliveryTrialHistory, final: DeliveryFinal, add: Add): void {
  const inOutbox = new Set(final.outbox.map((event) => startKey(event.key, event.startTimeSeconds)));
  for (const txn of committed(history.claimTransactions)) {
    for (const claim of txn.claims) {
      const at = startKey(claim.key, claim.dueStart);
      if (!txn.events.some((event) => event.key === claim.key && event.startTimeSeconds === claim.dueStart)) {
        add('delivery-claim-without-event', `reminder ${at} was claimed in a committed transaction that wrote no event for it`);
      } else if (!inOutbox.has(at)) {
        add('delivery-claim-without-event', `reminder ${at} was claimed, but the outbox holds no event for it`);
      }
    }
  }
  for (const row of final.reminders) {
    if (typeof row.notifiedStart !== 'number') continue;
    const at = startKey(reminderKey(row.contestId, row.userId), row.notifiedStart);
    if (!inOutbox.has(at))
      add(
        'delivery-claim-without-event',
        `reminder ${at} is marked sent (notifiedStart) in the final table, but the outbox holds no event for it`,
      );
  }
}

/** Whether `claim` (in `txn`) was due at its time and start, by the writes of its row. */
function dueAtClaim(claim: ClaimRecord, txn: ClaimTransaction, writes: readonly DueWrite[]): boolean {
  const same = (w: DueWrite) => w.due !== undefined && w.due.dueAt === claim.dueAt && w.due.dueStart === claim.dueStart;
  // A write that set the row due as claimed, and may have landed before the claim did...
  const setting = writes.filter((w) => same(w) && w.outcome !== 'refused' && w.forwardedAtMs < txn.repliedAtMs);
  // ...not undone by a write that certainly landed after it and before the claim was sent.
  return setting.some(
    (w) => !writes.some((u) => !same(u) && u.outcome === 'ok' && u.forwardedAtMs > w.repliedAtMs && u.repliedAtMs < txn.forwardedAtMs),
  );
}

/** A claim was sent no earlier than its due time, at a time and start the row was due at. */
export function claimsWereDue(history: DeliveryTrialHistory, add: Add): void {
  const byKey = new Map<string, DueWrite[]>();
  for (const write of history.dueWrites) byKey.set(write.key, [...(byKey.get(write.key) ?? []), write]);
  for (const txn of committed(history.claimTransactions)) {
    for (const claim of txn.claims) {
      const at = startKey(claim.key, claim.dueStart);
      if (txn.forwardedAtMs < claim.dueAt * 1000) {
        add(
          'delivery-not-due',
          `reminder ${at} was claimed ${claim.dueAt * 1000 - txn.forwardedAtMs} ms before its due time ${claim.dueAt}`,
        );
        continue;
      }
      // The claim's own row-write is not evidence of due-ness.
      const writes = (byKey.get(claim.key) ?? []).filter(
        (w) => !(w.by === 'claim' && w.forwardedAtMs === txn.forwardedAtMs && w.repliedAtMs === txn.repliedAtMs),
      );
      if (!dueAtClaim(claim, txn, writes)) {
        const states = writes
          .filter((w) => w.outcome !== 'refused')
          .map((w) => `${w.by}@${w.repliedAtMs}:${w.due === undefined ? 'not due' : `${w.due.dueAt}/${w.due.dueStart}`}`)
          .join(', ');
        add(
          'delivery-not-due',
          `reminder ${at} was claimed at due time ${claim.dueAt}, but no write had left it due so (writes: ${states || 'none'})`,
        );
      }
    }
  }
}

/** Every committed claim was fenced by the delivery lease and sent before a later fence was granted. */
export function claimsFenced(history: DeliveryTrialHistory, add: Add): void {
  for (const txn of committed(history.claimTransactions)) {
    if (txn.claims.length === 0) continue;
    const claimed = txn.claims.map((claim) => startKey(claim.key, claim.dueStart)).join(', ');
    if (txn.check === undefined) {
      add('delivery-unfenced', `a transaction claimed ${claimed} without the delivery lease's ConditionCheck`);
      continue;
    }
    const fence = txn.check.fence;
    const later = history.leaseGrants.find((grant) => grant.fence > fence && grant.repliedAtMs < txn.forwardedAtMs);
    if (later !== undefined) {
      add(
        'delivery-stale-claim',
        `run ${txn.check.runId} (fence ${fence}) claimed ${claimed} ${txn.forwardedAtMs - later.repliedAtMs} ms after fence ${later.fence} was granted to run ${later.runId}`,
      );
    }
  }
}

/** Once the faults stopped and the last pass ran, nothing due by the time it began is left due. */
export function nothingLost(history: DeliveryTrialHistory, final: DeliveryFinal, add: Add): void {
  const until = history.deliveredUntilSeconds;
  if (until === undefined) return;
  for (const row of final.reminders) {
    if (typeof row.dueAt === 'number' && row.dueAt <= until) {
      add(
        'delivery-lost',
        `reminder ${startKey(reminderKey(row.contestId, row.userId), Number(row.dueStart))} has been due since ${row.dueAt} and is still unsent after the last pass (which began at ${until})`,
      );
    }
  }
}

/** No claim of an intent committed after a cancel of its row had landed (and after that intent was set). */
export function nothingAfterCancel(history: DeliveryTrialHistory, add: Add): void {
  const writes = history.appWrites ?? [];
  if (writes.length === 0) return;
  for (const txn of committed(history.claimTransactions)) {
    for (const claim of txn.claims) {
      if (claim.intent === undefined) continue;
      const set = writes.find((w) => w.kind === 'set' && w.key === claim.key && w.intent === claim.intent && w.outcome !== 'refused');
      if (set === undefined) continue;
      const cancel = writes.find(
        (w) =>
          w.kind === 'cancel' &&
          w.key === claim.key &&
          w.outcome === 'ok' &&
          w.forwardedAtMs > set.repliedAtMs &&
          w.repliedAtMs < txn.forwardedAtMs,
      );
      if (cancel !== undefined)
        add(
          'delivery-after-cancel',
          `reminder ${intentKey(claim.key, claim.intent, claim.dueStart)} was claimed ${txn.forwardedAtMs - cancel.repliedAtMs} ms after its cancel landed`,
        );
    }
  }
}
