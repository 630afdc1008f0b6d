/**
 * The seams where the three writers of a reminder meet (docs/design.md, "One sync: gather, judge,
 * act" and "One rule decides whether a reminder may fire"), proved on the bundles `cdk deploy`
 * uploads: the sync and the delivery function each invocation its own process, on DynamoDB Local
 * with tables from the synthesized template, the app writing through the write path
 * (lambda/reminders/, createReminderClient), the Codeforces stand-in serving the truth, and the
 * DynamoDB proxy acting at the exact request of a seam (local/dynamo-proxy.ts).
 *
 * Time is simulated: every process of a step runs on one clock (test/support/invoke-bundle.mjs,
 * CLOCK_SHIFT_MS), which the test moves forward between steps — a sync at each hour, the delivery
 * function at each minute around every due time — while leases, timeouts and the proxy's delays
 * take their real time. What users receive is judged on the outbox: each ReminderDue event's id,
 * the start it was sent for, and when its claim committed (`createdAtMs`, on the simulated clock)
 * against start − minutesBefore.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { dirname, join } from 'node:path';
import { BatchWriteCommand, GetCommand, type BatchWriteCommandOutput } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { REMINDER_DUE, reminderDueId } from '../../lambda/delivery/due.js';
import { decideSet } from '../../lambda/reminders/decide.js';
import { createReminderClient, randomIntent, type ReminderClient } from '../../lambda/reminders/index.js';
import { startCodeforcesStandin, type CodeforcesStandin } from '../../local/codeforces-standin.js';
import { startDynamoProxy, transactionLocks, type AfterApply, type ProxyRequest } from '../../local/dynamo-proxy.js';
import { bundleDirOfFunction, findDeliveryFunction, type CfnTemplate } from '../../local/template.js';
import { deliveryEnvironment } from '../chaos/runner.js';
import { scanAll } from '../support/contests.js';
import { invokeBundle, scheduledEvent, type InvocationOutcome, type RunningInvocation } from '../support/processes.js';
import { createTestTables, type TestTables } from '../support/tables.js';
import { cf } from '../support/ids.js';
import { reminderKey } from '../../lambda/reminders/table.js';
import { isReplyClockId } from '../../lambda/contests/model.js';

const MINUTE = 60;
const HOUR = 3600;
type Item = Record<string, unknown>;

let standin: CodeforcesStandin;
let template: CfnTemplate;
let deliveryEntry: string;

beforeAll(async () => {
  template = JSON.parse(readFileSync(inject('templatePath'), 'utf8'));
  const outdir = dirname(inject('templatePath'));
  deliveryEntry = join(bundleDirOfFunction(outdir, template, findDeliveryFunction(template).logicalId), 'index.mjs');
  standin = await startCodeforcesStandin();
});
afterAll(async () => {
  await standin?.close();
});

/** One contest as Codeforces lists it (upcoming). */
interface Listed {
  id: number;
  start: number;
}

/** What a user received: one ReminderDue event of the outbox. */
interface Sent {
  eventId: string;
  contestId: string;
  userId: string;
  minutesBefore: number;
  start: number;
  /** When its claim committed (simulated epoch s), and how long after start − minutesBefore. */
  claimedAt: number;
  afterDue: number;
}

/**
 * One simulated world: fresh tables, one clock for every process and the app, the sync and the
 * delivery bundles, the app's write path.
 */
class World {
  /** Simulated time = real time + shift (ms); moved only forward. */
  private shift = 0;
  readonly app: ReminderClient;
  readonly locks = transactionLocks();
  readonly deliveries: InvocationOutcome[] = [];
  readonly syncs: InvocationOutcome[] = [];

  constructor(
    readonly tables: TestTables,
    startMs: number,
  ) {
    this.shift = startMs - Date.now();
    this.app = createReminderClient({
      dynamo: tables.doc,
      tables: { contests: tables.names.contests, reminders: tables.names.reminders },
      now: () => this.nowMs(),
    });
  }

