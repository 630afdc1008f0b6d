/**
 * The contests as the app shows them (lambda/api/contests.ts): the query on byPlatformStart (the
 * range, the order, never a vanished contest), pages filled across filtered reads, and the
 * cursor: ours round-trips, a forged one is refused, one from before the range restarts it.
 */
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { decodeCursor, dynamoContestReader, encodeCursor, rangeOf, recordOf } from '../../../lambda/api/contests.js';
import { ApiError } from '../../../lambda/api/errors.js';

const NOW = 1_796_126_400;
const item = (id: number, start: number, extra: Record<string, unknown> = {}) => ({
  contestId: `codeforces:${id}`,
  platform: 'codeforces',
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
  ])('refuses %s', (cursor) => {
    expect(() => decodeCursor(cursor, upcoming)).toThrow(ApiError);
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

describe('the reader', () => {
  it('queries the upcoming range soonest first without vanished contests, and fills a page across filtered reads', async () => {
    dynamo
      .on(QueryCommand)
      .resolvesOnce({
        Items: [item(1, NOW + 1)],
        LastEvaluatedKey: { platform: 'codeforces', startTimeSeconds: NOW + 2, contestId: 'codeforces:2' },
      })
      .resolvesOnce({
        Items: [item(3, NOW + 3)],
        LastEvaluatedKey: { platform: 'codeforces', startTimeSeconds: NOW + 3, contestId: 'codeforces:3' },
      });
    const page = await dynamoContestReader(doc, 'contests').page({ platform: 'codeforces', status: 'upcoming', limit: 2, now: NOW });
    expect(page.contests.map((c) => c.contestId)).toEqual(['codeforces:1', 'codeforces:3']);
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
      Limit: 2,
    });
    expect(second).toMatchObject({
      Limit: 1,
      ExclusiveStartKey: { platform: 'codeforces', startTimeSeconds: NOW + 2, contestId: 'codeforces:2' },
    });
  });

  it('reads recent contests latest first, within the week, from the cursor', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [item(9, NOW - 100)] });
    const cursor = encodeCursor({ startTimeSeconds: NOW - 50, contestId: 'codeforces:10' });
    const page = await dynamoContestReader(doc, 'contests').page({ platform: 'codeforces', status: 'recent', limit: 5, now: NOW, cursor });
    expect(page).toEqual({ contests: [expect.objectContaining({ contestId: 'codeforces:9' })] });
    expect(dynamo.commandCalls(QueryCommand)[0]!.args[0].input).toMatchObject({
      ExpressionAttributeValues: { ':from': NOW - 7 * 86_400, ':to': NOW - 1 },
      ScanIndexForward: false,
      ExclusiveStartKey: { platform: 'codeforces', startTimeSeconds: NOW - 50, contestId: 'codeforces:10' },
    });
  });

  it('stops after three reads and hands back where it stopped', async () => {
    dynamo.on(QueryCommand).resolves({
      Items: [item(1, NOW + 1, { name: 5 })],
      LastEvaluatedKey: { platform: 'codeforces', startTimeSeconds: NOW + 1, contestId: 'codeforces:1' },
    });
    const page = await dynamoContestReader(doc, 'contests').page({ platform: 'codeforces', status: 'upcoming', limit: 10, now: NOW });
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(3);
    expect(page.contests).toEqual([]);
    expect(page.cursor).toBeDefined();
  });

  it('answers a cursor past the end with an empty page and no read', async () => {
    const cursor = encodeCursor({ startTimeSeconds: NOW - 30 * 86_400, contestId: 'codeforces:1' });
    expect(
      await dynamoContestReader(doc, 'contests').page({ platform: 'codeforces', status: 'recent', limit: 5, now: NOW, cursor }),
    ).toEqual({ contests: [] });
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(0);
  });
});
