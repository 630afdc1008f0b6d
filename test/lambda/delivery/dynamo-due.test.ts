/**
 * The delivery port and pass on a mocked DynamoDB (aws-sdk-client-mock): the Query and the
 * contest reads it sends, and how claims commit through the package's real fenced writer and
 * outbox — one transaction per batch of 49 claims with their events and one ConditionCheck per
 * contest (the rule), a lost row dropped and the rest sent again (DynamoDB names every refused
 * action), a refused contest check losing that contest's claims only, never a failure of the others.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import {
  DynamoFencedWriter,
  FencedWriteError,
  LeaseLostError,
  outboxPuts,
  type CommitOptions,
  type CommitResult,
  type TransactAction,
} from '@contest-sync/scheduled-singleton';
import { deliverDue } from '../../../lambda/delivery/deliver.js';
import { reminderDueId } from '../../../lambda/delivery/due.js';
import { DUE_INDEX, DeliveryReadError, DynamoDueStore, commitClaims } from '../../../lambda/delivery/dynamo-due.js';
import { bucketOf, contestKeyOf } from '../../../lambda/reminders/table.js';
import { cf } from '../../support/ids.js';

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(doc);
const tables = { reminders: 'reminders', contests: 'contests' };
const store = new DynamoDueStore(doc, tables);
const START = 1_900_000_000;
const NOW_MS = (START - 3000) * 1000;
const now = () => NOW_MS;
/** The Codeforces sync's reply clock (Contests item `clock#codeforces`): a reply applied 20 minutes ago, fresh evidence. */
const clock = { contestId: 'clock#codeforces', replyMadeAt: NOW_MS / 1000 - 1200 };

const row = (i: number, overrides: Record<string, unknown> = {}) => ({
  contestId: cf(2051),
  contestKey: contestKeyOf(
    typeof overrides.contestId === 'string' ? overrides.contestId : cf(2051),
    typeof overrides.userId === 'string' ? overrides.userId : `user-${i}`,
  ),
  userId: `user-${i}`,
  minutesBefore: 60,
  remindAt: START - 3600,
  dueAt: START - 3600,
  dueShard: 0,
  dueStart: START,
  ...overrides,
});
const contest = {
  contestId: cf(2051),
  platform: 'codeforces',
  name: 'Codeforces Round 2051',
  url: 'https://codeforces.com/contest/2051',
  startTimeSeconds: START,
  durationSeconds: 7200,
  dueStart: START,
};

const fence = (): TransactAction => ({
  ConditionCheck: {
    TableName: 'coordination',
    Key: { pk: 'lease#deliver#0' },
    ConditionExpression: 'holder = :runId',
    ExpressionAttributeValues: { ':runId': 'run-1', ':fence': 2 },
  },
});
/** The work's commit as the package builds it: the real writer, the real outbox puts. */
function packageCommit() {
  const writer = new DynamoFencedWriter(doc, { now, sleep: async () => undefined });
  return async (actions: readonly TransactAction[], options: CommitOptions = {}): Promise<CommitResult> => {
    const outbox = outboxPuts(
      options.events ?? [],
      { table: 'outbox', source: 'contest-sync', retentionDays: 7 },
      { runId: 'run-1', fence: 2, nowMs: NOW_MS },
    );
    const written = await writer.commit(actions, fence, undefined, outbox);
    return {
      transactions: written.transactions,
      events: { written: outbox.length - (written.duplicateEvents ?? 0), duplicates: written.duplicateEvents ?? 0 },
    };
  };
}
const transactions = () => mock.commandCalls(TransactWriteCommand).map((call) => call.args[0].input);
const userIdsOf = (input: TransactWriteCommandInput) =>
  (input.TransactItems ?? []).flatMap((item) => (item.Update ? [String(item.Update.Key?.userId)] : []));

