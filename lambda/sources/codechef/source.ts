/**
 * CodeChef's contest list as a reply of the model, pure (docs/sources.md, "CodeChef"). The list a
 * contest is in gives its phase (present: running, future: not started, past: finished), checked
 * against its times; its start is `contest_start_date_iso` with its offset, its duration
 * `contest_duration` minutes, its id `contest_code` (never the title: a code and its title can
 * disagree). Placeholder rounds named "(Date to be decided)" are listed but not scheduled. Each
 * division of a round (`START151A`…`D`) is a contest of its own: users register per division.
 */
import { bound } from '@contest-sync/scheduled-singleton';
import { failed, jsonBody, statusProblem, type Outcome, type RawReply } from '../http/policy.js';
import { describeIssue, listedReply, safeId, type ListedReply, type Reading } from '../listing.js';
import type { Phase } from '../source.js';
import { parseZonedTime } from '../time.js';
import { contestSchema, listsSchema, statusSchema, type Lists } from './schema.js';

export const PLATFORM = 'codechef';
export const LABEL = 'CodeChef';

/** A round CodeChef lists before it has a date: its start slides week by week. */
export const PLACEHOLDER_NAME = /\(\s*date\s+to\s+be\s+decided\s*\)/i;

export const contestUrl = (code: string): string => `https://www.codechef.com/${code}`;

/** The series of a code: its letters (`START151A` → `START`, `COOK165` → `COOK`), else `other`. */
export function contestType(code: string): string {
  const letters = /^[A-Za-z]{1,32}/.exec(code)?.[0];
  return letters === undefined ? 'other' : letters.toUpperCase();
}

/** One entry of a list as the model reads it. */
export function entryReading(entry: unknown, phase: Phase): Reading {
  const platformId = safeId((entry as { contest_code?: unknown } | null)?.contest_code);
  const withId = platformId === undefined ? {} : { platformId };
  const parsed = contestSchema.safeParse(entry);
  if (!parsed.success) return { kind: 'invalid', why: describeIssue(parsed.error), ...withId };
  const contest = parsed.data;
  const name = contest.contest_name.trim();
  if (PLACEHOLDER_NAME.test(name)) return { kind: 'unscheduled', ...withId };
  const start = parseZonedTime(contest.contest_start_date_iso);
  if (start === undefined) {
    return {
      kind: 'invalid',
      why: `contest_start_date_iso: not a time with its offset: ${contest.contest_start_date_iso.slice(0, 40)}`,
      ...withId,
    };
  }
  const candidate = {
    platformId: contest.contest_code,
    name,
    type: contestType(contest.contest_code),
    phase,
    startTimeSeconds: start,
    durationSeconds: Number(contest.contest_duration) * 60,
    url: contestUrl(contest.contest_code),
  };
  return { kind: 'contest', candidate };
}

/** A past entry that ended within `recentPastSeconds` of `nowSeconds`: a stored contest may have just finished. */
function endedRecently(entry: unknown, nowSeconds: number, recentPastSeconds: number): boolean {
  const parsed = contestSchema.safeParse(entry);
  const start = parsed.success ? parseZonedTime(parsed.data.contest_start_date_iso) : undefined;
  if (!parsed.success || start === undefined) return false;
  return start + Number(parsed.data.contest_duration) * 60 >= nowSeconds - recentPastSeconds;
}

export interface ReadOptions {
  /** Past contests that ended longer ago than this are not read. @default 7 days */
  recentPastSeconds?: number;
  maxInvalidShare?: number;
}

/** The envelope: `status` must be `success` with the lists as arrays. */
function lists(json: unknown): Outcome<Lists> {
  const status = statusSchema.safeParse(json);
  if (!status.success) return failed('bad-shape', `${LABEL} reply is not its contest list: ${describeIssue(status.error)}`);
  if (status.data.status !== 'success') {
    const message = typeof status.data.message === 'string' ? `: ${bound(status.data.message, 256)}` : '';
    return failed('api-failed', `${LABEL} said status ${JSON.stringify(bound(status.data.status, 64))}${message}`);
  }
  const parsed = listsSchema.safeParse(json);
  if (!parsed.success) return failed('bad-shape', `${LABEL} reply is not its contest list: ${describeIssue(parsed.error)}`);
  return { ok: true, value: parsed.data };
}

/** The reply as CodeChef's contests, or why it cannot be believed whole. */
export function readCodeChefReply(reply: RawReply, receivedAtMs: number, options: ReadOptions = {}): Outcome<ListedReply> {
  const { recentPastSeconds = 7 * 24 * 3600, maxInvalidShare } = options;
  const refused = statusProblem(reply, LABEL, receivedAtMs);
  if (refused !== undefined) return { ok: false, problem: refused };
  const json = jsonBody(reply, LABEL);
  if (!json.ok) return json;
  const envelope = lists(json.value);
  if (!envelope.ok) return envelope;
  const { present_contests: present, future_contests: future, past_contests: past = [] } = envelope.value;
  const entries = (nowSeconds: number): [unknown, Phase][] => [
    ...present.map((entry): [unknown, Phase] => [entry, 'CODING']),
    ...future.map((entry): [unknown, Phase] => [entry, 'BEFORE']),
    ...past.filter((entry) => endedRecently(entry, nowSeconds, recentPastSeconds)).map((entry): [unknown, Phase] => [entry, 'FINISHED']),
  ];
  const read = (entry: unknown): Reading => entryReading(...(entry as [unknown, Phase]));
  const withShare = maxInvalidShare === undefined ? {} : { maxInvalidShare };
  return listedReply(reply, receivedAtMs, entries, read, { platform: PLATFORM, label: LABEL, ...withShare });
}
