/**
 * How long each hop of the events keeps what it holds, set together so that a redrive can neither
 * duplicate nor mislead (docs/events.md, "Windows"; docs/runbook.md, "Events not delivered"). No
 * imports: the CDK app, the redrive tool and the example consumer all read it.
 *
 *   commit ──► stream (24 h; a record older than MAX_RECORD_AGE is given up to the dead-letter queue)
 *          ──► dead-letter queue (DEAD_LETTER_RETENTION) ──► redrive (events up to REDRIVE_MAX_AGE old)
 *          ──► relay ──► bus ──► consumer (dedupes on detail.eventId for CONSUMER_DEDUPE)
 *
 * The chain, each bound from the one before:
 *   - a dead letter is sent at most MAX_RECORD_AGE after its events were committed, and kept
 *     DEAD_LETTER_RETENTION: every dead letter still in the queue names events at most
 *     DEAD_LETTER_RETENTION + MAX_RECORD_AGE = REDRIVE_MAX_AGE old;
 *   - the redrive resends an event at most REDRIVE_MAX_AGE after its commit, and the resent
 *     record reaches the consumer within MAX_RECORD_AGE (or is given up again): at most
 *     REDRIVE_MAX_AGE + MAX_RECORD_AGE = CONSUMER_DEDUPE after the commit, while the consumer
 *     still remembers the id if it had received it (its record dates from that first receipt,
 *     which is after the commit);
 *   - the outbox keeps the item (its TTL) OUTBOX_RETENTION ≥ REDRIVE_MAX_AGE, so every event the
 *     redrive may resend is still there, and a job's retry within that time still finds its id
 *     written.
 * The redrive refuses anything older than REDRIVE_MAX_AGE, and a reminder whose start has passed
 * or that its contest no longer agrees with (cli/redrive/plan.ts).
 */
const DAY = 86_400;

export const EVENT_WINDOWS = {
  /** The stream's records are given up (to the dead-letter queue) past this age: OutboxDelivery's `maxRecordAge`. */
  maxRecordAgeSeconds: 1 * DAY,
  /** Dead letters are kept this long: OutboxDelivery's `deadLetterRetention`. */
  deadLetterRetentionSeconds: 5 * DAY,
  /** The redrive resends events committed at most this long ago (npm run redrive). */
  redriveMaxAgeSeconds: 6 * DAY,
  /** Consumers remember an event id at least this long (examples/events-consumer/windows.ts DEDUPE_SECONDS). */
  consumerDedupeSeconds: 7 * DAY,
  /** Outbox items are kept this long (their TTL): OutboxDelivery's `retentionDays`. */
  outboxRetentionDays: 7,
} as const;

/** The chain above, checked (test/lambda/event-windows.test.ts); an empty list when it holds. */
export function windowProblems(windows: {
  maxRecordAgeSeconds: number;
  deadLetterRetentionSeconds: number;
  redriveMaxAgeSeconds: number;
  consumerDedupeSeconds: number;
  outboxRetentionDays: number;
}): string[] {
  const w = windows;
  const problems: string[] = [];
  if (w.deadLetterRetentionSeconds + w.maxRecordAgeSeconds > w.redriveMaxAgeSeconds)
    problems.push('a dead letter may name events older than the redrive accepts (dead-letter retention + record age > redrive age)');
  if (w.redriveMaxAgeSeconds + w.maxRecordAgeSeconds > w.consumerDedupeSeconds)
    problems.push('a redriven event may reach a consumer after it forgot the id (redrive age + record age > consumer dedupe)');
  if (w.outboxRetentionDays * DAY < w.redriveMaxAgeSeconds)
    problems.push('the outbox may drop an event the redrive would resend (outbox retention < redrive age)');
  return problems;
}