function cancelled(codes: string[]) {
  return new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
}
/** Refuses, once, the ConditionChecks of the listed contests' gates in the next transaction that holds one. */
function refuseChecksOf(contestIds: readonly string[]) {
  let refusedOnce = false;
  mock.on(TransactWriteCommand).callsFake((input: TransactWriteCommandInput) => {
    const items = input.TransactItems ?? [];
    const hit = items.map((item) =>
      item.ConditionCheck?.TableName === 'contests' && contestIds.includes(contestOfGate(item.ConditionCheck.Key?.contestId))
        ? 'ConditionalCheckFailed'
        : 'None',
    );
    if (!refusedOnce && hit.includes('ConditionalCheckFailed')) {
      refusedOnce = true;
      throw cancelled(hit);
    }
    return {};
  });
}
/** The contest a bucket gate's key names (`gate#<contestId>#<bucket>`). */
const contestOfGate = (key: unknown) => String(key).slice('gate#'.length).split('#')[0]!;
/** The contests whose gates a transaction checks, each once, in order. */
const checkedContests = (input: TransactWriteCommandInput) => [
  ...new Set(checksOf(input).map((check) => contestOfGate(check.Key?.contestId))),
];
/** `count` user ids that share one bucket key of a contest (bucket 0). */
const usersOfOneBucket = (count: number) =>
  Array.from({ length: 40 * count }, (_, n) => `user-${n}`)
    .filter((userId) => bucketOf(userId) === 0)
    .slice(0, count);
const checksOf = (input: TransactWriteCommandInput) =>
  (input.TransactItems ?? []).flatMap((item) => (item.ConditionCheck?.TableName === 'contests' ? [item.ConditionCheck] : []));

/** Refuses, once, the claims of the listed users in the next transaction that holds them. */
function refuseClaimsOf(users: readonly string[]) {
  let refusedOnce = false;
  mock.on(TransactWriteCommand).callsFake((input: TransactWriteCommandInput) => {
    const items = input.TransactItems ?? [];
    const hit = items.map((item) =>
      item.Update !== undefined && users.includes(String(item.Update.Key?.userId)) ? 'ConditionalCheckFailed' : 'None',
    );
    if (!refusedOnce && hit.includes('ConditionalCheckFailed')) {
      refusedOnce = true;
      throw cancelled(hit);
    }
    return {};
  });
}

beforeEach(() => mock.reset());

describe('DynamoDueStore', () => {
  it('reads one page of the byDue index: the shard, due at or before now; never a Scan', async () => {
    mock.on(QueryCommand).resolves({
      Items: [row(1)],
      LastEvaluatedKey: { dueShard: 0, dueAt: 1, contestKey: contestKeyOf(cf(2051), 'user-1'), userId: 'user-1' },
    });
    const page = await store.duePage(3, START, undefined);
    expect(page.rows).toEqual([row(1)]);
    expect(page.next).toBeDefined();
    expect(mock.commandCalls(QueryCommand)[0]?.args[0].input).toEqual({
      TableName: 'reminders',
      IndexName: DUE_INDEX,
      KeyConditionExpression: 'dueShard = :shard AND dueAt <= :now',
      ExpressionAttributeValues: { ':shard': 3, ':now': START },
    });
    expect(mock.commandCalls(ScanCommand)).toHaveLength(0);
  });

  it('reads contests 100 keys at a time and reads throttled keys again', async () => {
    const ids = Array.from({ length: 150 }, (_, i) => cf(i + 1));
    let first = true;
    mock.on(BatchGetCommand).callsFake((input: { RequestItems: Record<string, { Keys: { contestId: string }[] }> }) => {
      const keys = input.RequestItems.contests!.Keys;
      if (first) {
        first = false;
        return {
          Responses: { contests: keys.slice(1).map((k) => ({ ...contest, contestId: k.contestId })) },
          UnprocessedKeys: { contests: { Keys: [keys[0]] } },
        };
      }
      return { Responses: { contests: keys.map((k) => ({ ...contest, contestId: k.contestId })) } };
    });
    const found = await store.contests(ids);
    expect(found.size).toBe(150);
    expect(mock.commandCalls(BatchGetCommand).map((c) => (c.args[0].input.RequestItems?.contests?.Keys ?? []).length)).toEqual([
      100, 1, 50,
    ]);
  });

  it('gives up on keys still unprocessed after 5 rounds, with an error that says so', async () => {
    mock.on(BatchGetCommand).callsFake((input: { RequestItems: Record<string, { Keys: unknown[] }> }) => ({
      UnprocessedKeys: { contests: { Keys: input.RequestItems.contests!.Keys } },
    }));
    await expect(store.contests([cf(1), cf(2)])).rejects.toThrow(DeliveryReadError);
    await expect(store.contests([cf(1), cf(2)])).rejects.toThrow(/2 contests: still unprocessed after 5 rounds/);
  });

  it('claims a row only if it is still due as read, with the intent as read, and not notified for this start', () => {
    const key = contestKeyOf(cf(2051), 'u');
    const row = { contestId: cf(2051), contestKey: key, userId: 'u', minutesBefore: 60, dueAt: START - 3600, dueStart: START, bytes: 0 };
    const claim = store.claim({ ...row, intent: 'i-1' }, START - 3000);
    expect(claim).toEqual({
      Update: {
        TableName: 'reminders',
        Key: { contestKey: key, userId: 'u' },
        UpdateExpression: 'SET notifiedAt = :now, notifiedStart = :start, paused = :notified REMOVE dueAt, dueShard, dueStart',
        ConditionExpression:
          'dueAt = :seen AND dueStart = :start AND minutesBefore = :mb AND intent = :intent AND (attribute_not_exists(notifiedStart) OR notifiedStart <> :start) AND NOT contains(sentStarts, :start)',
        ExpressionAttributeValues: {
          ':now': START - 3000,
          ':start': START,
          ':seen': START - 3600,
          ':mb': 60,
          ':notified': 'notified',
          ':intent': 'i-1',
        },
      },
    });
    // A row written before intents: its claim requires that it still has none (a set since would have stamped one).
    const legacy = store.claim(row, START - 3000).Update!;
    expect(legacy.ConditionExpression).toContain('AND attribute_not_exists(intent) AND');
    expect(legacy.ExpressionAttributeValues).not.toHaveProperty(':intent');
  });

  it("reads of a contest only what the rule and the event need: dueStart, name, URL (and the clock's replyMadeAt)", async () => {
    mock.on(BatchGetCommand).resolves({ Responses: { contests: [] } });
    await store.contests([cf(2051)]);
    const request = mock.commandCalls(BatchGetCommand)[0]!.args[0].input.RequestItems!.contests!;
    expect(request.ProjectionExpression).toBe('contestId, #name, #url, dueStart, replyMadeAt');
    expect(request.ConsistentRead).toBe(true);
  });
});