  static async create(label: string, startSeconds: number): Promise<World> {
    return new World(await createTestTables(label), startSeconds * 1000);
  }

  nowMs(): number {
    return Date.now() + this.shift;
  }

  nowSeconds(): number {
    return Math.floor(this.nowMs() / 1000);
  }

  /** Moves the clock forward to `seconds` (never back). */
  at(seconds: number): void {
    const shift = seconds * 1000 - Date.now();
    if (shift > this.shift) this.shift = shift;
  }

  private clockEnv(): Record<string, string> {
    return { CLOCK_SHIFT_MS: String(this.shift) };
  }

  /**
   * One sync at the clock's time, serving `list` (or a Codeforces failure) dated now, its interval
   * the hour `interval` (a retry passes the hour it retries); `hook` acts at its requests.
   */
  async sync(
    reply: Listed[] | 'codeforces-fails',
    options: {
      interval: number;
      leaseSeconds?: number;
      hook?: (run: RunningInvocation) => AfterApply;
      /** Acts before a request of the sync reaches DynamoDB (no transaction holds an item then). */
      before?: (request: ProxyRequest) => Promise<void>;
      delayMs?: (request: ProxyRequest) => number;
    } = {
      interval: 0,
    },
  ): Promise<InvocationOutcome> {
    const proxy = await startDynamoProxy(this.tables.endpoint, { locks: this.locks });
    standin.clearQueue();
    if (reply === 'codeforces-fails') standin.enqueue({ status: 400, body: { status: 'FAILED', comment: 'contest.list: Internal error' } });
    else standin.enqueue({ body: { status: 'OK', result: reply.map((c) => listed(c, this.nowSeconds())) } });
    if (options.delayMs !== undefined) {
      const delay = options.delayMs;
      proxy.setTransactionHold((request) => delay(request));
    }
    const running = invokeBundle({
      entry: inject('bundleEntry'),
      event: scheduledEvent(iso(options.interval)),
      env: {
        ...this.tables.env,
        ...this.clockEnv(),
        AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint,
        CODEFORCES_API_URL: standin.baseUrl,
        // Long enough that an app's write the test makes between two of the sync's requests (inside
        // a transaction's turn) never costs the lease on a loaded machine; seam d sets its own.
        LEASE_DURATION_SECONDS: String(options.leaseSeconds ?? 15),
      },
    });
    if (options.hook !== undefined) proxy.setAfterApply(options.hook(running));
    if (options.before !== undefined) proxy.setBeforeForward(options.before);
    const outcome = await running.done;
    await proxy.close();
    if (outcome.summary === undefined && outcome.signal === null)
      throw new Error(`the sync ended without a result: ${outcome.stderr.slice(0, 1500)} ${outcome.stdout.slice(-1500)}`);
    this.syncs.push(outcome);
    return outcome;
  }

  /** One delivery pass at the clock's time: its minute's Scheduled Event, or a console run (`{}`, no interval). */
  async deliver(console = false): Promise<InvocationOutcome> {
    const minute = Math.floor(this.nowSeconds() / MINUTE) * MINUTE;
    const outcome = await invokeBundle({
      entry: deliveryEntry,
      event: console ? {} : scheduledEvent(iso(minute)),
      env: {
        ...deliveryEnvironment(template, this.tables.names, 6),
        ...this.clockEnv(),
        AWS_ENDPOINT_URL_DYNAMODB: this.tables.endpoint,
      },
    }).done;
    expect(outcome.summary?.outcome, outcome.stderr.slice(0, 500)).toBe('succeeded');
    this.deliveries.push(outcome);
    return outcome;
  }

  /** The delivery function every minute from `from` to `to` (simulated epoch s, inclusive). */
  async deliverEveryMinute(from: number, to: number): Promise<void> {
    for (let t = from; t <= to; t += MINUTE) {
      this.at(t);
      await this.deliver();
    }
  }

