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
  contestId: { type: 'integer', description: 'The contest id on its platform' },
  contest: { type: 'string', description: 'The platform-qualified contest id, e.g. codeforces:2120' },
  platform: { type: 'string', description: 'Where the contest comes from: codeforces' },
  sequence: {
    type: 'integer',
    description:
      'The number of this event among the contest events published of the contest (1 = the first); a later change has a higher one',
  },
  name: { type: 'string' },
  url: { type: 'string' },
} as const;
const named = ['contestId', 'contest', 'platform', 'sequence', 'name', 'url'] as const;
const start = {
  startTimeSeconds: { type: 'integer', description: 'The start the product now stands behind (epoch s): confirmed by the evidence' },
  startTime: { type: 'string', format: 'date-time' },
} as const;
const scheduled = {
  required: [...named, 'type', 'startTimeSeconds', 'startTime', 'durationSeconds'],
  properties: { ...contest, type: { type: 'string', description: 'CF, ICPC or IOI' }, ...start, durationSeconds: { type: 'integer' } },
} as const;

export const CONTEST_EVENT_SCHEMAS = {
  [CONTEST_EVENT.announced]: scheduled,
  [CONTEST_EVENT.back]: scheduled,
  [CONTEST_EVENT.rescheduled]: {
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
    required: [...named, 'startTimeSeconds', 'startTime'],
    properties: {
      ...contest,
      startTimeSeconds: { type: 'integer', description: 'The start it was published with (epoch s)' },
      startTime: { type: 'string', format: 'date-time' },
    },
  },
} as const;
