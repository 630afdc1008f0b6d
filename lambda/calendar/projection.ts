/**
 * What the product published of each contest, as the calendar shows it (docs/api.md, "Only what
 * the product published"): folded from the contest events on the bus, never read from the Contests
 * table. Each event is applied once and in order: by `detail.sequence` when the event carries it
 * (1 = first announcement, +1 per published change), otherwise by commit time (`time`, then the
 * event id); an older or repeated event changes nothing. The projection is one DynamoDB item,
 * bounded by its bytes (MAX_PROJECTION_BYTES): past the bound, what the calendar can best spare
 * is left out first (`pruned`). Pure.
 */
import * as z from 'zod';
import { KEEP_AFTER_END_SECONDS, MAX_PROJECTION_BYTES } from './contract.js';
import { currentContestId } from '../sources/ids.js';

export interface PublishedContest {
  /** The platform-qualified id (a projection of the release before held numbers: read as `codeforces:<n>`, projectionOf). */
  contestId: string;
  name: string;
  url: string;
  type?: string;
  startTimeSeconds: number;
  durationSeconds: number;
  status: 'CONFIRMED' | 'CANCELLED';
  /** The iCalendar SEQUENCE: the event's `detail.sequence` − 1, or one more per event applied. */
  sequence: number;
  /** When the change was published (the event's `time`, epoch ms): DTSTAMP. */
  stampMs: number;
  /** The published sequence of the last event applied, when events carry one. */
  publishedSequence?: number;
  lastEventId: string;
}

export interface Projection {
  contests: Record<string, PublishedContest>;
}

const text = (max: number) => z.string().min(1).max(max);
const seconds = z.number().int().min(0).max(4_102_444_800);

/** A contest event as the bus delivers it (docs/events.md); the fields the calendar uses, bounded. */
export const contestEventSchema = z.object({
  source: z.literal('contest-sync.contests'),
  'detail-type': z.enum(['ContestAnnounced', 'ContestRescheduled', 'ContestWithdrawn', 'ContestBack']),
  time: z.iso.datetime(),
  detail: z.object({
    eventId: text(128),
    // A qualified id; an event of the release before ids were qualified carries a number.
    contestId: z.union([z.number(), z.string().max(128)]).transform((value, ctx) => {
      const id = currentContestId(value);
      if (id === undefined) ctx.addIssue({ code: 'custom', message: 'not a contest id' });
      return id ?? '';
    }),
    name: text(512),
    url: text(512),
    type: text(32).optional(),
    startTimeSeconds: seconds,
    durationSeconds: z
      .number()
      .int()
      .min(0)
      .max(366 * 86_400)
      .optional(),
    sequence: z.number().int().min(1).optional(),
  }),
});
export type ContestEvent = z.infer<typeof contestEventSchema>;

/** Whether `event` is newer than what the projection holds of its contest. */
export function isNewer(stored: PublishedContest | undefined, event: ContestEvent): boolean {
  if (stored === undefined) return true;
  const sequence = event.detail.sequence;
  if (sequence !== undefined && stored.publishedSequence !== undefined) return sequence > stored.publishedSequence;
  const time = Date.parse(event.time);
  if (time !== stored.stampMs) return time > stored.stampMs;
  return event.detail.eventId > stored.lastEventId;
}

/** The contest as published after `event`. */
export function publishedAfter(stored: PublishedContest | undefined, event: ContestEvent): PublishedContest {
  const { detail } = event;
  const withdrawn = event['detail-type'] === 'ContestWithdrawn';
  const sequence = detail.sequence !== undefined ? detail.sequence - 1 : stored === undefined ? 0 : stored.sequence + 1;
  return {
    contestId: detail.contestId,
    name: detail.name,
    url: detail.url,
    ...((detail.type ?? stored?.type) ? { type: detail.type ?? stored?.type } : {}),
    startTimeSeconds: detail.startTimeSeconds,
    durationSeconds: detail.durationSeconds ?? stored?.durationSeconds ?? 0,
    status: withdrawn ? 'CANCELLED' : 'CONFIRMED',
    sequence,
    stampMs: Date.parse(event.time),
    ...(detail.sequence === undefined ? {} : { publishedSequence: detail.sequence }),
    lastEventId: detail.eventId,
  };
}

const byId = (a: PublishedContest, b: PublishedContest) => (a.contestId < b.contestId ? -1 : a.contestId > b.contestId ? 1 : 0);

const endOf = (c: PublishedContest) => c.startTimeSeconds + (c.status === 'CANCELLED' ? 0 : c.durationSeconds);

/** What the calendar needs most, first: contests not yet over, soonest first; then those over, the latest ended first. */
export function keptFirst(nowSeconds: number): (a: PublishedContest, b: PublishedContest) => number {
  return (a, b) => {
    const [aOver, bOver] = [endOf(a) < nowSeconds, endOf(b) < nowSeconds];
    if (aOver !== bOver) return aOver ? 1 : -1;
    if (!aOver) return a.startTimeSeconds - b.startTimeSeconds || byId(a, b);
    return endOf(b) - endOf(a) || byId(a, b);
  };
}

/** The bytes a contest adds to the projection's JSON: `"<id>":{...},`. */
export const entryBytes = (c: PublishedContest): number => Buffer.byteLength(`${JSON.stringify(c.contestId)}:${JSON.stringify(c)},`);

/**
 * Contests past their time in the feeds are left out; then, in the order of `keptFirst`, as many
 * as MAX_PROJECTION_BYTES holds are kept (so no name the sync publishes can make the item too
 * large for DynamoDB).
 */
export function pruned(projection: Projection, nowSeconds: number): Projection {
  const candidates = Object.values(projection.contests)
    .filter((c) => endOf(c) + KEEP_AFTER_END_SECONDS >= nowSeconds)
    .sort(keptFirst(nowSeconds));
  const kept: PublishedContest[] = [];
  let bytes = 2; // {}
  for (const contest of candidates) {
    bytes += entryBytes(contest);
    if (bytes > MAX_PROJECTION_BYTES) break;
    kept.push(contest);
  }
  return { contests: Object.fromEntries(kept.map((c) => [c.contestId, c])) };
}

/**
 * A projection as the door table holds it: entries of the release before ids were qualified are
 * keyed and named by a number, read as the qualified id it stood for (no migration of the door
 * table: the next save writes them qualified). An entry without a usable id is left out.
 */
export function projectionOf(contests: Readonly<Record<string, unknown>> | undefined): Projection {
  const read: Record<string, PublishedContest> = {};
  for (const value of Object.values(contests ?? {})) {
    const entry = value as Partial<PublishedContest> | null;
    const contestId = entry === null || typeof entry !== 'object' ? undefined : currentContestId(entry.contestId);
    if (contestId !== undefined) read[contestId] = { ...(entry as PublishedContest), contestId };
  }
  return { contests: read };
}

/** The projection after `event`, and whether the event changed it. */
export function apply(projection: Projection, event: ContestEvent, nowSeconds: number): { projection: Projection; changed: boolean } {
  const key = event.detail.contestId;
  const stored = projection.contests[key];
  if (!isNewer(stored, event)) return { projection, changed: false };
  const next = { contests: { ...projection.contests, [key]: publishedAfter(stored, event) } };
  return { projection: pruned(next, nowSeconds), changed: true };
}
