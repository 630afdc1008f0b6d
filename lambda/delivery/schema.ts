/**
 * The JSON Schema (draft 4) of ReminderDue's `detail`, published in the bus's schema registry by
 * the stack (OutboxDelivery adds `eventId`). No imports: the CDK app loads it. docs/events.md.
 */
export const REMINDER_DUE_DETAIL_SCHEMA = {
  required: ['contestId', 'userId', 'minutesBefore', 'startTimeSeconds', 'startTime', 'name', 'url', 'dueAt'],
  properties: {
    contestId: { type: 'integer', description: 'Codeforces contest id' },
    contest: {
      type: 'string',
      pattern: '^codeforces:[0-9]+$',
      description: 'The platform-qualified contest id, e.g. codeforces:2051 (in every event committed since it was added)',
    },
    platform: {
      type: 'string',
      enum: ['codeforces'],
      description: 'The platform of the contest (in every event committed since it was added)',
    },
    userId: { type: 'string', description: 'The app user the reminder is for (the Reminders sort key)' },
    minutesBefore: { type: 'integer', description: 'Lead time the user asked for' },
    startTimeSeconds: { type: 'integer', description: 'The contest start (epoch s) this reminder is sent for' },
    startTime: { type: 'string', format: 'date-time' },
    name: { type: 'string' },
    url: { type: 'string' },
    dueAt: { type: 'integer', description: 'The due time it was sent for (epoch s)' },
  },
} as const;

/** The delivery job's lease key and run-record prefix of shard `n` (each shard is its own singleton). */
export const deliveryLeaseKey = (shard: number) => `lease#reminder-delivery#${shard}`;
export const deliveryRunRecordPrefix = (shard: number) => `run#reminder-delivery#${shard}#`;
