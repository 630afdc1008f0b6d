/**
 * The feeds as RFC 5545 calendars, generated with ical-generator: one VEVENT per published
 * contest with a stable UID, SEQUENCE, STATUS (CANCELLED after a published withdrawal), DTSTAMP =
 * when the change was published, the contest's URL; a user's feed adds their reminders as
 * VALARMs. Deterministic: the same projection and reminders give the same bytes (so the same
 * ETag). Pure. docs/api.md, "Calendar".
 */
import ical, { ICalAlarmType, ICalEventStatus, type ICalCalendar } from 'ical-generator';
import type { Projection, PublishedContest } from './projection.js';
import { platformIdOf, platformOf } from '../sources/ids.js';
import { PLATFORM_LABELS, type Platform } from '../sources/platforms.js';
import { ALL_PLATFORMS_FEED } from './contract.js';

/** How often a calendar client should poll (REFRESH-INTERVAL and X-PUBLISHED-TTL). */
const REFRESH_SECONDS = 3600;
const PRODUCT = { company: 'contest-sync', product: 'calendar', language: 'EN' } as const;

/** A contest's UID: `<platform>-<platformId>@contest-sync` (a Codeforces contest's is what it always was: `codeforces-2120@contest-sync`). */
export const uidOf = (contestId: string): string => `${platformOf(contestId)}-${platformIdOf(contestId)}@contest-sync`;

function calendar(name: string): ICalCalendar {
  return ical({ name, prodId: PRODUCT, ttl: REFRESH_SECONDS });
}

function addContest(cal: ICalCalendar, contest: PublishedContest) {
  return cal.createEvent({
    id: uidOf(contest.contestId),
    sequence: contest.sequence,
    stamp: new Date(contest.stampMs),
    start: new Date(contest.startTimeSeconds * 1000),
    end: new Date((contest.startTimeSeconds + Math.max(contest.durationSeconds, 60)) * 1000),
    summary: contest.status === 'CANCELLED' ? `Withdrawn: ${contest.name}` : contest.name,
    description: `${contest.type === undefined ? '' : `${contest.type} round. `}${contest.url}`,
    url: contest.url,
    status: contest.status === 'CANCELLED' ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
  });
}

const byStart = (a: PublishedContest, b: PublishedContest) =>
  a.startTimeSeconds - b.startTimeSeconds || (a.contestId < b.contestId ? -1 : a.contestId > b.contestId ? 1 : 0);

/**
 * A public feed: every contest the projection holds, cancelled ones included — a platform's, or
 * (ALL_PLATFORMS_FEED) every platform's, each contest with the UID it has in its platform's feed.
 */
export function renderPublicFeed(feed: Platform | typeof ALL_PLATFORMS_FEED, projection: Projection): string {
  const cal = calendar(feed === ALL_PLATFORMS_FEED ? 'Programming contests' : `${PLATFORM_LABELS[feed]} contests`);
  for (const contest of Object.values(projection.contests).sort(byStart)) addContest(cal, contest);
  return cal.toString();
}

/** A user's reminders, by qualified contest id: the lead time in minutes. */
export type UserReminders = ReadonlyMap<string, number>;

/**
 * A user's feed: the published contests they set reminders on (of every platform: `projection`
 * holds the projections of the platforms of their reminders), each reminder a VALARM.
 */
export function renderUserFeed(projection: Projection, reminders: UserReminders): string {
  const cal = calendar('My contests');
  const mine = Object.values(projection.contests)
    .filter((c) => reminders.has(c.contestId))
    .sort(byStart);
  for (const contest of mine) {
    const event = addContest(cal, contest);
    const minutes = reminders.get(contest.contestId)!;
    if (contest.status === 'CONFIRMED') {
      event.createAlarm({
        type: ICalAlarmType.display,
        trigger: minutes * 60,
        description: `${contest.name} starts in ${minutes} minutes`,
      });
    }
  }
  return cal.toString();
}
