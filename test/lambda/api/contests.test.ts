/**
 * The contests as the app shows them (lambda/api/contests.ts): the query on byPlatformStart (the
 * range, the order, never a vanished contest), pages filled across filtered reads, one platform's
 * or every platform's merged in one total order (start, then qualified id), and the cursor: ours
 * round-trips, a forged one or another platform's is refused, one from before the range restarts
 * it. A property: paging with any page size through contests of every platform, ids colliding as
 * numbers, seconds shared, some vanished, read as DynamoDB reads (ties in no particular order,
 * Limit counted before the filter), lists each contest once, in order.
 */
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import * as fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { compareContests, decodeCursor, dynamoContestReader, encodeCursor, rangeOf, recordOf } from '../../../lambda/api/contests.js';
import { PLATFORMS, type Platform } from '../../../lambda/api/contract.js';
import { ApiError } from '../../../lambda/api/errors.js';

const NOW = 1_796_126_400;
const item = (id: number | string, start: number, extra: Record<string, unknown> = {}, platform: Platform = 'codeforces') => ({
  contestId: `${platform}:${id}`,
  platform,
  platformId: String(id),
  name: `Round ${id}`,
  type: 'CF',
  phase: 'BEFORE',
  startTimeSeconds: start,
  durationSeconds: 7200,
  url: `https://codeforces.com/contest/${id}`,
  expiresAt: start + 86_400,
  pending: { held: true },
  ...extra,
});

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const dynamo = mockClient(doc);
beforeEach(() => dynamo.reset());

describe('the cursor', () => {
  const upcoming = rangeOf({ status: 'upcoming', now: NOW });
  it('round-trips the key it names', () => {
    expect(decodeCursor(encodeCursor({ startTimeSeconds: NOW + 10, contestId: 'codeforces:7' }), upcoming)).toEqual({
      startTimeSeconds: NOW + 10,
      contestId: 'codeforces:7',
    });
  });
  it.each([
    'x',
    Buffer.from('{"a":1}').toString('base64url'),
    Buffer.from('[1,2,3]').toString('base64url'),
    Buffer.from('[1.5,2]').toString('base64url'),
    Buffer.from('[-1,2]').toString('base64url'),
    Buffer.from('[1,"topcoder:1"]').toString('base64url'),
    Buffer.from('[]').toString('base64url'),
  ])('refuses %s', (cursor) => {
    expect(() => decodeCursor(cursor, upcoming)).toThrow(ApiError);
  });
  it('names a second to go on from, when a page ended before any contest of it', () => {
    expect(decodeCursor(encodeCursor({ startTimeSeconds: NOW + 10 }), upcoming)).toEqual({ startTimeSeconds: NOW + 10 });
  });
  it("refuses another platform's cursor on one platform's list, and takes any platform's on the merged list", () => {
    const cursor = encodeCursor({ startTimeSeconds: NOW + 10, contestId: 'atcoder:abc400' });
    expect(() => decodeCursor(cursor, upcoming, 'codeforces')).toThrow(ApiError);
    expect(decodeCursor(cursor, upcoming, 'atcoder')).toEqual({ startTimeSeconds: NOW + 10, contestId: 'atcoder:abc400' });
    expect(decodeCursor(cursor, upcoming)).toEqual({ startTimeSeconds: NOW + 10, contestId: 'atcoder:abc400' });
  });
  it('restarts from the range when the contests it named have started since', () => {
    expect(decodeCursor(encodeCursor({ startTimeSeconds: NOW - 5, contestId: 'codeforces:7' }), upcoming)).toBe('restart');
  });
  it('ends a recent list past its week', () => {
    const recent = rangeOf({ status: 'recent', now: NOW });
    expect(decodeCursor(encodeCursor({ startTimeSeconds: NOW - 8 * 86_400, contestId: 'codeforces:7' }), recent)).toBe('past-end');
  });
});

describe('the stored contest as shown', () => {
  it('keeps what the app shows and nothing the sync keeps for itself', () => {
    expect(recordOf(item(1, NOW))).toEqual({
      contestId: 'codeforces:1',
      name: 'Round 1',
      type: 'CF',
      phase: 'BEFORE',
      startTimeSeconds: NOW,
      durationSeconds: 7200,
      url: 'https://codeforces.com/contest/1',
    });
  });
  it.each([{ name: 7 }, { startTimeSeconds: '1' }, { url: undefined }, { durationSeconds: 1.5 }])('skips an item with %j', (bad) => {
    expect(recordOf(item(1, NOW, bad))).toBeUndefined();
  });
});

const key = (i: Record<string, unknown>) => ({ platform: i.platform, startTimeSeconds: i.startTimeSeconds, contestId: i.contestId });
const ids = (page: { contests: { contestId: string }[] }) => page.contests.map((c) => c.contestId);

