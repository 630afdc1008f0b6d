/**
 * What the API shows: stored records and write-path views turned into the public shapes of
 * lambda/api/schemas.ts, with platform-qualified ids. Pure.
 */
import type { ContestRecord, ReminderView } from './ports.js';
import { parseQualifiedId } from '../sources/ids.js';

const iso = (epochSeconds: number): string => new Date(epochSeconds * 1000).toISOString();

export function contestView(contest: ContestRecord) {
  return {
    id: contest.contestId,
    // The reader shows only contests whose id it could parse; its platform is the id's.
    platform: parseQualifiedId(contest.contestId)?.platform ?? 'codeforces',
    name: contest.name,
    ...(contest.type === undefined ? {} : { type: contest.type }),
    phase: contest.phase,
    startTime: iso(contest.startTimeSeconds),
    startTimeSeconds: contest.startTimeSeconds,
    durationSeconds: contest.durationSeconds,
    url: contest.url,
  };
}

export function reminderView(reminder: ReminderView) {
  return {
    contestId: reminder.contestId,
    // The write path lists only rows whose id it could parse; its platform is the id's.
    platform: parseQualifiedId(reminder.contestId)?.platform ?? 'codeforces',
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
