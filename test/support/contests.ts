/** Codeforces-shaped contests and table snapshots for tests. */
import { GetCommand, PutCommand, ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TestTables } from './tables.js';
import { isReplyClockId } from '../../lambda/contests/model.js';
import { dueShardOf, reminderKey } from '../../lambda/reminders/table.js';
import { cf, type TestId } from './ids.js';

export interface ApiContest {
  id: number;
  name: string;
  type: 'CF' | 'IOI' | 'ICPC';
  phase: 'BEFORE' | 'CODING' | 'PENDING_SYSTEM_TEST' | 'SYSTEM_TEST' | 'FINISHED';
  frozen: boolean;
  durationSeconds: number;
  startTimeSeconds?: number;
  relativeTimeSeconds?: number;
}

/** An API contest starting `hoursFromNow` hours from `nowMs` (negative: in the past). */
export function apiContest(id: number, hoursFromNow: number, overrides: Partial<ApiContest> = {}, nowMs = Date.now()): ApiContest {
  const nowS = Math.floor(nowMs / 1000);
  const start = nowS + Math.round(hoursFromNow * 3600);
  const durationSeconds = overrides.durationSeconds ?? 7200;
  const phase = overrides.phase ?? (start > nowS ? 'BEFORE' : start + durationSeconds > nowS ? 'CODING' : 'FINISHED');
  return {
    id,
    name: `Codeforces Round ${id} (Div. 2)`,
    type: 'CF',
    phase,
    frozen: false,
    durationSeconds,
    startTimeSeconds: start,
    relativeTimeSeconds: nowS - start,
    ...overrides,
  };
}

/** A list like the real one: upcoming, running and finished contests. */
export function sampleList(nowMs = Date.now()): ApiContest[] {
  return [
    apiContest(2101, 72, {}, nowMs),
    apiContest(2102, 48, { name: 'Educational Codeforces Round 190 (Rated for Div. 2)', type: 'ICPC' }, nowMs),
    apiContest(2103, 24, {}, nowMs),
    apiContest(2104, 5, { name: 'Codeforces Round (Div. 1)' }, nowMs),
    apiContest(2105, 2, {}, nowMs),
    apiContest(2100, -1, { phase: 'CODING' }, nowMs),
    apiContest(2099, -30, {}, nowMs),
    apiContest(2098, -24 * 40, {}, nowMs), // finished long ago: not stored
  ];
}

export async function scanAll(doc: DynamoDBDocumentClient, table: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(new ScanCommand({ TableName: table, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items.sort((a, b) => JSON.stringify([a.contestId, a.userId]).localeCompare(JSON.stringify([b.contestId, b.userId])));
}

/** The Contests and Reminders tables (the Contests table without the syncs' reply clocks, `clock#<platform>`). */
export async function snapshot(tables: TestTables) {
  return {
    contests: (await scanAll(tables.doc, tables.names.contests)).filter((item) => !isReplyClockId(item.contestId)),
    reminders: await scanAll(tables.doc, tables.names.reminders),
  };
}

export async function addReminder(tables: TestTables, id: TestId, userId: string, minutesBefore: number, startTimeSeconds: number) {
  await tables.doc.send(
    new PutCommand({
      TableName: tables.names.reminders,
      Item: { ...reminderKey(cf(id), userId), contestId: cf(id), minutesBefore, remindAt: startTimeSeconds - 60 * minutesBefore },
    }),
  );
}

/**
 * A reminder as the app writes it by the table contract (docs/tables.md): from the stored contest,
 * due at once (`dueAt = remindAt`) unless the contest pauses its reminders or vanished.
 */
export async function setReminder(
  tables: TestTables,
  id: TestId,
  userId: string,
  minutesBefore: number,
  dueShards = 1,
): Promise<Record<string, unknown>> {
  const contestId = cf(id);
  const { Item: contest } = await tables.doc.send(
    new GetCommand({ TableName: tables.names.contests, Key: { contestId }, ConsistentRead: true }),
  );
  if (contest === undefined) throw new Error(`contest ${contestId} is not stored`);
  const start = contest.startTimeSeconds as number;
  const remindAt = start - 60 * minutesBefore;
  const due = contest.remindersPaused === undefined && contest.vanishedAt === undefined;
  const item = {
    ...reminderKey(contestId, userId),
    contestId,
    minutesBefore,
    remindAt,
    expiresAt: contest.expiresAt,
    ...(due ? { dueAt: remindAt, dueShard: dueShardOf(userId, dueShards), dueStart: start } : {}),
  };
  await tables.doc.send(new PutCommand({ TableName: tables.names.reminders, Item: item }));
  return item;
}

/** The notifier's claim (docs/tables.md): sent, for the start it was due at. */
export async function markNotified(tables: TestTables, id: TestId, userId: string, at: number, start: number): Promise<void> {
  await tables.doc.send(
    new UpdateCommand({
      TableName: tables.names.reminders,
      Key: reminderKey(cf(id), userId),
      UpdateExpression: 'SET notifiedAt = :at, notifiedStart = :start, paused = :notified REMOVE dueAt, dueShard, dueStart',
      ExpressionAttributeValues: { ':at': at, ':start': start, ':notified': 'notified' },
    }),
  );
}
