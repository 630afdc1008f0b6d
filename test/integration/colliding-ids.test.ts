/**
 * Contests of two platforms whose ids collide as numbers — `codeforces:199` and `atcoder:199` —
 * kept apart everywhere, on DynamoDB Local with the tables of the synthesized template: each
 * platform's sync (the Codeforces job on its stand-in, an AtCoder job as one more instance of the
 * same handler with its own source and lease) writes its own contest item and reply clock and
 * publishes its own contest event; the API (the router on the real write path and contest reader)
 * sets, lists and answers each under its own id; delivery sends each reminder once under its own
 * id and detail; the calendar projection and feeds keep each under its own UID (the feed of every
 * platform holds both); the list of every platform's contests shows both, each once. The Codeforces
 * contest's event ids are still those of its number (unchanged across the upgrade).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EVENT_SOURCES } from '../../lambda/contract.js';
import { createApiHandler } from '../../lambda/api/app.js';
import { dynamoContestReader } from '../../lambda/api/contests.js';
import { applyContestEvent, buildUserFeed, createFeeds, type CalendarDeps, type QueueMessage } from '../../lambda/calendar/feeds.js';
import { contestEventSchema } from '../../lambda/calendar/projection.js';
import { dynamoDoorTable } from '../../lambda/calendar/store.js';
import { reminderUsers } from '../../lambda/calendar/aws.js';
import { ALL_PLATFORMS_FEED, FEED_OBJECTS } from '../../lambda/calendar/contract.js';
import { createReminderClient } from '../../lambda/reminders/index.js';
import { contestKeyOf } from '../../lambda/reminders/table.js';
import { gateKeys } from '../../lambda/contests/bucket-gates.js';
import type { SourceReply } from '../../lambda/sources/source.js';
import { apiContest, scanAll } from '../support/contests.js';
import { deliverAt, outboxEvents as outboxOf } from '../support/delivery.js';
import { localHandler } from '../support/handler.js';
import { useWorld, type World } from '../support/world.js';
import { httpEvent, lambdaContext } from '../lambda/api/events.js';
import { memoryObjects } from '../lambda/calendar/doubles.js';

let world: World;
useWorld('colliding-ids', (w) => {
  world = w;
});

const CF = 'codeforces:199';
const AC = 'atcoder:199';
const sha = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 32);

/** What an AtCoder source would reply for a contest whose own id is `199`. */
function atcoderReply(startTimeSeconds: number): SourceReply {
  return {
    contests: [
      {
        contestId: AC,
        platform: 'atcoder',
        platformId: '199',
        name: 'AtCoder Regular Contest 199',
        type: 'ARC',
        phase: 'BEFORE',
        startTimeSeconds,
        durationSeconds: 7200,
        url: 'https://atcoder.jp/contests/199',
      },
    ],
    listedIds: new Set([AC]),
    dating: { madeAt: Math.floor(Date.now() / 1000) },
    invalid: 0,
    attempts: 1,
    latencyMs: 1,
  };
}

async function syncBoth(cfStart: number, acStart: number) {
  // A Codeforces contest first seen is announced when a later reply confirms it: two replies, five minutes apart.
  for (const offsetMs of [0, 5 * 60_000]) {
    const madeAt = Math.floor((Date.now() + offsetMs) / 1000);
    world.standin.enqueue({
      body: {
        status: 'OK',
        result: [apiContest(199, 0, { startTimeSeconds: cfStart, relativeTimeSeconds: madeAt - cfStart, phase: 'BEFORE' })],
      },
    });
    const codeforces = await localHandler(world.tables, world.standin.baseUrl, { now: () => Date.now() + offsetMs }).invoke({});
    expect(codeforces.summary?.outcome).toBe('succeeded');
  }
  const atcoder = await localHandler(world.tables, world.standin.baseUrl, {
    env: { LEASE_KEY: 'lease#contest-sync#atcoder', RUN_RECORD_PREFIX: 'run#contest-sync#atcoder#' },
    source: { platform: 'atcoder', fetchReply: async () => atcoderReply(acStart) },
  }).invoke({});
  expect(atcoder.summary?.outcome).toBe('succeeded');
}

const outboxEvents = (source: string) => outboxOf(world.tables, source);

