/**
 * `npm run redrive` on DynamoDB Local, tables from the synthesized template (the outbox with its
 * stream, Contests, Reminders): the items of a time window, each with its verdict; a dry run
 * writes nothing; `--apply` resends exactly what the plan allows — each as a new INSERT on the
 * outbox stream (what the relay delivers), the item unchanged — and refuses events older than the
 * consumers' dedupe window allows and ReminderDue events whose start has passed or that their
 * contest or reminder no longer agrees with. The command itself runs too (bin/redrive.ts).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { reminderDueId } from '../../lambda/delivery/due.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION, localDynamoClient } from '../../local/dynamodb-local.js';
import { redrive, type RedriveTables } from '../../cli/redrive/outbox.js';
import { createTestTables, type TestTables } from '../support/tables.js';
import { cf } from '../support/ids.js';
import { reminderKey } from '../../lambda/reminders/table.js';

const HOUR = 3600;
const DAY = 86_400;

/** An outbox item as the jobs write it (the package's outboxPuts shape). */
function outboxItem(source: string, detailType: string, eventId: string, detail: Record<string, unknown>, createdAtMs: number) {
  return {
    pk: `${source}#${eventId}`,
    eventId,
    source,
    detailType,
    detail: JSON.stringify({ eventId, ...detail }),
    createdAtMs,
    runId: 'run-1',
    fence: 4,
    ttl: Math.ceil(createdAtMs / 1000) + 7 * DAY,
  };
}

/** Every stream record of the outbox so far: [eventName, pk]. */
async function streamRecords(t: TestTables): Promise<[string, string][]> {
  const client = localDynamoClient(t.endpoint);
  const { Table } = await client.send(new DescribeTableCommand({ TableName: t.names.outbox! }));
  const streams = new DynamoDBStreamsClient({ endpoint: t.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: Table!.LatestStreamArn! }));
  const records: [string, string][] = [];
  for (const shard of StreamDescription?.Shards ?? []) {
    let iterator = (
      await streams.send(
        new GetShardIteratorCommand({ StreamArn: Table!.LatestStreamArn!, ShardId: shard.ShardId!, ShardIteratorType: 'TRIM_HORIZON' }),
      )
    ).ShardIterator;
    for (let reads = 0; iterator !== undefined && reads < 20; reads += 1) {
      const out = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
      for (const r of out.Records ?? []) records.push([String(r.eventName), String(r.dynamodb?.Keys?.pk?.S)]);
      if ((out.Records ?? []).length === 0) break;
      iterator = out.NextShardIterator;
    }
  }
  streams.destroy();
  return records;
}

