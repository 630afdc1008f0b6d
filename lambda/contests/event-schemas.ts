/**
 * The sync's contest events (source `contest-sync.contests`): their detail-types and the JSON
 * Schema (draft 4) of each `detail`, published in the bus's schema registry by the stack
 * (OutboxDelivery adds `eventId`). No imports: the CDK app loads it. docs/events.md, "Contest events".
 */
export const CONTEST_EVENT = {
  announced: 'ContestAnnounced',
  rescheduled: 'ContestRescheduled',
  withdrawn: 'ContestWithdrawn',
  back: 'ContestBack',
} as const;

export type ContestEventType = (typeof CONTEST_EVENT)[keyof typeof CONTEST_EVENT];

const contest = {
  contestId: { type: 'integer', description: 'Codeforces contest id' },
  name: { type: 'string' },
  url: { type: 'string' },
} as const;
const start = {
  startTimeSeconds: { type: 'integer', description: 'The start the product now stands behind (epoch s): confirmed by the evidence' },
  startTime: { type: 'string', format: 'date-time' },
} as const;
const scheduled = {
  required: ['contestId', 'name', 'url', 'type', 'startTimeSeconds', 'startTime', 'durationSeconds'],
  properties: { ...contest, type: { type: 'string', description: 'CF, ICPC or IOI' }, ...start, durationSeconds: { type: 'integer' } },
} as const;

export const CONTEST_EVENT_SCHEMAS = {
  [CONTEST_EVENT.announced]: scheduled,
  [CONTEST_EVENT.back]: scheduled,
  [CONTEST_EVENT.rescheduled]: {
    required: [
      'contestId',
      'name',
      'url',
      'previousStartTimeSeconds',
      'previousStartTime',
      'startTimeSeconds',
      'startTime',
      'durationSeconds',
    ],
    properties: {
      ...contest,
      previousStartTimeSeconds: { type: 'integer', description: 'The start published before (epoch s)' },
      previousStartTime: { type: 'string', format: 'date-time' },
      ...start,
      durationSeconds: { type: 'integer' },
    },
  },
  [CONTEST_EVENT.withdrawn]: {
    required: ['contestId', 'name', 'url', 'startTimeSeconds', 'startTime'],
    properties: {
      ...contest,
      startTimeSeconds: { type: 'integer', description: 'The start it was published with (epoch s)' },
      startTime: { type: 'string', format: 'date-time' },
    },
  },
} as const;