describe('the reader', () => {
  it('queries the upcoming range soonest first without vanished contests, and fills a page across filtered reads', async () => {
    dynamo
      .on(QueryCommand)
      .resolvesOnce({ Items: [item(1, NOW + 1)], LastEvaluatedKey: key(item(2, NOW + 2)) })
      .resolvesOnce({ Items: [item(3, NOW + 3)], LastEvaluatedKey: key(item(4, NOW + 4)) });
    const page = await dynamoContestReader(doc, 'contests').page({ platform: 'codeforces', status: 'upcoming', limit: 2, now: NOW });
    expect(ids(page)).toEqual(['codeforces:1', 'codeforces:3']);
    expect(decodeCursor(page.cursor!, rangeOf({ status: 'upcoming', now: NOW }))).toEqual({
      startTimeSeconds: NOW + 3,
      contestId: 'codeforces:3',
    });
    const [first, second] = dynamo.commandCalls(QueryCommand).map((c) => c.args[0].input);
    expect(first).toMatchObject({
      IndexName: 'byPlatformStart',
      FilterExpression: 'attribute_not_exists(vanishedAt)',
      ExpressionAttributeValues: { ':p': 'codeforces', ':from': NOW },
      ScanIndexForward: true,
      Limit: 3,
    });
    expect(first!.ExclusiveStartKey).toBeUndefined();
    expect(second).toMatchObject({ Limit: 100, ExclusiveStartKey: key(item(2, NOW + 2)) });
  });

  it('reads recent contests latest first, within the week, from the cursor’s second, after the contest it names', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [item('c', NOW - 50), item('a', NOW - 50), item('b', NOW - 50), item('z', NOW - 100)] });
    const cursor = encodeCursor({ startTimeSeconds: NOW - 50, contestId: 'codeforces:b' });
    const page = await dynamoContestReader(doc, 'contests').page({ platform: 'codeforces', status: 'recent', limit: 5, now: NOW, cursor });
    // Latest first, and within a second by id backwards: c and b came before the cursor.
    expect(ids(page)).toEqual(['codeforces:a', 'codeforces:z']);
    expect(page.cursor).toBeUndefined();
    expect(dynamo.commandCalls(QueryCommand)[0]!.args[0].input).toMatchObject({
      ExpressionAttributeValues: { ':from': NOW - 7 * 86_400, ':to': NOW - 50 },
      ScanIndexForward: false,
    });
  });

  it('merges every platform when none is asked for: one query each, ordered by start then id', async () => {
    dynamo.on(QueryCommand).callsFake((input: { ExpressionAttributeValues: { ':p': Platform } }) => {
      const p = input.ExpressionAttributeValues[':p'];
      return { Items: [item(199, NOW + 10, {}, p), item(200, NOW + PLATFORMS.indexOf(p), {}, p)] };
    });
    const page = await dynamoContestReader(doc, 'contests').page({ status: 'upcoming', limit: 5, now: NOW });
    expect(
      dynamo
        .commandCalls(QueryCommand)
        .map((c) => c.args[0].input.ExpressionAttributeValues![':p'])
        .sort(),
    ).toEqual([...PLATFORMS].sort());
    expect(ids(page)).toEqual(['codeforces:200', 'atcoder:200', 'codechef:200', 'leetcode:200', 'atcoder:199']);
    expect(decodeCursor(page.cursor!, rangeOf({ status: 'upcoming', now: NOW }))).toEqual({
      startTimeSeconds: NOW + 10,
      contestId: 'atcoder:199',
    });
  });

  it('reads on from the platform furthest behind before placing a contest the others may precede', async () => {
    dynamo.on(QueryCommand).callsFake((input: { ExpressionAttributeValues: { ':p': Platform }; ExclusiveStartKey?: unknown }) => {
      const p = input.ExpressionAttributeValues[':p'];
      if (p !== 'codeforces') return { Items: [item(1, NOW + 5, {}, p)] };
      // Codeforces stops at its first contest; read on, it has one more of the same second, and one before the others'.
      return input.ExclusiveStartKey === undefined
        ? { Items: [item(9, NOW + 1)], LastEvaluatedKey: key(item(9, NOW + 1)) }
        : { Items: [item(2, NOW + 1), item(3, NOW + 2)] };
    });
    const page = await dynamoContestReader(doc, 'contests').page({ status: 'upcoming', limit: 3, now: NOW });
    expect(ids(page)).toEqual(['codeforces:2', 'codeforces:9', 'codeforces:3']);
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(PLATFORMS.length + 1);
  });

  it('stops after one more read per platform and three besides, and hands back the second it read to', async () => {
    dynamo.on(QueryCommand).callsFake((input: { ExclusiveStartKey?: { startTimeSeconds: number } }) => {
      const at = (input.ExclusiveStartKey?.startTimeSeconds ?? NOW) + 1;
      return { Items: [item(at, at, { name: 5 })], LastEvaluatedKey: key(item(at, at)) };
    });
    const page = await dynamoContestReader(doc, 'contests').page({ platform: 'codeforces', status: 'upcoming', limit: 10, now: NOW });
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(5);
    expect(page.contests).toEqual([]);
    expect(decodeCursor(page.cursor!, rangeOf({ status: 'upcoming', now: NOW }))).toEqual({ startTimeSeconds: NOW + 5 });
  });

  it('answers 503 rather than a page that cannot move past its cursor', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [], LastEvaluatedKey: key(item(1, NOW + 5)) });
    const cursor = encodeCursor({ startTimeSeconds: NOW + 5, contestId: 'codeforces:1' });
    const reading = dynamoContestReader(doc, 'contests').page({ platform: 'codeforces', status: 'upcoming', limit: 10, now: NOW, cursor });
    await expect(reading).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('answers a cursor past the end with an empty page and no read', async () => {
    const cursor = encodeCursor({ startTimeSeconds: NOW - 30 * 86_400, contestId: 'codeforces:1' });
    expect(
      await dynamoContestReader(doc, 'contests').page({ platform: 'codeforces', status: 'recent', limit: 5, now: NOW, cursor }),
    ).toEqual({ contests: [] });
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(0);
  });
});