function api(calendar: CalendarDeps) {
  const { tables } = world;
  return createApiHandler({
    contests: dynamoContestReader(tables.doc, tables.names.contests),
    reminders: calendar.reminders as ReturnType<typeof createReminderClient>,
    feeds: createFeeds(calendar),
    now: Date.now,
    log: { warn: () => undefined, error: () => undefined },
  });
}

function calendarDeps(sent: QueueMessage[]): CalendarDeps & { objects: ReturnType<typeof memoryObjects> } {
  const { tables } = world;
  const reminders = createReminderClient({
    dynamo: tables.doc,
    tables: { contests: tables.names.contests, reminders: tables.names.reminders },
  });
  return {
    objects: memoryObjects(),
    door: dynamoDoorTable(tables.doc, (tables.names as { door?: string }).door!),
    reminders,
    send: async (messages) => {
      sent.push(...messages);
    },
    usersOf: reminderUsers(tables.doc, tables.names.reminders),
    now: Date.now,
  };
}

const deliver = (offsetMs: number) => deliverAt(world.tables, offsetMs);

describe('codeforces:199 and atcoder:199', () => {
  it('are kept apart in every table, event, feed and API answer', async () => {
    const nowS = Math.floor(Date.now() / 1000);
    const cfStart = nowS + 30 * 60 + 120;
    const acStart = nowS + 40 * 60 + 120;
    await syncBoth(cfStart, acStart);

    // Contests: two items, two reply clocks, and each contest's own bucket gates.
    const contests = await scanAll(world.tables.doc, world.tables.names.contests);
    expect(contests.map((item) => item.contestId).sort()).toEqual(
      [AC, 'clock#atcoder', 'clock#codeforces', CF, ...gateKeys(AC), ...gateKeys(CF)].sort(),
    );
    expect(contests.filter((item) => gateKeys(CF).includes(String(item.contestId))).map((gate) => gate.dueStart)).toEqual(
      Array(16).fill(cfStart),
    );
    expect(contests.filter((item) => gateKeys(AC).includes(String(item.contestId))).map((gate) => gate.dueStart)).toEqual(
      Array(16).fill(acStart),
    );
    expect(contests.find((item) => item.contestId === CF)).toMatchObject({
      platform: 'codeforces',
      platformId: '199',
      startTimeSeconds: cfStart,
    });
    expect(contests.find((item) => item.contestId === AC)).toMatchObject({
      platform: 'atcoder',
      platformId: '199',
      startTimeSeconds: acStart,
    });

    // Contest events: one each, under its own id and detail; the Codeforces id is its number's, as before.
    const announced = await outboxEvents(EVENT_SOURCES.contests);
    expect(
      announced.map((event) => [event.detail.contestId, event.detail.platform, event.detail.platformId, event.detail.contest]).sort(),
    ).toEqual(
      [
        [AC, 'atcoder', '199', AC],
        [CF, 'codeforces', '199', CF],
      ].sort(),
    );
    expect(announced.find((event) => event.detail.contestId === CF)!.eventId).toBe(`contest:${sha([199, 1])}`);
    expect(announced.find((event) => event.detail.contestId === AC)!.eventId).toBe(`contest:${sha([AC, 1])}`);

    // The API: each set under its own id, each listed apart, each platform's contests apart.
    const sent: QueueMessage[] = [];
    const calendar = calendarDeps(sent);
    const handler = api(calendar);
    const call = async (
      method: string,
      path: string,
      sub: string,
      extra: { query?: string; body?: string; routeKey?: string; headers?: Record<string, string> } = {},
    ) => {
      const answer = await handler(httpEvent({ method, path, sub, ...extra }), lambdaContext);
      return { status: answer.statusCode, body: answer.body === undefined || answer.body === '' ? undefined : JSON.parse(answer.body) };
    };
    const put = (id: string, sub: string, minutesBefore: number) =>
      call('PUT', `/me/reminders/${id}`, sub, {
        routeKey: 'PUT /me/reminders/{contestId}',
        body: JSON.stringify({ minutesBefore }),
        headers: { 'content-type': 'application/json' },
      });
    expect((await put(CF, 'alice', 30)).status).toBe(200);
    expect((await put(AC, 'alice', 40)).status).toBe(200);
    expect((await put(CF, 'bob', 30)).status).toBe(200);
    const listed = await call('GET', '/me/reminders', 'alice');
    expect(listed.body.reminders.map((r: { contestId: string; minutesBefore: number }) => [r.contestId, r.minutesBefore]).sort()).toEqual(
      [
        [AC, 40],
        [CF, 30],
      ].sort(),
    );
    for (const [platform, id] of [
      ['codeforces', CF],
      ['atcoder', AC],
    ] as const) {
      const page = await call('GET', '/contests', 'alice', { query: `platform=${platform}` });
      expect(page.status).toBe(200);
      expect(page.body.contests.map((c: { id: string }) => c.id)).toEqual([id]);
    }
    // No platform asked for: both, soonest first, a page of one at a time through the cursor.
    const first = await call('GET', '/contests', 'alice', { query: 'limit=1' });
    const second = await call('GET', '/contests', 'alice', { query: `limit=1&cursor=${first.body.cursor}` });
    const merged = [...first.body.contests, ...second.body.contests].map((c: { id: string; platform: string }) => [c.id, c.platform]);
    expect(merged).toEqual([
      [CF, 'codeforces'],
      [AC, 'atcoder'],
    ]);

    // Reminders: each row under its own contest's bucket key, with its qualified id.
    const rows = await scanAll(world.tables.doc, world.tables.names.reminders);
    expect(rows.map((row) => [row.contestKey, row.contestId, row.userId]).sort()).toEqual(
      [
        [contestKeyOf(AC, 'alice'), AC, 'alice'],
        [contestKeyOf(CF, 'alice'), CF, 'alice'],
        [contestKeyOf(CF, 'bob'), CF, 'bob'],
      ].sort(),
    );

    // Delivery, once both are due: three ReminderDue, each once, each with its own contest.
    await deliver(11 * 60_000);
    await deliver(11 * 60_000);
    const due = await outboxEvents(EVENT_SOURCES.reminders);
    expect(
      due.map((event) => [event.detail.contestId, event.detail.platform, event.detail.platformId, event.detail.userId]).sort(),
    ).toEqual(
      [
        [AC, 'atcoder', '199', 'alice'],
        [CF, 'codeforces', '199', 'alice'],
        [CF, 'codeforces', '199', 'bob'],
      ].sort(),
    );
    expect(new Set(due.map((event) => event.eventId)).size).toBe(3);
    const cfIntent = rows.find((row) => row.contestId === CF && row.userId === 'alice')!.intent;
    expect(due.find((event) => event.detail.contestId === CF && event.detail.userId === 'alice')!.eventId).toBe(
      `reminder-due:${sha([199, 'alice', cfIntent, cfStart])}`,
    );

    // The calendar: each platform's projection and public feed hold only its contest; alice's feed holds both under their own UIDs.
    for (const event of announced)
      await applyContestEvent(
        calendar,
        contestEventSchema.parse({
          ...event,
          source: EVENT_SOURCES.contests,
          'detail-type': event.detailType,
          detail: { ...event.detail, eventId: event.eventId },
        }),
      );
    const publicFeed = (platform: string) => calendar.objects.objects.get(FEED_OBJECTS.public(platform)) ?? '';
    expect(publicFeed('codeforces')).toContain('UID:codeforces-199@contest-sync');
    expect(publicFeed('codeforces')).not.toContain('atcoder-199');
    expect(publicFeed('atcoder')).toContain('UID:atcoder-199@contest-sync');
    expect(publicFeed('atcoder')).not.toContain('codeforces-199');
    // The feed of every platform holds both, under the same UIDs.
    expect(
      publicFeed(ALL_PLATFORMS_FEED)
        .match(/^UID:.*$/gm)
        ?.map((line) => line.trim()),
    ).toEqual(['UID:codeforces-199@contest-sync', 'UID:atcoder-199@contest-sync']);
    const issued = await call('POST', '/me/calendar', 'alice');
    expect(issued.status).toBe(201);
    expect(await buildUserFeed(calendar, 'alice')).toBe('built');
    const file = String(issued.body.url).split('/').pop()!;
    const feed = await handler(
      httpEvent({ method: 'GET', path: `/calendar/u/${file}`, routeKey: 'GET /calendar/u/{file}' }),
      lambdaContext,
    );
    expect(feed.statusCode).toBe(200);
    const uids = String(feed.body)
      .match(/^UID:.*$/gm)
      ?.map((line) => line.trim());
    expect(uids?.sort()).toEqual(['UID:atcoder-199@contest-sync', 'UID:codeforces-199@contest-sync']);
  });
});
