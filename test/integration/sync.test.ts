/**
 * The handler end to end in this process: real DynamoDB Local tables from the synthesized
 * template, the local Codeforces stand-in over HTTP, the real undici client.
 */
import { describe, expect, it } from 'vitest';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { CodeforcesStandin } from '../../local/codeforces-standin.js';
import { addReminder, apiContest, markNotified, sampleList, setReminder, snapshot } from '../support/contests.js';
import { localHandler } from '../support/handler.js';
import { scheduledEvent } from '../support/processes.js';
import { timed } from '../support/starvation.js';
import type { TestTables } from '../support/tables.js';
import { useWorld } from '../support/world.js';
import { cf } from '../support/ids.js';
import { contestKeyOf } from '../../lambda/reminders/table.js';

let standin: CodeforcesStandin;
let tables: TestTables;

useWorld('sync', (world) => {
  ({ standin, tables } = world);
});

const hourAgo = () => new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');

describe('a sync', () => {
  it('stores unfinished and recently finished contests with the data contract', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    const { summary } = await invoke({});
    expect(summary).toMatchObject({
      outcome: 'succeeded',
      fence: 1,
      counts: { contestsFetched: 8, contestsWritten: 7, contestsUnchanged: 0 },
    });
    const { contests } = await snapshot(tables);
    expect(contests.map((c) => c.contestId)).toEqual([2099, 2100, 2101, 2102, 2103, 2104, 2105].map(cf));
    const upcoming = contests.find((c) => c.contestId === cf(2102));
    expect(upcoming).toMatchObject({
      contestId: 'codeforces:2102',
      platform: 'codeforces',
      platformId: '2102',
      name: 'Educational Codeforces Round 190 (Rated for Div. 2)',
      type: 'ICPC',
      phase: 'BEFORE',
      durationSeconds: 7200,
      url: 'https://codeforces.com/contest/2102',
    });
    expect(upcoming?.expiresAt).toBe((upcoming?.startTimeSeconds as number) + 7200 + 7 * 24 * 3600);
    expect(typeof upcoming?.updatedAt).toBe('string');
  });

  it('writes no contest item the second time when nothing changed', async () => {
    const { invoke, requests } = localHandler(tables, standin.baseUrl);
    await invoke({});
    const before = await snapshot(tables);
    requests.reset();
    const { summary } = await invoke({});
    expect(summary?.counts).toMatchObject({ contestsWritten: 0, contestsUnchanged: 7, transactions: 0 });
    // On the wire: acquire, scan, release. No TransactWriteItems with data, no PutItem on Contests.
    expect(Object.fromEntries(requests.counts)).toEqual({ UpdateItem: 1, Scan: 1, TransactWriteItems: 1 });
    expect(await snapshot(tables)).toEqual(before);
  });

  it('follows renames and reschedules, moving reminders (due later at once); pauses reminders of a vanished contest, never deletes one', async () => {
    const now = Date.now();
    const list = sampleList(now);
    standin.setContests(list);
    const { invoke } = localHandler(tables, standin.baseUrl);
    await invoke({});
    const start2100 = list.find((c) => c.id === 2100)?.startTimeSeconds as number;
    const start2103 = list.find((c) => c.id === 2103)?.startTimeSeconds as number;
    const start2104 = list.find((c) => c.id === 2104)?.startTimeSeconds as number;
    expect(await setReminder(tables, 2104, 'alice', 30)).toMatchObject({ dueAt: start2104 - 1800 });
    await setReminder(tables, 2104, 'bob', 60);
    await setReminder(tables, 2103, 'dave', 15);
    await setReminder(tables, 2100, 'carol', 10);
    // 2100 is running (first listed after its start: no start of it is confirmed); its reminder was sent.
    await markNotified(tables, 2100, 'carol', Math.floor(now / 1000) - 3000, start2100);

    const moved = start2104 + 3 * 3600;
    standin.setContests(
      list
        .filter((c) => c.id !== 2103) // vanished from the list
        .map((c) => {
          if (c.id === 2104) return { ...c, name: 'Codeforces Round 1050 (Div. 1)', startTimeSeconds: moved };
          // Started an hour ago and over (a FINISHED before its end would be held).
          if (c.id === 2100) return { ...c, phase: 'FINISHED' as const, durationSeconds: 3000 };
          return c;
        }),
    );
    const { summary } = await invoke({});
    expect(summary).toMatchObject({
      outcome: 'succeeded',
      counts: { contestsWritten: 2, contestsVanished: 1, contestsRemoved: 0, remindersMoved: 2, remindersDue: 2 },
    });
    const { contests, reminders } = await snapshot(tables);
    const c2104 = contests.find((c) => c.contestId === cf(2104));
    expect(c2104).toMatchObject({ name: 'Codeforces Round 1050 (Div. 1)', startTimeSeconds: moved, confirmedStart: start2104 });
    expect(c2104?.remindersPaused).toBeUndefined();
    // Marked at once (the app stops showing it as upcoming), reminders paused and kept.
    expect(contests.find((c) => c.contestId === cf(2103))).toMatchObject({
      missingSyncs: 1,
      vanishedAt: expect.any(Number),
      remindersPaused: 'vanished',
    });
    const expiresOf = (id: number) => contests.find((c) => c.contestId === cf(id))?.expiresAt;
    expect(reminders).toEqual([
      {
        contestKey: contestKeyOf(cf(2100), 'carol'),
        contestId: cf(2100),
        userId: 'carol',
        minutesBefore: 10,
        remindAt: start2100 - 600,
        notifiedAt: expect.any(Number),
        notifiedStart: start2100,
        paused: 'finished',
        expiresAt: expiresOf(2100),
      },
      {
        contestKey: contestKeyOf(cf(2103), 'dave'),
        contestId: cf(2103),
        userId: 'dave',
        minutesBefore: 15,
        remindAt: start2103 - 900,
        paused: 'vanished',
        expiresAt: expiresOf(2103),
      },
      {
        contestKey: contestKeyOf(cf(2104), 'alice'),
        contestId: cf(2104),
        userId: 'alice',
        minutesBefore: 30,
        remindAt: moved - 1800,
        dueAt: moved - 1800,
        dueShard: 0,
        dueStart: moved,
        expiresAt: expiresOf(2104),
      },
      {
        contestKey: contestKeyOf(cf(2104), 'bob'),
        contestId: cf(2104),
        userId: 'bob',
        minutesBefore: 60,
        remindAt: moved - 3600,
        dueAt: moved - 3600,
        dueShard: 0,
        dueStart: moved,
        expiresAt: expiresOf(2104),
      },
    ]);
    // The next reply confirms the move: nothing of the reminders changes.
    expect((await invoke({})).summary?.counts).toMatchObject({ remindersMoved: 0, remindersDue: 0, remindersPaused: 0 });
    expect((await snapshot(tables)).contests.find((c) => c.contestId === cf(2104))).toMatchObject({ confirmedStart: moved });
  });

  it('deletes a vanished contest only after 3 consecutive successful syncs miss it, its reminders kept paused; restores one that comes back, its reminders due again', async () => {
    const list = sampleList(Date.now());
    const { invoke } = localHandler(tables, standin.baseUrl);
    standin.setContests(list);
    await invoke({});
    await setReminder(tables, 2103, 'dave', 15);
    const erin = await setReminder(tables, 2102, 'erin', 15);
    const stored2102 = (await snapshot(tables)).contests.find((c) => c.contestId === cf(2102));

    standin.setContests(list.filter((c) => c.id !== 2103 && c.id !== 2102));
    expect((await invoke({})).summary?.counts).toMatchObject({ contestsVanished: 2, contestsRemoved: 0, remindersPaused: 2 });
    expect((await invoke({})).summary?.counts).toMatchObject({ contestsVanished: 2, contestsRemoved: 0, remindersPaused: 0 });
    // 2102 comes back: restored untouched (same fields, no marker), its reminder due again.
    standin.setContests(list.filter((c) => c.id !== 2103));
    expect((await invoke({})).summary?.counts).toMatchObject({ contestsRestored: 1, contestsRemoved: 1, remindersDue: 1 });
    const { contests, reminders } = await snapshot(tables);
    expect(contests.find((c) => c.contestId === cf(2103))).toBeUndefined();
    const restored = contests.find((c) => c.contestId === cf(2102));
    expect({ ...restored, updatedAt: undefined }).toEqual({ ...stored2102, updatedAt: undefined });
    expect(reminders.map((r) => [r.contestId, r.userId, r.dueAt, r.paused])).toEqual([
      [cf(2102), 'erin', erin.dueAt, undefined],
      [cf(2103), 'dave', undefined, 'vanished'],
    ]);
  });

  it('a reminder claimed by delivery between the sync’s read and its commit does not fail the run: that update is dropped, the rest lands, the next run puts it right', async () => {
    const list = sampleList(Date.now());
    standin.setContests(list);
    const { invoke, requests } = localHandler(tables, standin.baseUrl);
    await invoke({});
    const start = list.find((c) => c.id === 2104)!.startTimeSeconds as number;
    await setReminder(tables, 2104, 'alice', 30);
    await setReminder(tables, 2104, 'bob', 30);
    // Postponed: the sync moves both reminders; delivery claims alice's as soon as the sync has read it.
    standin.setContests(list.map((c) => (c.id === 2104 ? { ...c, startTimeSeconds: start + 3600 } : c)));
    let claimed = false;
    requests.client.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        const input = args.input as { TableName?: string; ExpressionAttributeValues?: Record<string, unknown> };
        // Once the sync has read alice's bucket (one of the contest's 16 keys).
        const key = input.ExpressionAttributeValues?.[':key'];
        if (!claimed && input.TableName === tables.names.reminders && key === contestKeyOf(cf(2104), 'alice')) {
          claimed = true;
          await markNotified(tables, 2104, 'alice', Math.floor(Date.now() / 1000), start);
        }
        return result;
      },
      { step: 'initialize', name: 'claimDuringSync' },
    );
    const raced = await invoke({});
    expect(claimed).toBe(true);
    expect(raced.summary).toMatchObject({ outcome: 'succeeded', counts: { remindersRaced: 1 } });
    let { contests, reminders } = await snapshot(tables);
    expect(contests.find((c) => c.contestId === cf(2104))?.startTimeSeconds).toBe(start + 3600);
    expect(reminders.find((r) => r.userId === 'bob')).toMatchObject({ dueStart: start + 3600, remindAt: start + 3600 - 1800 });
    // Sent for the old start, as claimed: the sync did not overwrite the claim.
    expect(reminders.find((r) => r.userId === 'alice')).toMatchObject({ notifiedStart: start, paused: 'notified' });
    // Its contest is handed over: the next run reads its reminders again.
    const lease = await tables.doc.send(new GetCommand({ TableName: tables.names.coordination, Key: { pk: 'lease#contest-sync' } }));
    expect([...((lease.Item?.handoff as Set<string> | undefined) ?? [])]).toContain(cf(2104));
    // The next run reads it again (handed over) and makes it due at the new start.
    expect((await invoke({})).summary).toMatchObject({ outcome: 'succeeded', counts: { remindersRaced: 0 } });
    ({ contests, reminders } = await snapshot(tables));
    expect(reminders.find((r) => r.userId === 'alice')).toMatchObject({
      dueStart: start + 3600,
      remindAt: start + 3600 - 1800,
      notifiedStart: start,
    });
  });

  it('puts right, by the next sync, a reminder the app wrote against the old state during a sync', async () => {
    const list = sampleList(Date.now());
    const { invoke, requests } = localHandler(tables, standin.baseUrl);
    standin.setContests(list);
    await invoke({});
    const start2104 = list.find((c) => c.id === 2104)?.startTimeSeconds as number;
    const moved = start2104 + 2 * 3600;
    standin.setContests(list.map((c) => (c.id === 2104 ? { ...c, startTimeSeconds: moved } : c)));
    await invoke({});
    // Written by the app while that sync ran: against the old start time, due at it.
    await addReminder(tables, 2104, 'late', 30, start2104);

    requests.reset();
    const { summary } = await invoke({});
    // The contest was handed over: its reminders are read again and the late one follows.
    expect(summary?.counts).toMatchObject({ remindersMoved: 1, remindersDue: 1, contestsWritten: 0, contestsRechecked: 1 });
    expect((await snapshot(tables)).reminders).toContainEqual(
      expect.objectContaining({
        contestKey: contestKeyOf(cf(2104), 'late'),
        contestId: cf(2104),
        userId: 'late',
        remindAt: moved - 1800,
        dueAt: moved - 1800,
      }),
    );

    // Then an unchanged sync costs what it always did.
    requests.reset();
    const quiet = await invoke({});
    expect(quiet.summary?.counts).toMatchObject({ contestsRechecked: 0, transactions: 0 });
    expect(Object.fromEntries(requests.counts)).toEqual({ UpdateItem: 1, Scan: 1, TransactWriteItems: 1 });
  });

  it('dry run: says what it would change and writes nothing', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    const { summary } = await invoke({ dryRun: true });
    expect(summary).toMatchObject({ outcome: 'succeeded', dryRun: true, counts: { contestsWritten: 0 } });
    expect(summary?.changes?.write.map((c) => c.contestId).sort()).toEqual([2099, 2100, 2101, 2102, 2103, 2104, 2105].map(cf));
    expect((await snapshot(tables)).contests).toEqual([]);
  });

  it('runs a scheduled interval once: a duplicate delivery is skipped as already-done', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    const event = scheduledEvent(hourAgo());
    expect((await invoke(event)).summary).toMatchObject({ outcome: 'succeeded', source: 'schedule' });
    const again = await invoke(event);
    expect(again.summary).toMatchObject({ outcome: 'skipped', reason: 'already-done' });
    expect(standin.requests).toHaveLength(1);
    const record = await tables.doc.send(
      new GetCommand({ TableName: tables.names.coordination, Key: { pk: `run#${again.summary?.interval}` } }),
    );
    expect(record.Item).toMatchObject({ outcome: 'succeeded', source: 'schedule', fence: 1 });
    // The console can force it again.
    const forced = await invoke({ interval: again.summary?.interval, force: true });
    expect(forced.summary).toMatchObject({ outcome: 'succeeded', fence: 2 });
  });
});