type Stored = ReturnType<typeof item> & { vanishedAt?: number; tie: number };

/**
 * byPlatformStart as DynamoDB answers a Query: the platform's items in the key range by start,
 * those of one second in an order of the index's own (`tie`, not the id); `Limit` items evaluated,
 * then the filter; LastEvaluatedKey whenever the limit was reached.
 */
function indexOf(items: readonly Stored[]) {
  let queries = 0;
  return {
    queries: () => queries,
    query(input: {
      ExpressionAttributeValues: { ':p': string; ':from': number; ':to': number };
      ScanIndexForward: boolean;
      Limit: number;
      ExclusiveStartKey?: { contestId: string };
    }) {
      queries += 1;
      const { ':p': p, ':from': from, ':to': to } = input.ExpressionAttributeValues;
      const sorted = items
        .filter((i) => i.platform === p && i.startTimeSeconds >= from && i.startTimeSeconds <= to)
        .sort((a, b) => (a.startTimeSeconds - b.startTimeSeconds || a.tie - b.tie) * (input.ScanIndexForward ? 1 : -1));
      const at =
        input.ExclusiveStartKey === undefined ? 0 : sorted.findIndex((i) => i.contestId === input.ExclusiveStartKey!.contestId) + 1;
      const evaluated = sorted.slice(at, at + input.Limit);
      return {
        Items: evaluated.filter((i) => i.vanishedAt === undefined),
        ...(evaluated.length === input.Limit ? { LastEvaluatedKey: key(evaluated.at(-1)!) } : {}),
      };
    },
  };
}

const storedContest = fc
  .record({
    platform: fc.constantFrom(...PLATFORMS),
    // Few ids and few seconds: ids collide across platforms as numbers, contests share their second.
    id: fc.integer({ min: 1, max: 6 }),
    offset: fc.integer({ min: -3, max: 3 }),
    vanished: fc.boolean(),
    tie: fc.integer(),
  })
  .map(({ platform, id, offset, vanished, tie }): Stored => ({
    ...item(id, NOW + offset * 3600, vanished ? { vanishedAt: 1 } : {}, platform),
    tie,
  }));

describe('paging through the list (property)', () => {
  it('lists every shown contest of the range exactly once, in order, with any page size, merged or of one platform', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(storedContest, { selector: (c) => c.contestId, maxLength: 40, size: 'max' }),
        fc.integer({ min: 1, max: 7 }),
        fc.constantFrom('upcoming' as const, 'recent' as const),
        fc.option(fc.constantFrom(...PLATFORMS), { nil: undefined }),
        async (stored, limit, status, platform) => {
          const index = indexOf(stored);
          dynamo.reset();
          dynamo.on(QueryCommand).callsFake((input) => index.query(input));
          const reader = dynamoContestReader(doc, 'contests');
          const range = rangeOf({ status, now: NOW });
          const expected = stored
            .filter((c) => c.vanishedAt === undefined && (platform === undefined || c.platform === platform))
            .filter((c) => c.startTimeSeconds >= range.from && c.startTimeSeconds <= range.to)
            .sort((a, b) => compareContests(a, b, range.ascending))
            .map((c) => c.contestId);
          const listed: string[] = [];
          let cursor: string | undefined;
          for (let pages = 0; pages <= stored.length + 1; pages += 1) {
            const before = index.queries();
            const page = await reader.page({
              status,
              limit,
              now: NOW,
              ...(platform === undefined ? {} : { platform }),
              ...(cursor === undefined ? {} : { cursor }),
            });
            expect(page.contests.length).toBeLessThanOrEqual(limit);
            expect(index.queries() - before).toBeLessThanOrEqual(2 * (platform === undefined ? PLATFORMS.length : 1) + 3);
            listed.push(...ids(page));
            cursor = page.cursor;
            if (cursor === undefined) break;
          }
          expect(cursor).toBeUndefined();
          expect(listed).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});
