/**
 * The reminder write path's I/O (docs/tables.md, "The reminder write path"): the code the app and
 * the HTTP API call to set, cancel and list a user's reminders, so that no caller writes the
 * Reminders table by hand. The decisions are lambda/reminders/decide.ts's.
 *
 * setReminder reads the contest and the row (strongly consistent), and, when the intent changes,
 * commits one TransactWriteItems: a ConditionCheck that the contest is still as read, and the Put
 * of the whole row conditioned on the row as read. A refused condition (the sync wrote the contest,
 * or another set or a cancel wrote the row, between the read and the transaction) is answered by
 * reading again and deciding again; contention (a transaction conflict, throttling, a 5xx) by a
 * jittered wait. Both within one bounded number of attempts, then a ReminderConflictError.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleepTimer } from 'node:timers/promises';
import {
  DeleteCommand,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  type DynamoDBDocumentClient,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { cancellationCodes, contentionOf } from '@contest-sync/scheduled-singleton';
import { DEFAULTS, MAX_DUE_SHARDS } from '../contract.js';
import { CONTEST_ATTRIBUTES, decideSet, expired, viewOf, type ReminderView, type RowCondition, type SetDecision } from './decide.js';
import { ReminderConflictError, ReminderError } from './errors.js';
import {
  DEFAULT_LIST_LIMIT,
  cancelInputSchema,
  decodeCursor,
  encodeCursor,
  listInputSchema,
  parseInput,
  setInputSchema,
  type CancelInput,
  type ListInput,
  type SetInput,
} from './input.js';
import { contestKeyOf, REMINDERS_BY_USER_INDEX, reminderKey } from './table.js';

export interface ReminderTables {
  contests: string;
  reminders: string;
}

/** Attempts in all (the first included) and the full-jitter backoff between contended ones. */
export interface ReminderRetryBudget {
  attempts: number;
  baseMs: number;
  capMs: number;
}

/** 5 attempts; waits only after contention, at most ~1.5 s in all. */
export const REMINDER_RETRY_BUDGET: ReminderRetryBudget = { attempts: 5, baseMs: 100, capMs: 800 };