  /** What users received: the outbox's ReminderDue events. */
  async sent(): Promise<Sent[]> {
    const items = await scanAll(this.tables.doc, this.tables.names.outbox!);
    return items
      .filter((item) => item.detailType === REMINDER_DUE)
      .map((item) => {
        const detail = JSON.parse(String(item.detail)) as Item;
        const start = Number(detail.startTimeSeconds);
        const minutesBefore = Number(detail.minutesBefore);
        const claimedAt = Number(item.createdAtMs) / 1000;
        return {
          eventId: String(item.eventId),
          contestId: String(detail.contestId),
          userId: String(detail.userId),
          minutesBefore,
          start,
          claimedAt,
          afterDue: claimedAt - (start - 60 * minutesBefore),
        };
      })
      .sort((a, b) => a.claimedAt - b.claimedAt);
  }

  /** The contest events of the outbox. */
  async contestEvents(): Promise<{ eventId: string; detailType: string; detail: Item }[]> {
    const items = await scanAll(this.tables.doc, this.tables.names.outbox!);
    return items
      .filter((item) => item.detailType !== REMINDER_DUE)
      .map((item) => ({
        eventId: String(item.eventId),
        detailType: String(item.detailType),
        detail: JSON.parse(String(item.detail)) as Item,
      }));
  }

  async row(contestId: number, userId: string): Promise<Item | undefined> {
    const out = await this.tables.doc.send(
      new GetCommand({ TableName: this.tables.names.reminders, Key: reminderKey(cf(contestId), userId), ConsistentRead: true }),
    );
    return out.Item;
  }

  async contest(contestId: number): Promise<Item | undefined> {
    const out = await this.tables.doc.send(
      new GetCommand({ TableName: this.tables.names.contests, Key: { contestId: cf(contestId) }, ConsistentRead: true }),
    );
    return out.Item;
  }

  /**
   * Many reminders at once, as the write path decides them (decideSet on the contest as read, the
   * row it would put), written in batches: the set-up of a popular contest without a transaction
   * per row. The reminders under test are set through the write path itself.
   */
  async seed(contestId: number, users: [userId: string, minutesBefore: number][]): Promise<void> {
    const contest = await this.contest(contestId);
    const rows = users.map(([userId, minutesBefore]) => {
      const decision = decideSet({
        input: { contestId: cf(contestId), userId, minutesBefore },
        contest,
        row: undefined,
        nowSeconds: this.nowSeconds(),
        intent: randomIntent(),
        dueShards: 1,
      });
      if (decision.kind !== 'write') throw new Error(`seed ${userId}: ${decision.kind}`);
      return decision.row;
    });
    for (let i = 0; i < rows.length; i += 25) {
      let requests: unknown[] | undefined = rows.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
      while (requests !== undefined && requests.length > 0) {
        const out: BatchWriteCommandOutput = await this.tables.doc.send(
          new BatchWriteCommand({ RequestItems: { [this.tables.names.reminders]: requests as never } }),
        );
        requests = out.UnprocessedItems?.[this.tables.names.reminders];
      }
    }
  }
}

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/** A Codeforces entry as a reply made at `madeAt` lists it. */
function listed(contest: Listed, madeAt: number): Item {
  return {
    id: contest.id,
    name: `Codeforces Round ${contest.id} (Div. 2)`,
    type: 'CF',
    phase: 'BEFORE',
    frozen: false,
    durationSeconds: 7200,
    startTimeSeconds: contest.start,
    relativeTimeSeconds: madeAt - contest.start,
  };
}

/** The next whole hour after now (simulated days start there). */
const nextHour = (): number => Math.ceil(Date.now() / 1000 / HOUR) * HOUR + HOUR;

const tableOf = (action: Item): string | undefined =>
  ((action.Put ?? action.Update ?? action.ConditionCheck ?? action.Delete) as { TableName?: string } | undefined)?.TableName;
const transactItems = (request: ProxyRequest): Item[] =>
  request.operation === 'TransactWriteItems' ? ((request.body?.TransactItems as Item[] | undefined) ?? []) : [];
