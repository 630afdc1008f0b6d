/**
 * The simulated app's reminder writes (docs/simulation.md, "The app"): every set and cancel of
 * every user goes through one function, `write`, so that the way a reminder is written can be
 * swapped whole — today the raw transaction of docs/tables.md ("What the app does when it writes
 * a reminder"), later the product's write path (setReminder / cancelReminder).
 *
 * The raw write, as documented: read the contest (consistently); write the row with
 * `minutesBefore`, `remindAt`, `expiresAt` = the contest's, and — when the contest has neither
 * `remindersPaused` nor `vanishedAt` — `dueAt = remindAt`, `dueStart`, `dueShard`, in a
 * TransactWriteItems with a ConditionCheck that the contest is still as read; otherwise (or when the
 * contest changed three times under it) without `dueAt`, a plain Put. What the contract leaves
 * open is done the way the product's write path will do it: a row is written whole and conditioned
 * on the row as read (a changed lead or a set after a cancel is a new intent, stamped in `intent`;
 * the same lead again changes nothing), a cancel deletes the row as read, and a set of a contest
 * that has started is refused (one whose lead has passed is written: it is due at once).
 */
import { randomBytes } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export type AppRequest =
  { kind: 'set'; contestId: number; userId: string; minutesBefore: number } | { kind: 'cancel'; contestId: number; userId: string };

export type AppOutcome =
  /** `changed`: a new intent (a new reminder, a changed lead, a set after a cancel); `due`: written with `dueAt`. */
  | { kind: 'set'; changed: boolean; due: boolean }
  | { kind: 'cancel'; cancelled: boolean }
  | { kind: 'refused'; reason: 'not-found' | 'started' | 'conflict' };

export interface WritePathDeps {
  doc: DynamoDBDocumentClient;
  contests: string;
  reminders: string;
  /** The app's clock (epoch ms). */
  now: () => number;
  dueShards: number;
  /** A new intent id (CONTRACT: 128 random bits, base64url). */
  newIntent?: () => string;
  /** Called when the contest or the row changed between the read and the write (the write is tried again). */
  onConflict?: () => void;
}

/** Attempts of one write whose condition keeps being refused before it gives up (`conflict`). */
export const WRITE_ATTEMPTS = 5;

export function newIntentId(): string {
  return randomBytes(16).toString('base64url');
}

const refusedCode = (error: unknown, index: number): string | undefined =>
  (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons?.[index]?.Code;

/** The raw write path of docs/tables.md: one function, `write`, for every set and cancel. */
export function rawWritePath(deps: WritePathDeps): (request: AppRequest) => Promise<AppOutcome> {
  const newIntent = deps.newIntent ?? newIntentId;
  const read = async (contestId: number, userId: string) => {
    const [contest, row] = await Promise.all([
      deps.doc.send(new GetCommand({ TableName: deps.contests, Key: { contestId }, ConsistentRead: true })),
      deps.doc.send(new GetCommand({ TableName: deps.reminders, Key: { contestId, userId }, ConsistentRead: true })),
    ]);
    return { contest: contest.Item, row: row.Item };
  };
  /** The condition that the row is still as read. */
  const asRead = (
    row: Record<string, unknown> | undefined,
  ): { ConditionExpression: string; ExpressionAttributeValues?: Record<string, unknown> } =>
    row === undefined
      ? { ConditionExpression: 'attribute_not_exists(userId)' }
      : typeof row.intent === 'string'
        ? { ConditionExpression: 'intent = :readIntent', ExpressionAttributeValues: { ':readIntent': row.intent } }
        : {
            ConditionExpression: 'minutesBefore = :readMinutes AND attribute_not_exists(intent)',
            ExpressionAttributeValues: { ':readMinutes': row.minutesBefore },
          };

  const set = async (contestId: number, userId: string, minutesBefore: number): Promise<AppOutcome> => {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt += 1) {
      const { contest, row } = await read(contestId, userId);
      if (contest === undefined || typeof contest.startTimeSeconds !== 'number') return { kind: 'refused', reason: 'not-found' };
      const start = contest.startTimeSeconds;
      if (Math.floor(deps.now() / 1000) >= start) return { kind: 'refused', reason: 'started' };
      // The same lead as stored: the same intent, nothing to write (a retried or repeated set).
      if (row !== undefined && row.minutesBefore === minutesBefore) return { kind: 'set', changed: false, due: row.dueAt !== undefined };
      const remindAt = start - 60 * minutesBefore;
      const item: Record<string, unknown> = {
        contestId,
        userId,
        minutesBefore,
        remindAt,
        intent: newIntent(),
        ...(typeof contest.expiresAt === 'number' ? { expiresAt: contest.expiresAt } : {}),
      };
      const mayBeDue = contest.remindersPaused === undefined && contest.vanishedAt === undefined && attempt < 3;
      const rowCondition = asRead(row);
      try {
        if (mayBeDue) {
          await deps.doc.send(
            new TransactWriteCommand({
              TransactItems: [
                {
                  Put: {
                    TableName: deps.reminders,
                    Item: { ...item, dueAt: remindAt, dueStart: start, dueShard: contestId % deps.dueShards },
                    ...rowCondition,
                  },
                },
                {
                  ConditionCheck: {
                    TableName: deps.contests,
                    Key: { contestId },
                    ConditionExpression:
                      'startTimeSeconds = :s AND attribute_not_exists(vanishedAt) AND attribute_not_exists(remindersPaused)',
                    ExpressionAttributeValues: { ':s': start },
                  },
                },
              ],
            }),
          );
        } else {
          await deps.doc.send(new PutCommand({ TableName: deps.reminders, Item: item, ...rowCondition }));
        }
        return { kind: 'set', changed: true, due: mayBeDue };
      } catch (error) {
        const name = (error as Error).name;
        if (name === 'TransactionCanceledException') {
          if (refusedCode(error, 0) !== 'ConditionalCheckFailed' && refusedCode(error, 1) !== 'ConditionalCheckFailed') throw error;
        } else if (name !== 'ConditionalCheckFailedException') {
          throw error;
        }
        // The contest or the row changed between the read and the write: read both again.
        deps.onConflict?.();
      }
    }
    return { kind: 'refused', reason: 'conflict' };
  };

  const cancel = async (contestId: number, userId: string): Promise<AppOutcome> => {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt += 1) {
      const { row } = await read(contestId, userId);
      if (row === undefined) return { kind: 'cancel', cancelled: false };
      try {
        await deps.doc.send(new DeleteCommand({ TableName: deps.reminders, Key: { contestId, userId }, ...asRead(row) }));
        return { kind: 'cancel', cancelled: true };
      } catch (error) {
        if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
        deps.onConflict?.();
      }
    }
    return { kind: 'refused', reason: 'conflict' };
  };

  return (request) =>
    request.kind === 'set' ? set(request.contestId, request.userId, request.minutesBefore) : cancel(request.contestId, request.userId);
}