export interface ReminderDeps {
  dynamo: DynamoDBDocumentClient;
  tables: ReminderTables;
  /** Epoch milliseconds (default Date.now). */
  now?: () => number;
  /** A new intent id (default: 128 random bits, base64url, 22 characters). */
  newIntent?: () => string;
  /**
   * Shards of the byDue index: a due row's `dueShard` is its bucket mod `dueShards`, 1 to
   * MAX_DUE_SHARDS (default 1; a deployed caller passes the stack's DUE_SHARDS, docs/delivery.md).
   */
  dueShards?: number;
  retry?: ReminderRetryBudget;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export interface SetResult {
  reminder: ReminderView;
  /** false: the same intent was already stored, nothing was written. */
  changed: boolean;
}
export interface CancelResult {
  /** false: there was no reminder to cancel (cancelling is idempotent). */
  cancelled: boolean;
}
export interface ListResult {
  reminders: ReminderView[];
  /** Present when there may be more: pass it back to get the next page. */
  cursor?: string;
}

export interface ReminderClient {
  /** Sets or changes the user's reminder of a contest (idempotent). Throws a ReminderError subclass when refused. */
  setReminder(input: SetInput): Promise<SetResult>;
  /** Deletes the user's reminder of a contest, if any. */
  cancelReminder(input: CancelInput): Promise<CancelResult>;
  /**
   * The user's reminders by contest id, a page at a time, from the `byUser` index: eventually
   * consistent (a set or cancel shows up within about a second, not necessarily at once).
   */
  listReminders(input: ListInput): Promise<ListResult>;
}

/** 128 random bits, base64url: 22 characters. */
export const randomIntent = (): string => randomBytes(16).toString('base64url');

const INTENT = /^[A-Za-z0-9_-]{1,64}$/;

export function createReminderClient(deps: ReminderDeps): ReminderClient {
  const { dynamo, tables } = deps;
  const now = deps.now ?? Date.now;
  const newIntent = deps.newIntent ?? randomIntent;
  const dueShards = deps.dueShards ?? DEFAULTS.dueShards;
  const budget = deps.retry ?? REMINDER_RETRY_BUDGET;
  const sleep = deps.sleep ?? ((ms: number) => sleepTimer(ms).then(() => undefined));
  const random = deps.random ?? Math.random;
  if (!Number.isSafeInteger(dueShards) || dueShards < 1 || dueShards > MAX_DUE_SHARDS)
    throw new RangeError(`dueShards must be an integer from 1 to ${MAX_DUE_SHARDS}, got ${dueShards}`);
  if (!Number.isSafeInteger(budget.attempts) || budget.attempts < 1) throw new RangeError('retry.attempts must be a positive integer');
  const nowSeconds = () => Math.floor(now() / 1000);

  /**
   * Runs `attempt` until it returns, throws a ReminderError or anything that is neither a refused
   * condition nor contention (rethrown as is), or the budget is spent (ReminderConflictError).
   */
  async function withRetries<T>(attempt: () => Promise<T>): Promise<T> {
    let last: { reason: string; error: unknown } | undefined;
    for (let n = 1; n <= budget.attempts; n += 1) {
      try {
        return await attempt();
      } catch (error) {
        if (error instanceof ReminderError) throw error;
        if (cancellationCodes(error).includes('ConditionalCheckFailed')) {
          // What was read changed: read again at once (the new state is committed).
          last = { reason: 'the contest or the reminder changed meanwhile', error };
          continue;
        }
        const contention = contentionOf(error);
        if (contention === undefined) throw error;
        last = { reason: `DynamoDB contention (${contention})`, error };
        if (n < budget.attempts) await sleep(Math.floor(random() * Math.min(budget.capMs, budget.baseMs * 2 ** (n - 1))));
      }
    }
    throw new ReminderConflictError(last!.reason, budget.attempts, { cause: last!.error });
  }

  const readContest = async (contestId: string) =>
    (
      await dynamo.send(
        new GetCommand({
          TableName: tables.contests,
          Key: { contestId },
          ConsistentRead: true,
          ProjectionExpression: CONTEST_ATTRIBUTES.map((_, i) => `#a${i}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(CONTEST_ATTRIBUTES.map((name, i) => [`#a${i}`, name])),
        }),
      )
    ).Item;

  const readRow = async (contestId: string, userId: string) =>
    (await dynamo.send(new GetCommand({ TableName: tables.reminders, Key: reminderKey(contestId, userId), ConsistentRead: true }))).Item;

  return {
    async setReminder(raw) {
      const input = parseInput(setInputSchema, raw, 'setReminder');
      // One intent per call, kept across its retries: if an earlier attempt landed, the row read
      // back carries it and the call reports the change as its own.
      const intent = newIntent();
      if (!INTENT.test(intent)) throw new TypeError('newIntent must return 1 to 64 base64url characters');
      return withRetries(async () => {
        const [contest, row] = await Promise.all([readContest(input.contestId), readRow(input.contestId, input.userId)]);
        const decision = decideSet({ input, contest, row, nowSeconds: nowSeconds(), intent, dueShards });
        if (decision.kind === 'refused') throw decision.error;
        if (decision.kind === 'unchanged') return { reminder: decision.view, changed: decision.ours };
        await dynamo.send(new TransactWriteCommand(setTransaction(decision, tables)));
        return { reminder: decision.view, changed: true };
      });
    },

    async cancelReminder(raw) {
      const { contestId, userId } = parseInput(cancelInputSchema, raw, 'cancelReminder');
      return withRetries(async () => {
        const { Attributes } = await dynamo.send(
          new DeleteCommand({ TableName: tables.reminders, Key: reminderKey(contestId, userId), ReturnValues: 'ALL_OLD' }),
        );
        return { cancelled: Attributes !== undefined };
      });
    },

    async listReminders(raw) {
      const { userId, limit = DEFAULT_LIST_LIMIT, cursor } = parseInput(listInputSchema, raw, 'listReminders');
      const after = cursor === undefined ? undefined : decodeCursor(userId, cursor);
      const page = await withRetries(() =>
        dynamo.send(
          new QueryCommand({
            TableName: tables.reminders,
            IndexName: REMINDERS_BY_USER_INDEX,
            KeyConditionExpression: 'userId = :userId',
            ExpressionAttributeValues: { ':userId': userId },
            Limit: limit,
            // Rebuilt from the validated user id: a cursor never chooses the partition read.
            // The index's start key holds the table's key too: the bucket key of the caller's row of that contest.
            ...(after !== undefined ? { ExclusiveStartKey: { userId, contestId: after, contestKey: contestKeyOf(after, userId) } } : {}),
          }),
        ),
      );
      const at = nowSeconds();
      const reminders = (page.Items ?? []).flatMap((item) => {
        const view = expired(item, at) ? undefined : viewOf(item);
        return view === undefined ? [] : [view];
      });
      const lastContestId: unknown = page.LastEvaluatedKey?.contestId;
      return {
        reminders,
        ...(typeof lastContestId === 'string' ? { cursor: encodeCursor(userId, lastContestId) } : {}),
      };
    },
  };
}

/**
 * The set's transaction: the contest exactly as decided on (start, TTL, phase, not vanished, its
 * `dueStart` and `remindersPaused`), and the whole new row, conditioned on the row as read.
 */
export function setTransaction(decision: Extract<SetDecision, { kind: 'write' }>, tables: ReminderTables): TransactWriteCommandInput {
  const { contest, row, rowCondition } = decision;
  const contestNames: Record<string, string> = {
    '#start': 'startTimeSeconds',
    '#expires': 'expiresAt',
    '#phase': 'phase',
    '#vanished': 'vanishedAt',
    '#dueStart': 'dueStart',
    '#paused': 'remindersPaused',
  };
  const contestValues: Record<string, unknown> = {
    ':start': contest.startTimeSeconds,
    ':expires': contest.expiresAt,
    ':phase': contest.phase,
  };
  const contestConditions = ['#start = :start', '#expires = :expires', '#phase = :phase', 'attribute_not_exists(#vanished)'];
  if (contest.dueStart !== undefined) {
    contestConditions.push('#dueStart = :dueStart');
    contestValues[':dueStart'] = contest.dueStart;
  } else contestConditions.push('attribute_not_exists(#dueStart)');
  if (contest.remindersPaused !== undefined) {
    contestConditions.push('#paused = :paused');
    contestValues[':paused'] = contest.remindersPaused;
  } else contestConditions.push('attribute_not_exists(#paused)');

  const rowPut = rowPutCondition(rowCondition);
  return {
    TransactItems: [
      {
        ConditionCheck: {
          TableName: tables.contests,
          Key: { contestId: contest.contestId },
          ConditionExpression: contestConditions.join(' AND '),
          ExpressionAttributeNames: contestNames,
          ExpressionAttributeValues: contestValues,
        },
      },
      { Put: { TableName: tables.reminders, Item: { ...row }, ...rowPut } },
    ],
  };
}

interface Condition {
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** The Put's condition: the row is still as read (absent, the same intent, or the same legacy row). */
function rowPutCondition(rowCondition: RowCondition): Condition {
  if (rowCondition.kind === 'absent') {
    return { ConditionExpression: 'attribute_not_exists(#userId)', ExpressionAttributeNames: { '#userId': 'userId' } };
  }
  if (rowCondition.kind === 'intent') {
    return {
      ConditionExpression: '#intent = :readIntent',
      ExpressionAttributeNames: { '#intent': 'intent' },
      ExpressionAttributeValues: { ':readIntent': rowCondition.intent },
    };
  }
  const names = { '#userId': 'userId', '#intent': 'intent', '#minutes': 'minutesBefore' };
  const legacy = 'attribute_exists(#userId) AND attribute_not_exists(#intent)';
  return rowCondition.minutesBefore === undefined
    ? { ConditionExpression: `${legacy} AND attribute_not_exists(#minutes)`, ExpressionAttributeNames: names }
    : {
        ConditionExpression: `${legacy} AND #minutes = :readMinutes`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':readMinutes': rowCondition.minutesBefore },
      };
}