describe('deliverDue', () => {
  const run = (firstPage?: { rows: Record<string, unknown>[]; next?: Record<string, unknown> }) => ({
    signal: new AbortController().signal,
    deadline: NOW_MS + 60_000,
    commit: packageCommit(),
    ...(firstPage !== undefined ? { firstPage } : {}),
  });
  const deps = { store, shard: 0, eventSource: 'contest-sync', now };

  it('claims 120 due rows of one bucket key in 3 transactions (49 claims + 49 events + the gate check + the lease each), one contest read, no second query', async () => {
    mock.on(BatchGetCommand).resolves({ Responses: { contests: [clock, contest] } });
    mock.on(TransactWriteCommand).resolves({});
    const users = usersOfOneBucket(120);
    const counts = await deliverDue(run({ rows: users.map((userId, i) => row(i, { userId })) }), deps);
    expect(counts).toMatchObject({
      due: 120,
      delivered: 120,
      invalid: 0,
      lost: 0,
      transactions: 3,
      gateChecks: 3,
      queries: 1,
      contestReads: 1,
      more: false,
    });
    expect(transactions().map((t) => t.TransactItems?.length)).toEqual([100, 100, 46]);
    expect(mock.commandCalls(QueryCommand)).toHaveLength(0);
    // Each transaction holds the claim and the outbox item of the same rows.
    for (const input of transactions()) {
      const items = input.TransactItems ?? [];
      const events = items.flatMap((item) => (item.Put ? [String(item.Put.Item?.eventId)] : []));
      expect(events).toEqual(userIdsOf(input).map((userId) => reminderDueId(cf(2051), userId, undefined, START)));
      expect(items[0]?.ConditionCheck?.TableName).toBe('coordination');
      // The rule, checked when the claims commit: the contest's dueStart, as its bucket key's gate holds it, is still the rows'.
      expect(checksOf(input)).toEqual([
        {
          TableName: 'contests',
          Key: { contestId: `gate#${cf(2051)}#00` },
          ConditionExpression: 'dueStart = :dueStart',
          ExpressionAttributeValues: { ':dueStart': START },
        },
      ]);
    }
  });

  it("claims rows spread over a contest's bucket keys with each key's gate checked in the claim's own transaction, never more than 100 actions", async () => {
    mock.on(BatchGetCommand).resolves({ Responses: { contests: [clock, contest] } });
    mock.on(TransactWriteCommand).resolves({});
    const counts = await deliverDue(run({ rows: Array.from({ length: 120 }, (_, i) => row(i)) }), deps);
    expect(counts).toMatchObject({ due: 120, delivered: 120, lost: 0 });
    let checks = 0;
    for (const input of transactions()) {
      expect(input.TransactItems!.length).toBeLessThanOrEqual(100);
      const gates = checksOf(input).map((check) => String(check.Key?.contestId));
      const keys = (input.TransactItems ?? []).flatMap((item) => (item.Update ? [`gate#${String(item.Update.Key?.contestKey)}`] : []));
      expect(new Set(gates)).toEqual(new Set(keys));
      expect(gates).toHaveLength(new Set(gates).size);
      checks += gates.length;
    }
    expect(counts.gateChecks).toBe(checks);
    expect(checks).toBeGreaterThanOrEqual(16);
  });

  it('defers, never claims, a row whose contest does not let it fire at its start (moved, paused); the rest goes out', async () => {
    mock.on(BatchGetCommand).resolves({
      Responses: {
        contests: [
          clock,
          contest,
          // Moved: the sync wrote the new start on the contest; the row (written by the app meanwhile) is due at the old one.
          { ...contest, contestId: cf(3001), dueStart: START + 7200 },
          // Paused: no dueStart (a held change, vanished, started; or not yet written by a sync).
          { ...contest, contestId: cf(3002), dueStart: undefined, remindersPaused: 'held' },
          { ...contest, contestId: cf(3003), dueStart: undefined, vanishedAt: START - 100 },
        ],
      },
    });
    mock.on(TransactWriteCommand).resolves({});
    const rows = [row(1), row(2, { contestId: cf(3001) }), row(3, { contestId: cf(3002) }), row(4, { contestId: cf(3003) }), row(5)];
    const counts = await deliverDue(run({ rows }), deps);
    expect(counts).toMatchObject({
      due: 5,
      delivered: 2,
      deferred: 3,
      deferredReasons: { 'contest-moved': 1, 'contest-paused': 2 },
      lost: 0,
    });
    expect(transactions().flatMap(userIdsOf)).toEqual(['user-1', 'user-5']);
  });

  it("a contest whose check fails (it moved or paused after the read) loses all of its claims in the batch; the other contests' go out", async () => {
    const other = { ...contest, contestId: cf(3001), name: 'Round 3001', url: 'https://codeforces.com/contest/3001' };
    mock.on(BatchGetCommand).resolves({ Responses: { contests: [clock, contest, other] } });
    refuseChecksOf([cf(2051)]);
    const rows = [row(1), row(2, { contestId: cf(3001) }), row(3), row(4, { contestId: cf(3001) }), row(5)];
    const counts = await deliverDue(run({ rows }), deps);
    expect(counts).toMatchObject({
      delivered: 2,
      lost: 3,
      retries: 1,
      transactions: 1,
      gateChecks: new Set(['user-2', 'user-4'].map((userId) => contestKeyOf(cf(3001), userId))).size,
    });
    const [refused, committed] = transactions();
    expect(checkedContests(refused!)).toEqual([cf(2051), cf(3001)]);
    // The retry carries only the other contest's claims and its gates' checks: nothing of 2051 is written.
    expect(checkedContests(committed!)).toEqual([cf(3001)]);
    expect(checksOf(committed!).map((check) => check.Key?.contestId)).toEqual([
      ...new Set(['user-2', 'user-4'].map((userId) => `gate#${contestKeyOf(cf(3001), userId)}`)),
    ]);
    expect(userIdsOf(committed!)).toEqual(['user-2', 'user-4']);
    expect((committed!.TransactItems ?? []).filter((item) => item.Put).map((item) => item.Put?.Item?.eventId)).toEqual(
      ['user-2', 'user-4'].map((userId) => reminderDueId(cf(3001), userId, undefined, START)),
    );
  });

  it('claims with the intent as read, under the id of (contest, user, intent, start)', async () => {
    mock.on(BatchGetCommand).resolves({ Responses: { contests: [clock, contest] } });
    mock.on(TransactWriteCommand).resolves({});
    const counts = await deliverDue(run({ rows: [row(1, { intent: 'i-1' }), row(2)] }), deps);
    expect(counts).toMatchObject({ delivered: 2 });
    const items = transactions()[0]!.TransactItems ?? [];
    expect(items.filter((item) => item.Put).map((item) => item.Put?.Item?.eventId)).toEqual([
      reminderDueId(cf(2051), 'user-1', 'i-1', START),
      reminderDueId(cf(2051), 'user-2', undefined, START),
    ]);
    const conditions = items.flatMap((item) => (item.Update ? [item.Update.ConditionExpression] : []));
    expect(conditions[0]).toContain('intent = :intent');
    expect(conditions[1]).toContain('attribute_not_exists(intent)');
  });

  it("reads only its own partition, whatever DUE_SHARDS was before: rows of retired ones are the sync's to move", async () => {
    mock.on(BatchGetCommand).resolves({ Responses: { contests: [clock, contest] } });
    mock.on(TransactWriteCommand).resolves({});
    mock.on(QueryCommand).callsFake((input: { ExpressionAttributeValues: { ':shard': number } }) => ({
      Items: [row(input.ExpressionAttributeValues[':shard'], { dueShard: input.ExpressionAttributeValues[':shard'] })],
    }));
    const counts = await deliverDue(run(), { ...deps, shard: 1 });
    expect(mock.commandCalls(QueryCommand).map((call) => call.args[0].input.ExpressionAttributeValues?.[':shard'])).toEqual([1]);
    expect(counts).toMatchObject({ queries: 1, due: 1, delivered: 1 });
  });

  it('rows of two platforms whose ids collide as numbers are two contests: two checks, two ids, each claimed on its own key', async () => {
    const atcoder = {
      ...contest,
      contestId: 'atcoder:199',
      platform: 'atcoder',
      name: 'AtCoder 199',
      url: 'https://atcoder.jp/contests/199',
    };
    const codeforces = { ...contest, contestId: cf(199), name: 'Codeforces Round 199' };
    mock.on(BatchGetCommand).resolves({ Responses: { contests: [clock, { ...clock, contestId: 'clock#atcoder' }, atcoder, codeforces] } });
    mock.on(TransactWriteCommand).resolves({});
    const counts = await deliverDue(run({ rows: [row(1, { contestId: 'atcoder:199' }), row(1, { contestId: cf(199) })] }), deps);
    expect(counts).toMatchObject({ delivered: 2, gateChecks: 2 });
    const items = transactions()[0]!.TransactItems ?? [];
    expect(checkedContests(transactions()[0]!)).toEqual(['atcoder:199', cf(199)]);
    expect(items.flatMap((item) => (item.Update ? [item.Update.Key?.contestKey] : []))).toEqual([
      contestKeyOf('atcoder:199', 'user-1'),
      contestKeyOf(cf(199), 'user-1'),
    ]);
    const events = items.flatMap((item) => (item.Put ? [JSON.parse(String(item.Put.Item?.detail)) as Record<string, unknown>] : []));
    expect(events.map((e) => [e.contestId, e.platform, e.platformId, e.name])).toEqual([
      ['atcoder:199', 'atcoder', '199', 'AtCoder 199'],
      ['codeforces:199', 'codeforces', '199', 'Codeforces Round 199'],
    ]);
    expect(new Set(items.flatMap((item) => (item.Put ? [item.Put.Item?.eventId] : [])))).toEqual(
      new Set([reminderDueId('atcoder:199', 'user-1', undefined, START), reminderDueId(cf(199), 'user-1', undefined, START)]),
    );
  });

  it("each source's evidence is its own: rows of a platform whose reply clock is stale wait, the others go out", async () => {
    const atcoder = { ...contest, contestId: 'atcoder:abc199', platform: 'atcoder' };
    mock.on(BatchGetCommand).resolves({ Responses: { contests: [clock, atcoder, contest] } });
    mock.on(TransactWriteCommand).resolves({});
    const counts = await deliverDue(run({ rows: [row(1, { contestId: 'atcoder:abc199' }), row(2)] }), deps);
    expect(counts).toMatchObject({ delivered: 1, deferred: 1, deferredReasons: { 'evidence-stale': 1 } });
    expect(transactions().flatMap(userIdsOf)).toEqual(['user-2']);
    // Both clocks asked for in the contests' request.
    expect(mock.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems?.contests?.Keys).toEqual([
      { contestId: 'clock#atcoder' },
      { contestId: 'clock#codeforces' },
      { contestId: 'atcoder:abc199' },
      { contestId: cf(2051) },
    ]);
  });

  it('drops the rows whose claim was refused and commits the rest of the batch', async () => {
    mock.on(BatchGetCommand).resolves({ Responses: { contests: [clock, contest] } });
    refuseClaimsOf(['user-3', 'user-7']);
    const counts = await deliverDue(run({ rows: Array.from({ length: 10 }, (_, i) => row(i)) }), deps);
    expect(counts).toMatchObject({ delivered: 8, lost: 2, retries: 1, transactions: 1 });
    const [refused, committed] = transactions();
    expect(userIdsOf(refused!)).toHaveLength(10);
    // In the order of their bucket keys (claims under one key share its gate's check).
    expect(userIdsOf(committed!).sort()).toEqual(['user-0', 'user-1', 'user-2', 'user-4', 'user-5', 'user-6', 'user-8', 'user-9']);
    expect((committed!.TransactItems ?? []).filter((item) => item.Put)).toHaveLength(8);
  });

  it('skips and counts rows that cannot be believed or whose event is too large; the rest of the batch goes out', async () => {
    mock.on(BatchGetCommand).resolves({
      Responses: {
        contests: [
          clock,
          contest,
          { ...contest, contestId: cf(7), name: 'x'.repeat(300 * 1024) },
          { ...contest, contestId: cf(8), vanishedAt: START - 100, dueStart: undefined },
        ],
      },
    });
    mock.on(TransactWriteCommand).resolves({});
    const rows = [
      row(1),
      row(2, { minutesBefore: -1 }),
      row(3, { userId: undefined }),
      row(4, { contestId: cf(7) }),
      row(5, { contestId: cf(8) }),
      row(6, { contestId: cf(9) }),
      row(7),
    ];
    const counts = await deliverDue(run({ rows }), deps);
    expect(counts).toMatchObject({
      due: 7,
      delivered: 2,
      invalid: 3,
      invalidReasons: { minutesBefore: 1, userId: 1, 'too-large': 1 },
      deferred: 2,
      deferredReasons: { 'contest-paused': 1, 'contest-missing': 1 },
    });
    expect(userIdsOf(transactions()[0]!)).toEqual(['user-1', 'user-7']);
  });

  it("sends nothing while the sync's evidence is stale (reply clock older than 70 minutes, or absent): every row stays due", async () => {
    mock.on(TransactWriteCommand).resolves({});
    for (const responses of [[{ ...clock, replyMadeAt: NOW_MS / 1000 - 70 * 60 - 1 }, contest], [contest]]) {
      mock.resetHistory();
      mock.on(BatchGetCommand).resolves({ Responses: { contests: responses } });
      const counts = await deliverDue(run({ rows: [row(1), row(2)] }), deps);
      expect(counts).toMatchObject({ due: 2, delivered: 0, deferred: 2, deferredReasons: { 'evidence-stale': 2 } });
      expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(0);
      // The clock is read in the same request as the contests.
      expect(mock.commandCalls(BatchGetCommand)).toHaveLength(1);
      expect(mock.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems?.contests?.Keys).toEqual([
        { contestId: 'clock#codeforces' },
        { contestId: cf(2051) },
      ]);
    }
    // At 70 minutes exactly the evidence is still fresh.
    mock.resetHistory();
    mock.on(BatchGetCommand).resolves({ Responses: { contests: [{ ...clock, replyMadeAt: NOW_MS / 1000 - 70 * 60 }, contest] } });
    expect(await deliverDue(run({ rows: [row(1)] }), deps)).toMatchObject({ delivered: 1, deferred: 0 });
  });

  it('reads the next pages itself, and stops starting batches near the deadline (the rest stays due)', async () => {
    mock.on(BatchGetCommand).resolves({ Responses: { contests: [clock, contest] } });
    mock.on(TransactWriteCommand).resolves({});
    mock.on(QueryCommand).resolvesOnce({ Items: [row(100), row(101)] });
    const counts = await deliverDue(run({ rows: [row(1)], next: { k: 1 } }), deps);
    expect(counts).toMatchObject({ due: 3, delivered: 3, queries: 2, more: false });
    expect(mock.commandCalls(QueryCommand)[0]?.args[0].input.ExclusiveStartKey).toEqual({ k: 1 });

    mock.resetHistory();
    const late = await deliverDue({ ...run({ rows: [row(1)] }), deadline: NOW_MS + 1_000 }, deps);
    expect(late).toMatchObject({ delivered: 0, more: true });
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });
});