describe('the run deadline', () => {
  it('stops before Lambda would time out and releases the lease, so the next run can start at once', async () => {
    standin.setDelay(20_000);
    const { invoke } = localHandler(tables, standin.baseUrl, { leaseSeconds: 2 });
    // The stop margin (13.6 s: one DynamoDB call with every SDK retry) leaves 2.4 s of work; the
    // bound holds the time this process had the CPU (a machine busy with other work adds none).
    const run = await timed(() => invoke({}, 16_000));
    const { summary } = run.value;
    expect(run.ownMs, JSON.stringify({ ...run, value: undefined })).toBeLessThan(4_000);
    expect(summary).toMatchObject({ outcome: 'failed', reason: 'codeforces' });
    const lease = await tables.doc.send(
      new GetCommand({ TableName: tables.names.coordination, Key: { pk: 'lease#contest-sync' }, ConsistentRead: true }),
    );
    expect(lease.Item?.holder).toBeUndefined();
    standin.setDelay(0);
    expect((await invoke({})).summary).toMatchObject({ outcome: 'succeeded', fence: 2 });
  });
});

describe('refusals and writes that must not happen', () => {
  it('refuses, at start, a lease setting the function timeout cannot honour: no Codeforces call, nothing written', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl, { leaseSeconds: 30 });
    const { error } = await invoke({}, 20_000);
    expect(error?.name).toBe('ConfigError');
    expect(error?.message).toMatch(/LEASE_DURATION_SECONDS with this function timeout: function timeout \(\d+ ms\) leaves no time to work/);
    expect(standin.requests).toHaveLength(0);
    expect(await snapshot(tables)).toEqual({ contests: [], reminders: [] });
  });

  it('a dry run takes no lease: it runs while another run holds it, and never makes the tick skip', async () => {
    await tables.doc.send(
      new PutCommand({
        TableName: tables.names.coordination,
        Item: { pk: 'lease#contest-sync', holder: 'someone-else', fence: 4, expiresAtMs: Date.now() + 60_000 },
      }),
    );
    const { invoke } = localHandler(tables, standin.baseUrl);
    const dry = await invoke({ dryRun: true, interval: hourAgo() });
    expect(dry.summary).toMatchObject({ outcome: 'succeeded', dryRun: true });
    expect(dry.summary?.fence).toBeUndefined();
    const lease = await tables.doc.send(
      new GetCommand({ TableName: tables.names.coordination, Key: { pk: 'lease#contest-sync' }, ConsistentRead: true }),
    );
    expect(lease.Item).toMatchObject({ holder: 'someone-else', fence: 4 });
    expect(lease.Item?.doneIntervals).toBeUndefined();
    expect(await snapshot(tables)).toEqual({ contests: [], reminders: [] });
  });

  it('marks the interval done with the last data write: a crash before the release cannot make the retry sync again', async () => {
    const { invoke, requests } = localHandler(tables, standin.baseUrl, { leaseSeconds: 2 });
    // Every release (the transaction that writes the run record) is lost, as if the process died there.
    requests.client.middlewareStack.add(
      (next) => async (args) => {
        const items = (args.input as { TransactItems?: { Put?: { Item?: { pk?: unknown } } }[] }).TransactItems ?? [];
        // The run record's key as the document client writes it, or marshalled (the lease's own release).
        const pkOf = (pk: unknown) => (typeof pk === 'object' && pk !== null ? (pk as { S?: unknown }).S : pk);
        if (items.some((item) => String(pkOf(item.Put?.Item?.pk)).startsWith('run#'))) {
          throw Object.assign(new Error('connection reset before the release'), { name: 'TimeoutError' });
        }
        return next(args);
      },
      { step: 'initialize', name: 'loseRelease' },
    );
    const event = scheduledEvent(hourAgo());
    const first = await invoke(event);
    expect(first.summary).toMatchObject({ outcome: 'succeeded', counts: { contestsWritten: 7 } });
    expect(first.lines).toContainEqual(expect.objectContaining({ message: 'could not release the lease; it will lapse' }));
    await new Promise((resolve) => setTimeout(resolve, 2_100)); // the unreleased lease lapses
    const retry = await invoke(event);
    expect(retry.summary).toMatchObject({ outcome: 'skipped', reason: 'already-done' });
    expect(standin.requests).toHaveLength(1);
  });
});

