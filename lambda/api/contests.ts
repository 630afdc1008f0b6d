/**
 * The contests as the app shows them (docs/tables.md): from the Contests table's
 * `byPlatformStart` index, never a vanished contest; a held change leaves the attributes read here
 * as they were, so nothing held shows. One platform's list, or every platform's merged, in one
 * total order: by start, then by qualified id (`recent`: the reverse). Paged with an opaque cursor
 * that names where the last page ended. docs/api.md, `GET /contests`.
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { API_LIMITS, PLATFORMS, type Platform } from './contract.js';
import { ApiError } from './errors.js';
import type { ContestPageRequest, ContestReader, ContestRecord } from './ports.js';
import { parseQualifiedId } from '../sources/ids.js';

export const CONTESTS_BY_PLATFORM_START = 'byPlatformStart';
/**
 * At most this many DynamoDB queries fill one page past the first of each platform listed: one
 * more per platform listed, and this many besides (vanished contests are filtered after the read,
 * and a platform's contests of one second come in no particular order, so each platform may need
 * to read on to the end of a second). Four platforms: at most 4 + 4 + 3 queries.
 */
const MORE_QUERIES_PER_PAGE = 3;

export interface Range {
  from: number;
  to: number;
  ascending: boolean;
}

/** The start times a page may show: `[from, to]` epoch seconds, and the order. */
export function rangeOf(request: Pick<ContestPageRequest, 'status' | 'now'>): Range {
  return request.status === 'upcoming'
    ? { from: request.now, to: Number.MAX_SAFE_INTEGER, ascending: true }
    : { from: request.now - API_LIMITS.recentWindowSeconds, to: request.now - 1, ascending: false };
}

/**
 * Where a page ended, in the list's order: after the contest `[startTimeSeconds, contestId]`, or,
 * with no contest id, before the first contest of that second (every contest of the earlier
 * seconds, `recent`: the later ones, was read).
 */
export interface Position {
  startTimeSeconds: number;
  contestId?: string;
}

/** The list's order: by start, then by qualified id; `recent` lists it backwards. */
export function compareContests(a: Position & { contestId: string }, b: Position & { contestId: string }, ascending: boolean): number {
  const order = a.startTimeSeconds - b.startTimeSeconds || (a.contestId < b.contestId ? -1 : a.contestId > b.contestId ? 1 : 0);
  return ascending ? order : -order;
}

/** Whether a contest comes after the position in the list. */
export function isAfter(contest: ContestRecord, position: Position | undefined, ascending: boolean): boolean {
  if (position === undefined) return true;
  if (position.contestId === undefined)
    return ascending ? contest.startTimeSeconds >= position.startTimeSeconds : contest.startTimeSeconds <= position.startTimeSeconds;
  return compareContests(contest, position as Position & { contestId: string }, ascending) > 0;
}