describe('commitClaims', () => {
  // The claims of one contest under one bucket key, unless told otherwise: one gate.
  const claim = (userId: string, contestId = cf(1), contestKey = `${contestId}#00`) => ({
    contestKey,
    action: { Update: { TableName: 'reminders', Key: { userId }, UpdateExpression: 'SET x = :x' } } as TransactAction,
    event: { id: userId, detailType: 'ReminderDue' as const, detail: {} as never },
    row: { contestId, contestKey, userId, minutesBefore: 0, dueAt: START, dueStart: START, bytes: 1 },
    bytes: 1,
  });
  const check = (contestKey: string, dueStart: number): TransactAction => ({
    ConditionCheck: {
      TableName: 'contests',
      Key: { contestId: contestKey },
      ConditionExpression: 'dueStart = :d',
      ExpressionAttributeValues: { ':d': dueStart },
    },
  });
  const isClaim = (action: TransactAction) => action.Update !== undefined;

  it('costs at most one transaction per lost row, and ends when every row was lost', async () => {
    const batch = ['a', 'b', 'c'].map((user) => claim(user));
    let calls = 0;
    const commit = async (actions: readonly TransactAction[]): Promise<CommitResult> => {
      calls += 1;
      throw new FencedWriteError('refused', { refused: [actions.find(isClaim)!] });
    };
    expect(await commitClaims(commit, batch, check)).toMatchObject({ delivered: 0, lost: 3, retries: 3 });
    expect(calls).toBe(3);
  });

  it("sends one check per bucket key before the claims, and drops a refused check's key with all its claims", async () => {
    const batch = [claim('a', cf(1)), claim('b', cf(2)), claim('c', cf(1)), claim('d', cf(3))];
    const sent: TransactAction[][] = [];
    const commit = async (actions: readonly TransactAction[], options?: CommitOptions): Promise<CommitResult> => {
      sent.push([...actions]);
      if (sent.length === 1) throw new FencedWriteError('refused', { refused: [actions[0]!, actions[2]!] });
      return { transactions: 1, events: { written: options?.events?.length ?? 0, duplicates: 0 } };
    };
    expect(await commitClaims(commit, batch, check)).toMatchObject({
      delivered: 1,
      lost: 3,
      retries: 1,
      transactions: 1,
      gateChecks: 1,
    });
    expect(sent[0]!.map((action) => action.ConditionCheck?.Key?.contestId ?? action.Update?.Key?.userId)).toEqual([
      `${cf(1)}#00`,
      `${cf(2)}#00`,
      `${cf(3)}#00`,
      'a',
      'b',
      'c',
      'd',
    ]);
    expect(sent[1]!.map((action) => action.ConditionCheck?.Key?.contestId ?? action.Update?.Key?.userId)).toEqual([`${cf(2)}#00`, 'b']);
  });

  it('checks each bucket key of one contest apart: a refused gate loses only the claims under its key', async () => {
    const batch = [claim('a', cf(1), `${cf(1)}#03`), claim('b', cf(1), `${cf(1)}#09`), claim('c', cf(1), `${cf(1)}#03`)];
    const sent: TransactAction[][] = [];
    const commit = async (actions: readonly TransactAction[], options?: CommitOptions): Promise<CommitResult> => {
      sent.push([...actions]);
      if (sent.length === 1) throw new FencedWriteError('refused', { refused: [actions[1]!] });
      return { transactions: 1, events: { written: options?.events?.length ?? 0, duplicates: 0 } };
    };
    expect(await commitClaims(commit, batch, check)).toMatchObject({ delivered: 2, lost: 1, gateChecks: 1 });
    expect(sent[0]!.flatMap((action) => (action.ConditionCheck ? [action.ConditionCheck.Key?.contestId] : []))).toEqual([
      `${cf(1)}#03`,
      `${cf(1)}#09`,
    ]);
    expect(sent[1]!.map((action) => action.ConditionCheck?.Key?.contestId ?? action.Update?.Key?.userId)).toEqual([
      `${cf(1)}#03`,
      'a',
      'c',
    ]);
  });

  it('rethrows what is not a lost row: a lost lease, or a refusal of something else', async () => {
    const batch = [claim('a')];
    await expect(commitClaims(() => Promise.reject(new LeaseLostError('lost', 'r', 1)), batch, check)).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    await expect(
      commitClaims(() => Promise.reject(new FencedWriteError('other', { refused: [{ Put: {} }] })), batch, check),
    ).rejects.toThrow('other');
    await expect(commitClaims(() => Promise.reject(new FencedWriteError('no reasons')), batch, check)).rejects.toThrow('no reasons');
  });
});