describe('bad replies write nothing and say what is wrong', () => {
  const cases: [string, () => void, RegExp][] = [
    ['truncated JSON', () => standin.enqueue({ body: '{"status":"OK","result":[{"id":1,' }), /not JSON/i],
    ['a wrong envelope', () => standin.enqueue({ body: { status: 'OK', contests: [] } }), /result/i],
    [
      'mostly invalid contests',
      () => standin.enqueue({ body: { status: 'OK', result: sampleList().map((c) => ({ ...c, phase: 'SOMETIME' })) } }),
      /failed validation/i,
    ],
    [
      'a FAILED reply',
      () => standin.enqueue({ status: 400, body: { status: 'FAILED', comment: 'contest.list: Gym parameter is invalid' } }),
      /Gym parameter is invalid/,
    ],
    ['an empty list', () => standin.enqueue({ body: { status: 'OK', result: [] } }), /empty contest list/i],
  ];

  it.each(cases)('%s', async (_name, arrange, message) => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    await invoke({});
    const before = await snapshot(tables);
    arrange();
    const { summary } = await invoke({});
    expect(summary).toMatchObject({ outcome: 'failed', reason: 'codeforces' });
    expect(summary?.error).toMatch(message);
    expect(await snapshot(tables)).toEqual(before);
  });

  it('503 until the deadline: gives up in time, scheduled runs throw so Lambda retries', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    standin.enqueue(...Array.from({ length: 20 }, () => ({ status: 503, body: '<html>Service Unavailable</html>' })));
    const run = await timed(() => invoke(scheduledEvent(hourAgo()), 25_000));
    const { summary, error } = run.value;
    expect(run.ownMs, JSON.stringify({ ...run, value: undefined })).toBeLessThan(12_000);
    expect(error?.name).toBe('SyncFailedError');
    expect(error?.message).toMatch(/failed in phase codeforces/);
    expect(summary).toMatchObject({ outcome: 'failed', reason: 'codeforces' });
    expect(summary?.counts.sourceAttempts).toBeGreaterThanOrEqual(2);
    expect(summary?.error).toMatch(/503/);
    expect((await snapshot(tables)).contests).toEqual([]);
    // The interval was not marked done: the retry runs.
    standin.clearQueue();
    const retry = await invoke(scheduledEvent(hourAgo()));
    expect(retry.summary?.outcome).toBe('succeeded');
  });

  it('holds the drops of a suspiciously shrunken list: the sync succeeds, the app sees no change but the reminders paused', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    const many = Array.from({ length: 10 }, (_, i) => apiContest(3000 + i, 10 + i));
    standin.setContests(many);
    await invoke({});
    const before = await snapshot(tables);
    standin.setContests(many.slice(0, 2));
    const { summary } = await invoke({});
    expect(summary).toMatchObject({ outcome: 'succeeded', counts: { contestsHeld: 8, contestsVanished: 0, contestsRemoved: 0 } });
    const view = (s: Awaited<ReturnType<typeof snapshot>>) =>
      // What the app sees: not the sync's own state (evidence, and the gate: remindersPaused, dueStart).
      s.contests.map(({ pending: _pending, updatedAt: _u, remindersPaused: _r, dueStart: _d, ...rest }) => rest);
    const after = await snapshot(tables);
    expect(view(after)).toEqual(view(before));
    expect(after.contests.map((c) => c.remindersPaused)).toEqual([undefined, undefined, ...Array.from({ length: 8 }, () => 'held')]);
  });
});

describe('bad events', () => {
  it.each([
    ['a string', 'sync now'],
    ['a number', 7],
    ['an array', [{}]],
    ['a Scheduled Event with a bad time', scheduledEvent('last tuesday')],
  ])('%s: a validation error naming the problem, no Codeforces call, nothing written', async (_name, event) => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    const { error, lines } = await invoke(event);
    expect(error?.name).toBe('EventValidationError');
    expect(error?.message).toMatch(/got a string|got a number|got an array|time: must be an ISO-8601/);
    expect(standin.requests).toHaveLength(0);
    expect(await snapshot(tables)).toEqual({ contests: [], reminders: [] });
    expect(lines.filter((line) => line.summary === true)).toEqual([
      expect.objectContaining({ message: 'failed', phase: 'event', level: 'ERROR' }),
    ]);
  });
});
