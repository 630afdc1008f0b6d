/**
 * What the API shows: stored records and write-path views turned into the public shapes of
 * lambda/api/schemas.ts, with platform-qualified ids. Pure.
 */
import type { Platform } from './contract.js';
import type { ContestRecord, ReminderView } from './ports.js';
import { qualifiedId } from './schemas.js';

const iso = (epochSeconds: number): string => new Date(epochSeconds * 1000).toISOString();

export function contestView(platform: Platform, contest: ContestRecord) {
  return {
    id: qualifiedId(platform, contest.contestId),
    platform,
    name: contest.name,
    ...(contest.type === undefined ? {} : { type: contest.type }),
    phase: contest.phase,
    startTime: iso(contest.startTimeSeconds),
    startTimeSeconds: contest.startTimeSeconds,
    durationSeconds: contest.durationSeconds,
    url: contest.url,
  };
}

export function reminderView(reminder: ReminderView, platform: Platform = 'codeforces') {
  return {
    contestId: qualifiedId(platform, reminder.contestId),
    platform,
    minutesBefore: reminder.minutesBefore,
    remindAt: iso(reminder.remindAt),
    state: reminder.state,
  };
}

/** The secret URL of a user's feed on the API's own host (as the request reached it), and its `webcal://` twin for calendar apps. */
export function feedUrls(origin: { scheme: 'https' | 'http'; host: string }, token: string): { url: string; webcal: string } {
  const path = `/calendar/u/${token}.ics`;
  return { url: `${origin.scheme}://${origin.host}${path}`, webcal: `webcal://${origin.host}${path}` };
}
