/**
 * The JSON Schema (draft 4) of ReminderDue's `detail`, published in the bus's schema registry by
 * the stack (OutboxDelivery adds `eventId`). The CDK app loads it: it imports only the import-free
 * list of platforms. docs/events.md.
 */
import { PLATFORMS } from '../sources/platforms.js';

/**
 * The version of the detail schema (docs/events.md, "What changed"): 2 since `contestId` is the
 * platform-qualified id (a string) and `platformId` was added.
 */
export const REMINDER_DUE_SCHEMA_VERSION = 2;

const QUALIFIED_ID_PATTERN = '^[a-z0-9]{1,20}:[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';

export const REMINDER_DUE_DETAIL_SCHEMA = {
  description: `Schema version ${REMINDER_DUE_SCHEMA_VERSION}: contest ids are platform-qualified strings`,
  required: [
    'contestId',
    'contest',
    'platform',
    'platformId',
    'userId',
    'minutesBefore',
    'startTimeSeconds',
    'startTime',
    'name',
    'url',
    'dueAt',
  ],
  properties: {
    contestId: {
      type: 'string',
      pattern: QUALIFIED_ID_PATTERN,
      description: 'The platform-qualified contest id, e.g. codeforces:2051 or atcoder:abc199 (an integer before schema version 2)',
    },
    contest: {
      type: 'string',
      pattern: QUALIFIED_ID_PATTERN,
      description: 'Deprecated: the same as contestId (kept for consumers of version 1)',
    },
    platform: { type: 'string', enum: [...PLATFORMS], description: 'The platform of the contest' },
    platformId: { type: 'string', description: "The contest's id on its platform, as text (since schema version 2)" },
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