/** Lead times users choose (minutes). */
export const LEAD_MINUTES = [5, 10, 15, 30, 60, 120, 180, 1440] as const;

/** A contest the app shows: its id and start as the app read them. */
export interface Shown {
  contestId: number;
  startTimeSeconds: number;
}

/**
 * Users who set, change, cancel and set again their reminders at any moment (docs/simulation.md,
 * "The app"): each action picks a contest the app shows (near its start more often than not) and a
 * user, and does what that user would do next — set a reminder if they have none, otherwise change
 * its lead, cancel it, set the same lead again (which changes nothing), or cancel and set it again
 * at once (a new intent for the same lead, also after it was sent).
 */
export class FickleUsers {
  /** What each user asked last (`contestId/userId` → minutes), as the app's own answers said. */
  private readonly asked = new Map<string, number>();
  readonly actions: Record<string, number> = {};

  constructor(
    private readonly random: () => number,
    private readonly write: (request: AppRequest) => Promise<AppOutcome>,
    private readonly users: readonly string[] = ['fickle-0', 'fickle-1', 'fickle-2'],
  ) {}

  private count(what: string): void {
    this.actions[what] = (this.actions[what] ?? 0) + 1;
  }

  /** One action on one of `shown` (those starting after `nowSeconds`), if any. */
  async act(shown: readonly Shown[], nowSeconds: number): Promise<void> {
    const ahead = shown.filter((s) => s.startTimeSeconds > nowSeconds);
    if (ahead.length === 0) return;
    const near = ahead.filter((s) => s.startTimeSeconds - nowSeconds <= 6 * 3600);
    const pool = near.length > 0 && this.random() < 0.6 ? near : ahead;
    const target = pool[Math.floor(this.random() * pool.length)]!;
    await this.actOn(target, nowSeconds);
  }

  /** One action on `target`. */
  async actOn(target: Shown, nowSeconds: number): Promise<void> {
    const userId = this.users[Math.floor(this.random() * this.users.length)]!;
    const key = `${target.contestId}/${userId}`;
    const current = this.asked.get(key);
    const draw = this.random();
    if (current === undefined) {
      await this.set(target, userId, this.lead(target, nowSeconds), 'set');
    } else if (draw < 0.35) {
      let lead = this.lead(target, nowSeconds);
      if (lead === current) lead = current === 60 ? 10 : 60;
      await this.set(target, userId, lead, 'change');
    } else if (draw < 0.65) {
      await this.cancel(target, userId, 'cancel');
    } else if (draw < 0.8) {
      await this.set(target, userId, current, 'set-same');
    } else {
      await this.cancel(target, userId, 'cancel-and-set');
      await this.set(target, userId, current, 'set-again');
    }
  }

  /** A lead: one users choose (it may have passed: due at once), or, within 3 hours of the start, one due within minutes. */
  private lead(target: Shown, nowSeconds: number): number {
    const minutesAhead = Math.floor((target.startTimeSeconds - nowSeconds) / 60);
    if (minutesAhead > 2 && minutesAhead <= 180 && this.random() < 0.5)
      return Math.max(1, minutesAhead - 1 - Math.floor(this.random() * 20));
    return LEAD_MINUTES[Math.floor(this.random() * LEAD_MINUTES.length)]!;
  }

  private async set(target: Shown, userId: string, minutesBefore: number, what: string): Promise<void> {
    this.count(what);
    const outcome = await this.write({ kind: 'set', contestId: target.contestId, userId, minutesBefore });
    if (outcome.kind === 'set') this.asked.set(`${target.contestId}/${userId}`, minutesBefore);
    else if (outcome.kind === 'refused') this.count(`refused-${outcome.reason}`);
  }

  private async cancel(target: Shown, userId: string, what: string): Promise<void> {
    this.count(what);
    const outcome = await this.write({ kind: 'cancel', contestId: target.contestId, userId });
    if (outcome.kind === 'cancel') this.asked.delete(`${target.contestId}/${userId}`);
    else if (outcome.kind === 'refused') this.count(`refused-${outcome.reason}`);
  }
}
