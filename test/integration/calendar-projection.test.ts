/**
 * The calendar's published projection in the door table from the template, on DynamoDB Local
 * (which refuses an item over 400 KB as DynamoDB does): the builder folds contest events with
 * names at the bound the sync publishes (512 UTF-16 code units), in characters of three UTF-8
 * bytes each and of four (astral, two code units each), and never fails; the stored projection
 * stays under its byte bound, which is under DynamoDB's item limit.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DOOR_KEYS, MAX_PROJECTION_BYTES } from '../../lambda/calendar/contract.js';
import { applyContestEvent, type CalendarDeps } from '../../lambda/calendar/feeds.js';
import { pruned, publishedAfter, type ContestEvent } from '../../lambda/calendar/projection.js';
import { dynamoDoorTable } from '../../lambda/calendar/store.js';
import { LISTED_LIMITS as CONTEST_LIMITS } from '../../lambda/sources/source.js';
import type { TableNames } from '../../local/tables.js';
import { memoryObjects } from '../lambda/calendar/doubles.js';
import { cf, codeforcesNumber } from '../support/ids.js';
import { useWorld, type World } from '../support/world.js';

let world: World;
useWorld('calendar-projection', (w) => (world = w));

const NOW = Date.UTC(2026, 11, 1, 12);
const DAY = 86_400;

function announced(contestId: number, name: string): ContestEvent {
  return {
    source: 'contest-sync.contests',
    'detail-type': 'ContestAnnounced',
    time: new Date(NOW).toISOString(),
    detail: {
      eventId: `contest:${contestId.toString(16).padStart(32, '0')}`,
      contestId: cf(contestId),
      name,
      url: `https://codeforces.com/contest/${contestId}`,
      type: 'ICPC',
      startTimeSeconds: NOW / 1000 + DAY + contestId * 60,
      durationSeconds: 18_000,
      sequence: 1,
    },
  };
}

/** Names at the sync's bound: 512 code units, each character 3 bytes of UTF-8 (Devanagari), or 4 (an astral script, 2 code units each). */
const longNames = {
  threeBytes: (n: number) => `${n} ${'क'.repeat(CONTEST_LIMITS.maxNameLength - String(n).length - 1)}`,
  fourBytes: (n: number) => `${String(n).padStart(6, '0')}${'𓀀'.repeat((CONTEST_LIMITS.maxNameLength - 6) / 2)}`,
};

describe('the published projection in the door table', () => {
  it.each(Object.entries(longNames))(
    'holds 400 announcements with the longest names (%s): stored under its byte bound, and the builder goes on',
    async (_kind, nameOf) => {
      const doorTable = (world.tables.names as TableNames).door!;
      const door = dynamoDoorTable(world.tables.doc, doorTable);
      // 400 contests as the builder folds them, stored at once (400 builds of a growing feed are slow), then one more event.
      const all = Array.from({ length: 400 }, (_, i) => publishedAfter(undefined, announced(i + 1, nameOf(i + 1))));
      expect(all.every((c) => c.name.length === CONTEST_LIMITS.maxNameLength)).toBe(true);
      const projection = pruned({ contests: Object.fromEntries(all.map((c) => [c.contestId, c])) }, NOW / 1000);
      expect(await door.saveProjection('codeforces', projection, 0)).toBe(true);
      const deps = {
        objects: memoryObjects(),
        door,
        reminders: { listReminders: async () => ({ reminders: [] }) },
        send: async () => undefined,
        usersOf: async function* () {},
        now: () => NOW,
      } satisfies CalendarDeps;
      expect((await applyContestEvent(deps, announced(401, nameOf(401)))).outcome).toBe('applied');
      const stored = await world.tables.doc.send(new GetCommand({ TableName: doorTable, Key: { pk: DOOR_KEYS.published('codeforces') } }));
      const contests = Object.values(stored.Item!.contests as Record<string, { contestId: string }>);
      expect(Buffer.byteLength(JSON.stringify(stored.Item!.contests))).toBeLessThanOrEqual(MAX_PROJECTION_BYTES);
      // What is kept: the soonest upcoming ones, as many as the bound holds.
      const kept = contests.map((c) => codeforcesNumber(c.contestId)).sort((a, b) => a - b);
      expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => i + 1));
      expect(kept.length).toBeGreaterThan(100);
    },
  );
});