/** The sync's transaction that puts contest items (not the reply clock, `clock#<platform>`). */
const isContestCommit = (request: ProxyRequest, tables: TestTables): boolean =>
  transactItems(request).some((a) => {
    const id = (a.Put as { Item?: { contestId?: { S?: string } } } | undefined)?.Item?.contestId?.S;
    return tableOf(a) === tables.names.contests && id !== undefined && !isReplyClockId(id);
  });
const isReminderCommit = (request: ProxyRequest, tables: TestTables): boolean =>
  transactItems(request).some((a) => a.Update !== undefined && tableOf(a) === tables.names.reminders);
/** A Query of a contest's reminders (one of its bucket keys; not the byDue sweep of retired shards). */
const isReminderRead = (request: ProxyRequest, tables: TestTables): boolean =>
  request.operation === 'Query' && request.body?.TableName === tables.names.reminders && request.body.IndexName === undefined;

function report(seam: string, sent: readonly Sent[], extra: Record<string, unknown> = {}): void {
  const byStart: Record<string, number> = {};
  for (const s of sent) byStart[String(s.start)] = (byStart[String(s.start)] ?? 0) + 1;
  const late = sent.map((s) => s.afterDue);
  console.info(
    `[seam ${seam}] ${JSON.stringify({
      sent: sent.length,
      ids: new Set(sent.map((s) => s.eventId)).size,
      byStart,
      secondsAfterDue: { min: Math.min(...late), max: Math.max(...late) },
      ...extra,
    })}`,
  );
}

