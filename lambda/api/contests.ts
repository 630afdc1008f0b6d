/**
 * The contests as the app shows them (docs/tables.md): from the Contests table's
 * `byPlatformStart` index, never a vanished contest; a held change leaves the attributes read here
 * as they were, so nothing held shows. Paged with an opaque cursor that names the last contest
 * read. docs/api.md, `GET /contests`.
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { API_LIMITS } from './contract.js';
import { ApiError } from './errors.js';
import type { ContestPageRequest, ContestReader, ContestRecord } from './ports.js';
import { parseQualifiedId } from '../sources/ids.js';

export const CONTESTS_BY_PLATFORM_START = 'byPlatformStart';
/** At most this many DynamoDB queries fill one page (vanished contests are filtered after the read). */
const MAX_QUERIES_PER_PAGE = 3;

/** The start times a page may show: `[from, to]` epoch seconds, and the order. */
export function rangeOf(request: Pick<ContestPageRequest, 'status' | 'now'>): { from: number; to: number; ascending: boolean } {
  return request.status === 'upcoming'
    ? { from: request.now, to: Number.MAX_SAFE_INTEGER, ascending: true }
    : { from: request.now - API_LIMITS.recentWindowSeconds, to: request.now - 1, ascending: false };
}

/** A cursor names the last contest a page read: `[startTimeSeconds, contestId]` (the qualified id), base64url JSON. */
export function encodeCursor(key: { startTimeSeconds: number; contestId: string }): string {
  return Buffer.from(JSON.stringify([key.startTimeSeconds, key.contestId])).toString('base64url');
}

/**
 * The key a cursor names, or 'restart' when it lies before the range (the contests between have
 * started since: the list goes on from the range's start). A cursor that is not one of ours is
 * refused.
 */
export function decodeCursor(
  cursor: string,
  range: { from: number; to: number; ascending: boolean },
): { startTimeSeconds: number; contestId: string } | 'restart' | 'past-end' {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const valid =
    Array.isArray(parsed) &&
    parsed.length === 2 &&
    Number.isSafeInteger(parsed[0]) &&
    (parsed[0] as number) >= 0 &&
    parseQualifiedId(parsed[1]) !== undefined;
  if (!valid) throw new ApiError('invalid-input', 'cursor: expected the cursor of a previous page', ['cursor']);
  const [startTimeSeconds, contestId] = parsed as [number, string];
  if (range.ascending ? startTimeSeconds < range.from : startTimeSeconds > range.to) return 'restart';
  if (range.ascending ? startTimeSeconds > range.to : startTimeSeconds < range.from) return 'past-end';
  return { startTimeSeconds, contestId };
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

export function dynamoContestReader(doc: DynamoDBDocumentClient, contestsTable: string): ContestReader {
  return {
    async page(request) {
      const range = rangeOf(request);
      const from = request.cursor === undefined ? undefined : decodeCursor(request.cursor, range);
      if (from === 'past-end') return { contests: [] };
      let start = from === undefined || from === 'restart' ? undefined : { platform: request.platform, ...from };
      const contests: ContestRecord[] = [];
      for (let query = 0; query < MAX_QUERIES_PER_PAGE && contests.length < request.limit; query += 1) {
        const answer = await doc.send(
          new QueryCommand({
            TableName: contestsTable,
            IndexName: CONTESTS_BY_PLATFORM_START,
            KeyConditionExpression: 'platform = :p AND startTimeSeconds BETWEEN :from AND :to',
            FilterExpression: 'attribute_not_exists(vanishedAt)',
            ExpressionAttributeValues: { ':p': request.platform, ':from': range.from, ':to': range.to },
            ScanIndexForward: range.ascending,
            Limit: request.limit - contests.length,
            ...(start === undefined ? {} : { ExclusiveStartKey: start }),
          }),
        );
        contests.push(...(answer.Items ?? []).flatMap((item) => recordOf(item) ?? []));
        start = answer.LastEvaluatedKey as typeof start;
        if (start === undefined) break;
      }
      return start === undefined ? { contests } : { contests, cursor: encodeCursor(start) };
    },
  };
}