describe('npm run redrive on DynamoDB Local', () => {
  it(
    'lists the window with verdicts, writes nothing on a dry run, and resends only what cannot duplicate or mislead',
    { timeout: 120_000 },
    async () => {
      const t = await createTestTables('redrive');
      const tables: RedriveTables = { outbox: t.names.outbox!, contests: t.names.contests, reminders: t.names.reminders };
      const nowMs = Date.now();
      const now = Math.floor(nowMs / 1000);
      const start = now + 2 * HOUR;
      const put = (TableName: string, Item: Record<string, unknown>) => t.doc.send(new PutCommand({ TableName, Item }));

      // The contests as they are now: 2051 still fires at `start`; 2052 moved two hours later; 2053 paused.
      await put(t.names.contests, { contestId: cf(2051), name: 'R 2051', url: 'u', startTimeSeconds: start, dueStart: start });
      await put(t.names.contests, {
        contestId: cf(2052),
        name: 'R 2052',
        url: 'u',
        startTimeSeconds: start + 2 * HOUR,
        dueStart: start + 2 * HOUR,
      });
      await put(t.names.contests, { contestId: cf(2053), name: 'R 2053', url: 'u', startTimeSeconds: start, remindersPaused: 'held' });
      // The reminder rows as they are now: sent for `start` (ana with an intent, bo before intents); cy set again since.
      const sent = (id: number, userId: string, intent?: string) =>
        put(t.names.reminders, {
          ...reminderKey(cf(id), userId),
          contestId: cf(id),
          minutesBefore: 30,
          remindAt: start - 1800,
          notifiedStart: start,
          notifiedAt: now - 600,
          paused: 'notified',
          ...(intent !== undefined ? { intent } : {}),
        });
      await sent(2051, 'ana', 'i-ana');
      await sent(2051, 'bo');
      await sent(2051, 'cy', 'i-cy-2');
      await sent(2052, 'dee', 'i-dee');
      await sent(2053, 'eve', 'i-eve');

      const reminder = (id: number, userId: string, intent: string | undefined, startTimeSeconds: number, ageSeconds: number) =>
        outboxItem(
          'contest-sync.reminders',
          'ReminderDue',
          reminderDueId(cf(id), userId, intent, startTimeSeconds),
          {
            contestId: cf(id),
            contest: cf(id),
            platform: 'codeforces',
            platformId: String(id),
            userId,
            minutesBefore: 30,
            startTimeSeconds,
            dueAt: startTimeSeconds - 1800,
          },
          nowMs - ageSeconds * 1000,
        );
      const items = {
        ana: reminder(2051, 'ana', 'i-ana', start, HOUR),
        bo: reminder(2051, 'bo', undefined, start, HOUR),
        announced: outboxItem(
          'contest-sync.contests',
          'ContestAnnounced',
          'contest:recent',
          { contestId: cf(2051) },
          nowMs - 3 * DAY * 1000,
        ),
        tooOld: outboxItem(
          'contest-sync.contests',
          'ContestRescheduled',
          'contest:old',
          { contestId: cf(2051) },
          nowMs - (6 * DAY + HOUR) * 1000,
        ),
        passed: reminder(2051, 'fay', 'i-fay', now - 60, 2 * HOUR),
        cySetAgain: reminder(2051, 'cy', 'i-cy-1', start, HOUR),
        moved: reminder(2052, 'dee', 'i-dee', start, HOUR),
        paused: reminder(2053, 'eve', 'i-eve', start, HOUR),
        outside: outboxItem('contest-sync.contests', 'ContestAnnounced', 'contest:outside', { contestId: cf(9) }, nowMs - 8 * DAY * 1000),
      };
      for (const item of Object.values(items)) await put(tables.outbox, item);
      // What was written to the outbox, as its stream carries it (DynamoDB Local also streams records of its own, named otherwise).
      const writes = async () => (await streamRecords(t)).filter(([name]) => ['INSERT', 'MODIFY', 'REMOVE'].includes(name));
      const before = await writes();
      expect(before.filter(([name]) => name === 'INSERT')).toHaveLength(Object.keys(items).length);

      // The window: the last 7 days (the 8-day-old item is outside it, never listed).
      const window = { fromMs: nowMs - 7 * DAY * 1000, toMs: nowMs + 1000 };
      const dry = await redrive({ doc: t.doc, tables, ...window, now: () => nowMs, apply: false });
      const verdicts = Object.fromEntries(
        dry.plan.map((entry) => [
          Object.entries(items).find(([, item]) => item.pk === entry.pk)![0],
          entry.verdict.resend ? 'resend' : entry.verdict.reason,
        ]),
      );
      expect(verdicts).toEqual({
        ana: 'resend',
        bo: 'resend',
        announced: 'resend',
        tooOld: 'older-than-dedupe-window',
        passed: 'start-passed',
        cySetAgain: 'reminder-changed',
        moved: 'contest-moved',
        paused: 'contest-paused',
      });
      // A dry run writes nothing.
      expect(await writes()).toEqual(before);

      const applied = await redrive({ doc: t.doc, tables, ...window, now: () => nowMs, apply: true });
      expect(Object.fromEntries(applied.outcomes)).toEqual({
        [items.ana.pk]: 'resent',
        [items.bo.pk]: 'resent',
        [items.announced.pk]: 'resent',
      });
      const after = (await writes()).slice(before.length);
      // Each resent item is a new INSERT on the stream (what the relay delivers), after its removal; nothing else moved.
      expect(
        after
          .filter(([name]) => name === 'INSERT')
          .map(([, pk]) => pk)
          .sort(),
      ).toEqual([items.ana.pk, items.bo.pk, items.announced.pk].sort());
      expect(
        after
          .filter(([name]) => name === 'REMOVE')
          .map(([, pk]) => pk)
          .sort(),
      ).toEqual([items.ana.pk, items.bo.pk, items.announced.pk].sort());
      // The items are back unchanged (same id, same commit time: consumers dedupe them, `time` is the commit's).
      const stored = ((await t.doc.send(new ScanCommand({ TableName: tables.outbox }))).Items ?? []) as Record<string, unknown>[];
      expect(stored.sort((a, b) => String(a.pk).localeCompare(String(b.pk)))).toEqual(
        Object.values(items).sort((a, b) => a.pk.localeCompare(b.pk)),
      );

      // The command itself: a dry run by default, over the same tables.
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          '--import',
          'tsx',
          'bin/redrive.ts',
          '--outbox',
          tables.outbox,
          '--contests',
          tables.contests,
          '--reminders',
          tables.reminders,
          '--from',
          new Date(window.fromMs).toISOString(),
        ],
        { env: { ...process.env, AWS_ENDPOINT_URL_DYNAMODB: t.endpoint, AWS_REGION: LOCAL_REGION, ...t.env }, timeout: 60_000 },
      );
      expect(stdout).toMatch(/Refused: 5 \(.*older-than-dedupe-window 1.*\)\./);
      expect(stdout).toMatch(/Would resend: 3\. Dry run: nothing was written/);
      expect(stdout).toContain(`${items.passed.eventId}  start-passed:`);
      expect((await writes()).slice(before.length + after.length)).toEqual([]);
    },
  );
});
