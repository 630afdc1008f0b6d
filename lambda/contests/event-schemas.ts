/**
 * The sync's contest events (source `contest-sync.contests`): their detail-types and the JSON
 * Schema (draft 4) of each `detail`, published in the bus's schema registry by the stack
 * (OutboxDelivery adds `eventId`). The CDK app loads it: it imports only the import-free list of
 * platforms. docs/events.md, "Contest events".
 */
import { PLATFORMS } from '../sources/platforms.js';

export const CONTEST_EVENT = {
  announced: 'ContestAnnounced',
  rescheduled: 'ContestRescheduled',
  withdrawn: 'ContestWithdrawn',
  back: 'ContestBack',
} as const;

export type ContestEventType = (typeof CONTEST_EVENT)[keyof typeof CONTEST_EVENT];

/**
 * The version of the detail schemas (docs/events.md, "What changed"): 2 since `contestId` is the
 * platform-qualified id (a string) and `platformId` was added. The registry versions each schema
 * when its content changes; this number names the change in the schema itself.
 */
export const CONTEST_EVENT_SCHEMA_VERSION = 2;

/** A platform-qualified contest id: `<platform>:<platformId>`. */
export const QUALIFIED_ID_PATTERN = '^[a-z0-9]{1,20}:[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';

const contest = {
  contestId: {
    type: 'string',
    pattern: QUALIFIED_ID_PATTERN,
    description: 'The platform-qualified contest id, e.g. codeforces:2120 or atcoder:abc199 (an integer before schema version 2)',
  },
  contest: {
    type: 'string',
    pattern: QUALIFIED_ID_PATTERN,
    description: 'Deprecated: the same as contestId (kept for consumers of version 1)',
  },
  platform: { type: 'string', enum: [...PLATFORMS], description: 'Where the contest comes from' },
  platformId: { type: 'string', description: "The contest's id on its platform, as text: 2120, abc199 (since schema version 2)" },
  sequence: {
    type: 'integer',
    description:
      'The number of this event among the contest events published of the contest (1 = the first); a later change has a higher one',
  },
  name: { type: 'string' },
  url: { type: 'string' },
} as const;
const named = ['contestId', 'contest', 'platform', 'platformId', 'sequence', 'name', 'url'] as const;
const start = {
  startTimeSeconds: { type: 'integer', description: 'The start the product now stands behind (epoch s): confirmed by the evidence' },
  startTime: { type: 'string', format: 'date-time' },
} as const;
const description = `Schema version ${CONTEST_EVENT_SCHEMA_VERSION}: contest ids are platform-qualified strings`;
const scheduled = {
  description,
  required: [...named, 'type', 'startTimeSeconds', 'startTime', 'durationSeconds'],
  properties: {
    ...contest,
    type: { type: 'string', description: "The platform's kind of round: CF, ICPC or IOI on Codeforces" },
    ...start,
    durationSeconds: { type: 'integer' },
  },
} as const;

export const CONTEST_EVENT_SCHEMAS = {
  [CONTEST_EVENT.announced]: scheduled,
  [CONTEST_EVENT.back]: scheduled,
  [CONTEST_EVENT.rescheduled]: {
    description,
    required: [...named, 'previousStartTimeSeconds', 'previousStartTime', 'startTimeSeconds', 'startTime', 'durationSeconds'],
    properties: {
      ...contest,
      previousStartTimeSeconds: { type: 'integer', description: 'The start published before (epoch s)' },
      previousStartTime: { type: 'string', format: 'date-time' },
      ...start,
      durationSeconds: { type: 'integer' },
    },
  },
  [CONTEST_EVENT.withdrawn]: {
    description,
    required: [...named, 'startTimeSeconds', 'startTime'],
    properties: {
      ...contest,
      startTimeSeconds: { type: 'integer', description: 'The start it was published with (epoch s)' },
      startTime: { type: 'string', format: 'date-time' },
      replacedBy: {
        type: 'string',
        pattern: QUALIFIED_ID_PATTERN,
        description:
          'Present when the platform listed the round again under a new id (same platform, name and start): the contest that replaced it',
      },
    },
  },
} as const;