/** A cursor names a position: `[startTimeSeconds, contestId]` (the qualified id) or `[startTimeSeconds]`, base64url JSON. */
export function encodeCursor(position: Position): string {
  const key = position.contestId === undefined ? [position.startTimeSeconds] : [position.startTimeSeconds, position.contestId];
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

const refused = () => new ApiError('invalid-input', 'cursor: expected the cursor of a previous page', ['cursor']);

/**
 * The position a cursor names, or 'restart' when it lies before the range (the contests between
 * have started since: the list goes on from the range's start), or 'past-end'. A cursor that is
 * not one of ours, or one of another platform's list, is refused.
 */
export function decodeCursor(cursor: string, range: Range, platform?: Platform): Position | 'restart' | 'past-end' {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const valid =
    Array.isArray(parsed) &&
    (parsed.length === 1 || parsed.length === 2) &&
    Number.isSafeInteger(parsed[0]) &&
    (parsed[0] as number) >= 0 &&
    (parsed.length === 1 || parseQualifiedId(parsed[1]) !== undefined);
  if (!valid) throw refused();
  const [startTimeSeconds, contestId] = parsed as [number, string | undefined];
  if (contestId !== undefined && platform !== undefined && parseQualifiedId(contestId)!.platform !== platform) throw refused();
  if (range.ascending ? startTimeSeconds < range.from : startTimeSeconds > range.to) return 'restart';
  if (range.ascending ? startTimeSeconds > range.to : startTimeSeconds < range.from) return 'past-end';
  return contestId === undefined ? { startTimeSeconds } : { startTimeSeconds, contestId };
}

const isText = (value: unknown): value is string => typeof value === 'string';
const isInteger = (value: unknown): value is number => Number.isSafeInteger(value);

/** A stored item as the app may show it, or undefined if it lacks what a contest needs. */
export function recordOf(item: Record<string, unknown>): ContestRecord | undefined {
  const { contestId, name, type, phase, startTimeSeconds, durationSeconds, url } = item;
  if (parseQualifiedId(contestId) === undefined || !isText(name) || !isText(phase) || !isInteger(startTimeSeconds)) return undefined;
  if (!isInteger(durationSeconds) || !isText(url)) return undefined;
  return { contestId: contestId as string, name, ...(isText(type) ? { type } : {}), phase, startTimeSeconds, durationSeconds, url };
}

/** What one platform's queries have read: its shown contests, and where DynamoDB stopped (none: the platform's range is read). */
interface Stream {
  platform: Platform;
  contests: ContestRecord[];
  next?: Record<string, unknown>;
}

/** The second a stream stopped at: its contests of earlier seconds (`recent`: later) are all read; of that second maybe not. */
const stoppedAt = (stream: Stream): number | undefined => stream.next?.startTimeSeconds as number | undefined;

/**
 * The page the streams give: the contests after the position, up to the second the furthest-behind
 * stream stopped at (everything before it is read, on every platform), in the list's order.
 * `done` when reading on cannot change it: it is full, or every platform's range is read. A cursor
 * when there is more: the last contest shown, or, on a short page, the second the reads stopped at.
 */
export function pageOf(
  streams: readonly Stream[],
  position: Position | undefined,
  ascending: boolean,
  limit: number,
): { contests: ContestRecord[]; cursor?: string; done: boolean; stoppedAt?: number } {
  const stops = streams.flatMap((s) => stoppedAt(s) ?? []);
  const horizon = stops.length === 0 ? undefined : ascending ? Math.min(...stops) : Math.max(...stops);
  const placed = streams
    .flatMap((s) => s.contests)
    .filter((c) => isAfter(c, position, ascending))
    .filter((c) => horizon === undefined || (ascending ? c.startTimeSeconds < horizon : c.startTimeSeconds > horizon))
    .sort((a, b) => compareContests(a, b, ascending));
  const contests = placed.slice(0, limit);
  if (placed.length >= limit) {
    const more = placed.length > limit || horizon !== undefined;
    return { contests, ...(more ? { cursor: encodeCursor(contests[limit - 1]!) } : {}), done: true };
  }
  if (horizon === undefined) return { contests, done: true };
  return { contests, cursor: encodeCursor({ startTimeSeconds: horizon }), done: false, stoppedAt: horizon };
}

export function dynamoContestReader(doc: DynamoDBDocumentClient, contestsTable: string): ContestReader {
  /** One query of a platform's part of the range, from where it stopped. */
  const read = async (stream: Stream, range: Range, limit: number): Promise<Stream> => {
    const answer = await doc.send(
      new QueryCommand({
        TableName: contestsTable,
        IndexName: CONTESTS_BY_PLATFORM_START,
        KeyConditionExpression: 'platform = :p AND startTimeSeconds BETWEEN :from AND :to',
        FilterExpression: 'attribute_not_exists(vanishedAt)',
        ExpressionAttributeValues: { ':p': stream.platform, ':from': range.from, ':to': range.to },
        ScanIndexForward: range.ascending,
        Limit: limit,
        ...(stream.next === undefined ? {} : { ExclusiveStartKey: stream.next }),
      }),
    );
    const contests = [...stream.contests, ...(answer.Items ?? []).flatMap((item) => recordOf(item) ?? [])];
    return { platform: stream.platform, contests, ...(answer.LastEvaluatedKey === undefined ? {} : { next: answer.LastEvaluatedKey }) };
  };
  return {
    async page(request) {
      const range = rangeOf(request);
      const decoded = request.cursor === undefined ? undefined : decodeCursor(request.cursor, range, request.platform);
      if (decoded === 'past-end') return { contests: [] };
      const position = decoded === 'restart' ? undefined : decoded;
      // Every platform is read from the position's second on: its other contests of that second may come after the position.
      const from =
        position === undefined
          ? range
          : range.ascending
            ? { ...range, from: position.startTimeSeconds }
            : { ...range, to: position.startTimeSeconds };
      const platforms = request.platform === undefined ? PLATFORMS : [request.platform];
      // One more than the page: a platform with no more than that is read to its end at once.
      let streams = await Promise.all(platforms.map((platform) => read({ platform, contests: [] }, from, request.limit + 1)));
      for (let more = 0; ; more += 1) {
        const page = pageOf(streams, position, range.ascending, request.limit);
        const answer = { contests: page.contests, ...(page.cursor === undefined ? {} : { cursor: page.cursor }) };
        if (page.done) return answer;
        if (more === platforms.length + MORE_QUERIES_PER_PAGE) {
          // A short page ends where every platform was read to; one that would not move past the position
          // (a platform holds more contests of one second than the reads allow) is not answered.
          const stuck = page.contests.length === 0 && position !== undefined && page.stoppedAt === position.startTimeSeconds;
          if (stuck) throw new ApiError('unavailable', 'too many contests start in the same second to page through them');
          return answer;
        }
        const behind = streams.findIndex((s) => stoppedAt(s) === page.stoppedAt);
        const extended = await read(streams[behind]!, from, API_LIMITS.maxPageSize);
        streams = streams.map((s, i) => (i === behind ? extended : s));
      }
    },
  };
}