describe('the seams between the app, the sync and delivery (bundles, simulated clock)', { timeout: 90_000 }, () => {
  it('a. a reminder set at every moment of a sync that moves its contest by +2 h: never early, sent once for the new start', async () => {
    const H = nextHour();
    const world = await World.create('seam-a', H - HOUR);
    const X = 4001;
    const oldStart = H + 40 * MINUTE;
    const newStart = oldStart + 2 * HOUR;
    const others: Listed[] = [
      { id: 4002, start: H + 5 * HOUR },
      { id: 4003, start: H + 9 * HOUR },
      { id: 4004, start: H + 30 * HOUR },
    ];
    expect((await world.sync([{ id: X, start: oldStart }, ...others], { interval: H - HOUR })).summary?.outcome).toBe('succeeded');
    // 150 reminders before the move (two transactions of the sync's reminder moves), due at H+10 min at the old start.
    world.at(H - HOUR + 5 * MINUTE);
    const seeded = Array.from({ length: 150 }, (_, i) => [`seed-${i}`, 30] as [string, number]);
    await world.seed(X, seeded);

    // The move, with the app acting at each seam of the sync's act step.
    world.at(H);
    const moments: string[] = [];
    const setAt = async (moment: string, userId: string, minutesBefore = 30) => {
      moments.push(moment);
      await world.app.setReminder({ contestId: cf(X), userId, minutesBefore });
    };
    const done = new Set<string>();
    let reminderCommits = 0;
    const once = async (moment: string, body: () => Promise<void>) => {
      if (done.has(moment)) return;
      done.add(moment);
      await body();
    };
    const moved = await world.sync([{ id: X, start: newStart }, ...others], {
      interval: H,
      // Each moment is just before the sync's next request reaches DynamoDB: what it wrote before is committed.
      before: async (request) => {
        if (isContestCommit(request, world.tables)) await once('read', () => setAt('after the reads, before the contest commit', 'a-read'));
        else if (isReminderRead(request, world.tables))
          await once('contest', () => setAt('after the contest commit, before the reminder read', 'a-contest'));
        else if (isReminderCommit(request, world.tables) && !done.has('query'))
          await once('query', async () => {
            await setAt('after the reminder read, before its transactions', 'a-query');
            // A lead changed in place after the sync read the row: the sync's update of it is refused (intent).
            await setAt('a lead changed after the reminder read', 'seed-0', 31);
          });
        else if (isReminderCommit(request, world.tables) && reminderCommits > 0)
          await once('txn', () => setAt('between the reminder transactions', 'a-txn'));
      },
      hook: () => (request, reply) => {
        if (reply.status === 200 && isReminderCommit(request, world.tables)) reminderCommits += 1;
      },
    });
    expect(moved.summary, JSON.stringify(moved.summary)).toMatchObject({ outcome: 'succeeded' });
    expect(done).toEqual(new Set(['read', 'contest', 'query', 'txn']));

    // Delivery every minute across the old due time (H+10 min) and the new one (H+130 min); hourly syncs keep the evidence fresh.
    await world.deliverEveryMinute(H + MINUTE, H + MINUTE);
    await world.deliverEveryMinute(H + 9 * MINUTE, H + 11 * MINUTE);
    world.at(H + 35 * MINUTE);
    await world.deliver();
    for (const hour of [H + HOUR, H + 2 * HOUR]) {
      world.at(hour);
      expect((await world.sync([{ id: X, start: newStart }, ...others], { interval: hour })).summary?.outcome).toBe('succeeded');
      await world.deliverEveryMinute(hour + MINUTE, hour + MINUTE);
    }
    await world.deliverEveryMinute(newStart - 32 * MINUTE, newStart - 29 * MINUTE);
    const sent = await world.sent();
    report('a', sent, { moments });
    // Every reminder once, for the new start, never before start − minutesBefore, within the minute after it.
    const users = [...seeded.map(([u]) => u), 'a-read', 'a-contest', 'a-query', 'a-txn'];
    expect(sent.map((s) => s.userId).sort()).toEqual(users.sort());
    expect(new Set(sent.map((s) => s.eventId)).size).toBe(sent.length);
    for (const s of sent) {
      expect(s.start, s.userId).toBe(newStart);
      expect(s.afterDue, s.userId).toBeGreaterThanOrEqual(0);
      expect(s.afterDue, s.userId).toBeLessThan(MINUTE + 5);
      const row = await world.row(X, s.userId);
      expect(s.eventId).toBe(reminderDueId(cf(X), s.userId, String(row?.intent), newStart));
    }
    expect(sent.find((s) => s.userId === 'seed-0')?.minutesBefore).toBe(31);
  });

  it('b. sent, then cancelled and set again (same lead, another lead), a lead changed in place, a duplicated set: each intent told once', async () => {
    const H = nextHour();
    const world = await World.create('seam-b', H);
    const Y = 4101;
    const start = H + 20 * MINUTE;
    const list: Listed[] = [
      { id: Y, start },
      { id: 4102, start: H + 5 * HOUR },
      { id: 4103, start: H + 9 * HOUR },
    ];
    expect((await world.sync(list, { interval: H })).summary?.outcome).toBe('succeeded');
    const set = (userId: string, minutesBefore: number) => world.app.setReminder({ contestId: cf(Y), userId, minutesBefore });
    const intents: Record<string, string[]> = {};
    const noteIntent = async (userId: string) => {
      const intent = String((await world.row(Y, userId))?.intent);
      if (!(intents[userId] ??= []).includes(intent)) intents[userId].push(intent);
    };

    // Set at H+30 s, due at H+5 min (15 minutes before the start); the duplicated set twice at once, then retried.
    world.at(H + 30);
    for (const userId of ['b-same', 'b-other', 'b-inplace']) await set(userId, 15);
    const duplicated = await Promise.all([set('b-dup', 15), set('b-dup', 15)]);
    expect(duplicated.map((r) => r.changed).sort()).toEqual([false, true]);
    expect((await set('b-dup', 15)).changed).toBe(false);
    for (const userId of ['b-same', 'b-other', 'b-inplace', 'b-dup']) await noteIntent(userId);
    await world.deliverEveryMinute(H + 4 * MINUTE, H + 5 * MINUTE);
    expect((await world.sent()).map((s) => s.userId).sort()).toEqual(['b-dup', 'b-inplace', 'b-other', 'b-same']);

    // Sent; then each user acts again at H+5 min 20 s.
    world.at(H + 5 * MINUTE + 20);
    expect(await world.app.cancelReminder({ contestId: cf(Y), userId: 'b-same' })).toEqual({ cancelled: true });
    expect((await set('b-same', 15)).changed).toBe(true); // the same lead after a cancel: a new intent, due at once
    expect(await world.app.cancelReminder({ contestId: cf(Y), userId: 'b-other' })).toEqual({ cancelled: true });
    expect((await set('b-other', 13)).changed).toBe(true); // another lead after a cancel: due at H+7 min
    expect((await set('b-inplace', 16)).changed).toBe(true); // the lead changed in place: due at H+4 min, at once
    expect((await set('b-dup', 15)).changed).toBe(false); // sent, the same intent again: nothing
    for (const userId of ['b-same', 'b-other', 'b-inplace', 'b-dup']) await noteIntent(userId);
    await world.deliverEveryMinute(H + 6 * MINUTE, H + 7 * MINUTE);
    // Retried and duplicated sets of what was just sent change nothing, and nothing is sent twice.
    world.at(H + 7 * MINUTE + 20);
    expect(
      (await Promise.all([set('b-same', 15), set('b-same', 15), set('b-other', 13), set('b-inplace', 16)])).map((r) => r.changed),
    ).toEqual([false, false, false, false]);
    await world.deliverEveryMinute(H + 8 * MINUTE, H + 9 * MINUTE);

    const sent = await world.sent();
    report('b', sent, {
      perUser: Object.fromEntries(
        ['b-same', 'b-other', 'b-inplace', 'b-dup'].map((u) => [
          u,
          sent.filter((s) => s.userId === u).map((s) => `${s.minutesBefore}min@+${Math.round(s.afterDue)}s`),
        ]),
      ),
    });
    expect(new Set(sent.map((s) => s.eventId)).size).toBe(sent.length);
    for (const s of sent) {
      expect(s.start).toBe(start);
      expect(s.afterDue, `${s.userId} ${s.minutesBefore}`).toBeGreaterThanOrEqual(0);
      expect(s.afterDue, `${s.userId} ${s.minutesBefore}`).toBeLessThan(3 * MINUTE);
    }
    const of = (userId: string) => sent.filter((s) => s.userId === userId);
    expect(of('b-same').map((s) => s.minutesBefore)).toEqual([15, 15]);
    expect(of('b-other').map((s) => s.minutesBefore)).toEqual([15, 13]);
    expect(of('b-inplace').map((s) => s.minutesBefore)).toEqual([15, 16]);
    expect(of('b-dup').map((s) => s.minutesBefore)).toEqual([15]);
    // Each intent once, under its own id.
    for (const userId of ['b-same', 'b-other', 'b-inplace', 'b-dup'])
      expect(of(userId).map((s) => s.eventId)).toEqual(intents[userId]!.map((intent) => reminderDueId(cf(Y), userId, intent, start)));
  });

  it('c. a split commit stopped after its first transaction, a doubt pause that rewrites the contest, a good sync: the change is told once', async () => {
    const H = nextHour();
    const world = await World.create('seam-c', H);
    const Z = 4201;
    const oldStart = H + 3 * HOUR;
    const newStart = oldStart + 2 * HOUR;
    const others: Listed[] = [
      { id: 4202, start: H + 7 * HOUR },
      { id: 4203, start: H + 11 * HOUR },
      { id: 4204, start: H + 30 * HOUR },
    ];
    const moved = [{ id: Z, start: newStart }, ...others];
    expect((await world.sync([{ id: Z, start: oldStart }, ...others], { interval: H })).summary?.outcome).toBe('succeeded');
    // 150 reminders: two transactions of moves. Due at H+70 min at the old start, H+190 min at the new one.
    world.at(H + MINUTE);
    await world.seed(
      Z,
      Array.from({ length: 150 }, (_, i) => [`c-${i}`, 110] as [string, number]),
    );
    /** Kills the sync right after its first transaction committed. */
    const killAfterFirstCommit = (run: RunningInvocation): AfterApply => {
      let killed = false;
      return async (request, reply) => {
        if (killed || request.operation !== 'TransactWriteItems' || reply.status !== 200) return;
        killed = true;
        run.child.kill('SIGKILL');
        await new Promise((resolve) => run.child.once('exit', resolve));
      };
    };
    const hour = H + HOUR;
    // 1. The first reply of the move: killed after its contest commit (the gate moved, its reminders not yet).
    world.at(hour);
    expect((await world.sync(moved, { interval: hour, leaseSeconds: 2, hook: killAfterFirstCommit })).signal).toBe('SIGKILL');
    world.at(hour + MINUTE);
    await world.deliver();
    // 2. Its retry, the second reply: the change is told with the contest; killed after that first transaction.
    world.at(hour + 2 * MINUTE);
    expect((await world.sync(moved, { interval: hour, leaseSeconds: 2, hook: killAfterFirstCommit })).signal).toBe('SIGKILL');
    const told = (await world.contestEvents()).filter((e) => e.detail.contestId === cf(Z));
    expect(told.map((e) => e.detailType)).toEqual(['ContestAnnounced', 'ContestRescheduled']);
    // 3. Codeforces fails: the doubt pause rewrites the contest (its gate removed) without publishing.
    world.at(hour + 4 * MINUTE);
    const doubt = await world.sync('codeforces-fails', { interval: hour });
    expect(doubt.summary).toMatchObject({ outcome: 'failed', reason: 'codeforces' });
    const paused = await world.contest(Z);
    expect(paused).toMatchObject({ remindersPaused: 'held', startTimeSeconds: newStart });
    expect(paused?.dueStart).toBeUndefined();
    // 4. A good sync.
    world.at(hour + 6 * MINUTE);
    expect((await world.sync(moved, { interval: hour })).summary).toMatchObject({ outcome: 'succeeded' });
    expect(await world.contest(Z)).toMatchObject({ dueStart: newStart });
    await world.deliverEveryMinute(H + 70 * MINUTE, H + 71 * MINUTE);
    for (const next of [H + 2 * HOUR, H + 3 * HOUR]) {
      world.at(next);
      expect((await world.sync(moved, { interval: next })).summary?.outcome).toBe('succeeded');
    }
    await world.deliverEveryMinute(newStart - 111 * MINUTE, newStart - 109 * MINUTE);

    const events = (await world.contestEvents()).filter((e) => e.detail.contestId === cf(Z));
    const sent = await world.sent();
    report('c', sent, { contestEvents: events.map((e) => `${e.detailType}#${String(e.detail.sequence)}`) });
    expect(events.map((e) => e.detailType)).toEqual(['ContestAnnounced', 'ContestRescheduled']);
    expect(events.map((e) => e.eventId)).toEqual(told.map((e) => e.eventId));
    expect(events[1]?.detail).toMatchObject({ sequence: 2, previousStartTimeSeconds: oldStart, startTimeSeconds: newStart });
    expect(sent).toHaveLength(150);
    expect(new Set(sent.map((s) => s.userId)).size).toBe(150);
    for (const s of sent) {
      expect(s.start).toBe(newStart);
      expect(s.afterDue).toBeGreaterThanOrEqual(0);
      expect(s.afterDue).toBeLessThan(MINUTE + 5);
    }
  });

  it('d. a commit larger than a lease (600 reminders moved, 400 ms a transaction, lease 3 s): the sync keeps its lease, no reminder claimable at a start its contest does not have', async () => {
    const H = nextHour();
    const world = await World.create('seam-d', H - HOUR);
    const W = 4301;
    const oldStart = H + 25 * MINUTE;
    const newStart = oldStart + 2 * HOUR;
    const others: Listed[] = [
      { id: 4302, start: H + 7 * HOUR },
      { id: 4303, start: H + 11 * HOUR },
      { id: 4304, start: H + 30 * HOUR },
    ];
    const moved = [{ id: W, start: newStart }, ...others];
    expect((await world.sync([{ id: W, start: oldStart }, ...others], { interval: H - HOUR })).summary?.outcome).toBe('succeeded');
    // 600 reminders due at H at the old start: at the sync's very minute, before any delivery pass ran.
    world.at(H - 50 * MINUTE);
    await world.seed(
      W,
      Array.from({ length: 600 }, (_, i) => [`d-${i}`, 25] as [string, number]),
    );
    world.at(H);
    /** What the tables let delivery claim, after each transaction: rows due whose dueStart is their contest's. */
    const moments: { claimable: number; atOldStart: number; contestDueStart: unknown }[] = [];
    const passes: Promise<InvocationOutcome>[] = [];
    const looks: Promise<void>[] = [];
    let committing = true;
    const look = async () => {
      const contest = await world.contest(W);
      const rows = (await scanAll(world.tables.doc, world.tables.names.reminders)).filter((r) => r.dueAt !== undefined);
      const claimable = rows.filter((r) => contest?.dueStart !== undefined && r.dueStart === contest.dueStart);
      for (const r of claimable) {
        expect(r.dueStart).toBe(contest?.startTimeSeconds);
        expect(r.dueAt).toBe(Number(r.dueStart) - 60 * Number(r.minutesBefore));
        expect(Number(r.dueAt)).toBeGreaterThan(world.nowSeconds());
      }
      moments.push({
        claimable: claimable.length,
        atOldStart: rows.filter((r) => r.dueStart === oldStart).length,
        contestDueStart: contest?.dueStart,
      });
    };
    const result = await world.sync(moved, {
      interval: H,
      leaseSeconds: 3,
      delayMs: () => 400,
      hook: () => async (request, reply) => {
        if (reply.status !== 200 || request.operation !== 'TransactWriteItems') return;
        // Looked at beside the commit, not in its way (the transaction's items stay locked until it answers).
        looks.push(look());
        // From the contest's commit on, delivery passes run beside the commit, back to back.
        if (passes.length === 0 && isContestCommit(request, world.tables))
          passes.push(
            (async () => {
              let last: InvocationOutcome | undefined;
              while (committing) {
                last = await world.deliver(true);
                await sleep(250);
              }
              return last!;
            })(),
          );
      },
    });
    committing = false;
    await Promise.all([...passes, ...looks]);
    expect(result.summary, JSON.stringify(result.summary)).toMatchObject({ outcome: 'succeeded' });
    expect(result.summary?.durationMs).toBeGreaterThan(3_000);
    const during = await world.sent();
    expect(during).toEqual([]);
    // Every moment after the contest's commit: its gate at the new start, only rows moved to it claimable.
    expect(moments.length).toBeGreaterThanOrEqual(8);
    expect(moments[0]).toMatchObject({ contestDueStart: newStart, claimable: 0, atOldStart: 600 });
    expect(moments.at(-1)).toMatchObject({ contestDueStart: newStart, claimable: 600, atOldStart: 0 });

    for (const next of [H + HOUR, H + 2 * HOUR]) {
      world.at(next);
      expect((await world.sync(moved, { interval: next })).summary?.outcome).toBe('succeeded');
    }
    await world.deliverEveryMinute(newStart - 26 * MINUTE, newStart - 24 * MINUTE);
    const sent = await world.sent();
    report('d', sent, {
      syncMs: result.summary?.durationMs,
      heartbeats: result.summary?.counts.heartbeats,
      transactions: result.summary?.counts.transactions,
      moments: moments.map((m) => `${m.claimable}/${m.atOldStart}`),
      passesDuringCommit: world.deliveries.length,
    });
    expect(sent).toHaveLength(600);
    for (const s of sent) {
      expect(s.start).toBe(newStart);
      expect(s.afterDue).toBeGreaterThanOrEqual(0);
      expect(s.afterDue).toBeLessThan(MINUTE + 5);
    }
  });
});
