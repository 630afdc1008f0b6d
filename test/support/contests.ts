/** Codeforces-shaped contests and table snapshots for tests. */
import {
  GetCommand,
  PutCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { TestTables } from './tables.js';
import { isReplyClockId, type ContestItem } from '../../lambda/contests/model.js';
import { GATE_PREFIX, gateItems } from '../../lambda/contests/bucket-gates.js';
import { DynamoContestStore } from '../../lambda/sync/store.js';
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

/** Whether a Contests item is a contest (not a sync's reply clock, `clock#<platform>`, nor a bucket gate, `gate#<contestKey>`). */
export const isContestItem = (item: Record<string, unknown>) =>
  !isReplyClockId(item.contestId) && !String(item.contestId).startsWith(GATE_PREFIX);

/** The bucket gates a contest item has when the sync wrote it (none without a `dueStart`), for seeding a table before a run. */
export function gatesOf(contest: Record<string, unknown>): Record<string, unknown>[] {
  if (typeof contest.dueStart !== 'number' || typeof contest.contestId !== 'string') return [];
  const gates = gateItems(contest as unknown as ContestItem);
  return 'put' in gates ? gates.put : [];
}

/**
 * A contest put as the sync puts it: with its bucket gates as it leaves them (each bucket's with
 * its `dueStart`, or none), in one transaction (lambda/sync/store.ts, `contestActions`).
 */
export async function putContest(
  tables: Pick<TestTables, 'doc'> & { names: Pick<TestTables['names'], 'contests' | 'reminders'> },
  item: Record<string, unknown>,
): Promise<void> {
  const store = new DynamoContestStore(tables.doc, { contests: tables.names.contests, reminders: tables.names.reminders });
  const put = Object.fromEntries(Object.entries(item).filter(([, value]) => value !== undefined)) as unknown as ContestItem;
  await tables.doc.send(new TransactWriteCommand({ TransactItems: store.contestActions({ put, events: [], gateChanged: true }) }));
}

/** The Contests and Reminders tables (the Contests table without the syncs' reply clocks and the bucket gates). */
export async function snapshot(tables: TestTables) {
  return {
    contests: (await scanAll(tables.doc, tables.names.contests)).filter(isContestItem),
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
