/**
 * The calendar (lambda/calendar/): the projection of what was published, the feeds it renders
 * read back by an independent parser (ical.js), a simulated week of contest events through the
 * builder (a reschedule raises SEQUENCE, a withdrawal cancels, what was never published is absent,
 * duplicates and late arrivals change nothing), and the feed tokens (hashed, rotated, revoked).
 */
import { describe, expect, it } from 'vitest';
import { createBuilder, handleMessage } from '../../../lambda/calendar/builder.js';
import { ALL_PLATFORMS_FEED, FEED_OBJECTS, MAX_PROJECTION_BYTES } from '../../../lambda/calendar/contract.js';
import { applyContestEvent, buildUserFeed, createFeeds, userGroup } from '../../../lambda/calendar/feeds.js';
import {
  apply,
  entryBytes,
  keptFirst,
  pruned,
  publishedAfter,
  type ContestEvent,
  type Projection,
} from '../../../lambda/calendar/projection.js';
import { tokenHash } from '../../../lambda/calendar/store.js';
import { listInputSchema, parseInput } from '../../../lambda/reminders/input.js';
import { calendarWorld } from './doubles.js';
import { parseFeed } from './ics.js';
import { cf } from '../../support/ids.js';
import { platformIdOf } from '../../../lambda/sources/ids.js';

const DAY = 86_400;
const T0 = Date.UTC(2026, 11, 1, 12) / 1000; // Tuesday 2026-12-01 12:00 UTC
let ids = 0;
type Kind = ContestEvent['detail-type'];

/** A contest event as the bus delivers it: a Codeforces contest by its number, or any contest by its qualified id. */
function contestEvent(
  kind: Kind,
  id: number | string,
  startTimeSeconds: number,
  atSeconds: number,
  extra: Partial<ContestEvent['detail']> = {},
): ContestEvent {
  ids += 1;
  const contestId = cf(id);
  return {
    source: 'contest-sync.contests',
    'detail-type': kind,
    time: new Date(atSeconds * 1000).toISOString(),
    detail: {
      eventId: `contest:${String(ids).padStart(32, '0')}`,
      contestId,
      name: `Codeforces Round ${platformIdOf(contestId)}`,
      url: `https://codeforces.com/contest/${platformIdOf(contestId)}`,
      type: 'CF',
      startTimeSeconds,
      ...(kind === 'ContestWithdrawn' ? {} : { durationSeconds: 7200 }),
      ...extra,
    },
  };
}

describe('the published projection', () => {
  const empty: Projection = { contests: {} };
  it('numbers SEQUENCE from the event’s detail.sequence when it carries one (1 = first announcement → 0)', () => {
    const announced = apply(empty, contestEvent('ContestAnnounced', 1, T0 + DAY, T0, { sequence: 1 }), T0).projection;
    const moved = apply(announced, contestEvent('ContestRescheduled', 1, T0 + 2 * DAY, T0 + 60, { sequence: 2 }), T0).projection;
    expect(moved.contests[cf(1)]).toMatchObject({ sequence: 1, startTimeSeconds: T0 + 2 * DAY, status: 'CONFIRMED', publishedSequence: 2 });
    const late = apply(moved, contestEvent('ContestRescheduled', 1, T0 + 3 * DAY, T0 + 30, { sequence: 2 }), T0);
    expect(late.changed).toBe(false);
    const older = apply(moved, contestEvent('ContestAnnounced', 1, T0 + DAY, T0 + 999, { sequence: 1 }), T0);
    expect(older.changed).toBe(false);
  });

  it('without detail.sequence, orders by commit time and counts the changes applied', () => {
    const a = contestEvent('ContestAnnounced', 1, T0 + DAY, T0);
    const b = contestEvent('ContestRescheduled', 1, T0 + 2 * DAY, T0 + 3600);
    const afterB = apply(apply(empty, a, T0).projection, b, T0).projection;
    expect(afterB.contests[cf(1)]!.sequence).toBe(1);
    expect(apply(afterB, a, T0).changed).toBe(false); // a duplicate of the first, after the second
    expect(apply(afterB, b, T0).changed).toBe(false); // b again
  });

  it('keeps a cancelled contest a week after its start, a confirmed one a week after its end, then forgets them', () => {
    let p = apply(empty, contestEvent('ContestAnnounced', 1, T0, T0 - DAY), T0).projection;
    p = apply(p, contestEvent('ContestAnnounced', 2, T0, T0 - DAY), T0).projection;
    p = apply(p, contestEvent('ContestWithdrawn', 2, T0, T0 - 10), T0).projection;
    expect(
      Object.keys(apply(p, contestEvent('ContestAnnounced', 3, T0 + DAY, T0), T0 + 7 * DAY + 3600).projection.contests).sort(),
    ).toEqual([cf(1), cf(3)]);
    expect(Object.keys(apply(p, contestEvent('ContestAnnounced', 3, T0 + DAY, T0), T0 + 8 * DAY).projection.contests)).toEqual([cf(3)]);
  });
});

describe('the projection’s byte bound', () => {
  const long = (n: number) => `${n} ${'क'.repeat(505)}`; // 512 code units, 3 bytes of UTF-8 each
  const size = (p: Projection) => Buffer.byteLength(JSON.stringify(p.contests));

  it('holds at most MAX_PROJECTION_BYTES however long the names are, keeping the soonest upcoming, then the latest ended', () => {
    let p: Projection = { contests: {} };
    // 40 contests that ended in the last week, then 300 upcoming ones, announced in no particular order.
    for (let i = 1; i <= 40; i += 1)
      p = apply(p, contestEvent('ContestAnnounced', i, T0 - i * 3600 - 7200, T0 - 9 * DAY, { name: long(i) }), T0).projection;
    const upcoming = Array.from({ length: 300 }, (_, i) => 1000 + ((i * 37) % 300));
    for (const id of upcoming)
      p = apply(p, contestEvent('ContestAnnounced', id, T0 + (id - 999) * 3600, T0, { name: long(id) }), T0).projection;
    expect(size(p)).toBeLessThanOrEqual(MAX_PROJECTION_BYTES);
    expect(size(p)).toBeGreaterThan(MAX_PROJECTION_BYTES - 2 * 2000);
    const ids = Object.keys(p.contests)
      .map((id) => Number(platformIdOf(id)))
      .sort((a, b) => a - b);
    // Every upcoming one it holds starts before every upcoming one it left out; the ended ones went first.
    expect(ids[0]).toBeGreaterThanOrEqual(1000);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => 1000 + i));
  });

  it('keeps what has ended, the latest first, when room is left', () => {
    const ended = Array.from({ length: 5 }, (_, i) =>
      publishedAfter(undefined, contestEvent('ContestAnnounced', i + 1, T0 - (i + 1) * DAY, T0 - 9 * DAY)),
    );
    const next = publishedAfter(undefined, contestEvent('ContestAnnounced', 9, T0 + DAY, T0));
    const order = [...ended, next].sort(keptFirst(T0)).map((c) => c.contestId);
    expect(order).toEqual([9, 1, 2, 3, 4, 5].map(cf));
    const all = { contests: Object.fromEntries([...ended, next].map((c) => [c.contestId, c])) };
    expect(Object.keys(pruned(all, T0).contests).sort()).toEqual([1, 2, 3, 4, 5, 9].map(cf));
    expect(entryBytes(next)).toBe(Buffer.byteLength(JSON.stringify({ [next.contestId]: next })) - 1);
  });
});

describe('a simulated week of published events, through the builder', () => {
  it('keeps UIDs, raises SEQUENCE on each published move, cancels a withdrawal, and shows nothing never published', async () => {
    const world = calendarWorld(T0 * 1000);
    const feeds = createFeeds(world.deps);
    world.reminders.set('alice', [{ contestId: cf(2120), minutesBefore: 30, remindAt: 0, state: 'scheduled' }]);
    await feeds.issue('alice');
    const builder = createBuilder(world.deps, { info: () => undefined, warn: () => undefined, error: () => undefined });
    const deliver = async (...events: ContestEvent[]) =>
      builder({ Records: events.map((e, i) => ({ messageId: `m${ids}-${i}`, body: JSON.stringify(e) })) as never });

    // Monday: two rounds announced. 2122 has a change the sync held (never published): no event.
    await deliver(contestEvent('ContestAnnounced', 2120, T0 + 2 * DAY, T0), contestEvent('ContestAnnounced', 2121, T0 + 3 * DAY, T0));
    const publicFeed = () => parseFeed(world.objects.objects.get(FEED_OBJECTS.public('codeforces'))!);
    const monday = publicFeed();
    expect(monday.name).toBe('Codeforces contests');
    expect(monday.events.map((e) => [e.uid, e.sequence, e.status])).toEqual([
      ['codeforces-2120@contest-sync', 0, 'CONFIRMED'],
      ['codeforces-2121@contest-sync', 0, 'CONFIRMED'],
    ]);
    expect(monday.events[0]).toMatchObject({
      url: 'https://codeforces.com/contest/2120',
      dtstamp: new Date(T0 * 1000).toISOString(),
      end: new Date((T0 + 2 * DAY + 7200) * 1000).toISOString(),
    });
    expect(world.sent.map((m) => m.group)).toEqual([userGroup('alice')]); // 2120's user asked to rebuild

    // Wednesday: 2120 published as moved an hour later; then moved again; a duplicate of the first move arrives late.
    const move1 = contestEvent('ContestRescheduled', 2120, T0 + 2 * DAY + 3600, T0 + DAY);
    await deliver(move1, contestEvent('ContestRescheduled', 2120, T0 + 2 * DAY + 7200, T0 + DAY + 3600), move1);
    const wednesday = publicFeed().events.find((e) => e.uid === 'codeforces-2120@contest-sync')!;
    expect([wednesday.sequence, wednesday.start]).toEqual([2, new Date((T0 + 2 * DAY + 7200) * 1000).toISOString()]);

    // Thursday: 2121 withdrawn.
    await deliver(contestEvent('ContestWithdrawn', 2121, T0 + 3 * DAY, T0 + 2 * DAY));
    const thursday = publicFeed().events.find((e) => e.uid === 'codeforces-2121@contest-sync')!;
    expect([thursday.status, thursday.sequence]).toEqual(['CANCELLED', 1]);
    expect(publicFeed().events.map((e) => e.uid)).not.toContain('codeforces-2122@contest-sync');

    // Alice's feed after her rebuild: only her contest, at its published start, her reminder as a VALARM.
    for (const message of world.sent) await handleMessage(world.deps, message.body);
    const hash = world.door.feeds.get('alice')!.hash;
    const mine = parseFeed(world.objects.objects.get(FEED_OBJECTS.user(hash))!);
    expect(mine.events.map((e) => [e.uid, e.sequence, e.status, e.alarms, e.start])).toEqual([
      ['codeforces-2120@contest-sync', 2, 'CONFIRMED', [-1800], new Date((T0 + 2 * DAY + 7200) * 1000).toISOString()],
    ]);
  });

  it('renders the same bytes for the same publications (DTSTAMP is the publication, not the build)', async () => {
    const world = calendarWorld(T0 * 1000);
    await applyContestEvent(world.deps, contestEvent('ContestAnnounced', 7, T0 + DAY, T0));
    const block = (feed: string | undefined, uid: string) =>
      feed!
        .split('BEGIN:VEVENT')
        .find((b) => b.includes(`UID:${uid}`))!
        .split('END:VEVENT')[0];
    const first = world.objects.objects.get(FEED_OBJECTS.public('codeforces'));
    world.clock.ms += 3 * 3600_000;
    const next = contestEvent('ContestAnnounced', 8, T0 + DAY, T0 + 1);
    await applyContestEvent(world.deps, next);
    const once = world.objects.objects.get(FEED_OBJECTS.public('codeforces'));
    await applyContestEvent(world.deps, next); // the same event again: finished again, the same bytes
    expect(world.objects.objects.get(FEED_OBJECTS.public('codeforces'))).toBe(once);
    expect(block(once, 'codeforces-7@contest-sync')).toBe(block(first, 'codeforces-7@contest-sync'));
  });

  it('hands back a failed message and every later one of its batch, in order; drops one that is neither kind', async () => {
    const world = calendarWorld(T0 * 1000);
    let fail = true;
    const put = world.objects.put.bind(world.objects);
    world.objects.put = async (key, body) => {
      if (fail && key.startsWith('feeds/public')) throw new Error('S3 is down');
      return put(key, body);
    };
    const logs: string[] = [];
    const builder = createBuilder(world.deps, { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) });
    const records = [
      'not json',
      JSON.stringify({ rebuild: 'someone-else' }),
      JSON.stringify(contestEvent('ContestAnnounced', 1, T0 + DAY, T0)),
      '{"rebuild":"user","userId":"bob"}',
    ];
    const answer = await builder({ Records: records.map((body, i) => ({ messageId: `m${i}`, body })) } as never);
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: 'm2' }, { itemIdentifier: 'm3' }]);
    expect(logs.filter((m) => m.startsWith('feed message dropped'))).toHaveLength(2);
    fail = false;
    const retry = await builder({ Records: records.slice(2).map((body, i) => ({ messageId: `m${i + 2}`, body })) } as never);
    expect(retry.batchItemFailures).toEqual([]);
    expect(world.objects.objects.get(FEED_OBJECTS.public('codeforces'))).toContain('UID:codeforces-1@contest-sync');
  });
});

describe('feed tokens', () => {
  it('stores only the token’s hash, serves the feed by it, and reads no table on a poll', async () => {
    const world = calendarWorld(T0 * 1000);
    const feeds = createFeeds(world.deps);
    const { token } = await feeds.issue('alice');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify([...world.door.feeds])).not.toContain(token);
    expect([...world.objects.objects.keys()].join()).not.toContain(token);
    expect(world.door.feeds.get('alice')!.hash).toBe(tokenHash(token));
    const readsBefore = world.door.reads;
    const first = await feeds.read({ token });
    expect(first.status).toBe('ok');
    const again = await feeds.read({ token }, first.status === 'ok' ? first.etag : undefined);
    expect(again.status).toBe('not-modified');
    expect(world.door.reads).toBe(readsBefore);
  });

  it('rotating stops the old URL at once; revoking stops the feed; a rebuild racing a revoke leaves nothing behind', async () => {
    const world = calendarWorld(T0 * 1000);
    const feeds = createFeeds(world.deps);
    const old = await feeds.issue('alice');
    const rotated = await feeds.issue('alice');
    expect((await feeds.read({ token: old.token })).status).toBe('missing');
    expect((await feeds.read({ token: rotated.token })).status).toBe('ok');

    const userFeed = world.door.userFeed.bind(world.door);
    let calls = 0;
    world.door.userFeed = async (userId) => {
      calls += 1;
      const feed = await userFeed(userId);
      if (calls === 1) await feeds.revoke('alice'); // revoked between the builder's read and its write
      return feed;
    };
    expect(await buildUserFeed(world.deps, 'alice')).toBe('superseded');
    expect((await feeds.read({ token: rotated.token })).status).toBe('missing');
    expect([...world.objects.objects.keys()].filter((k) => k.startsWith('feeds/users/'))).toEqual([]);
    expect(await feeds.revoke('alice')).toBe(false);
    expect(await feeds.status('alice')).toBeUndefined();
  });

  it('keeps the public feed in memory for a minute: polls then read nothing at all', async () => {
    const world = calendarWorld(T0 * 1000);
    await applyContestEvent(world.deps, contestEvent('ContestAnnounced', 1, T0 + DAY, T0));
    const feeds = createFeeds(world.deps);
    const first = await feeds.read({ public: 'codeforces' });
    const reads = world.objects.reads;
    const etag = first.status === 'ok' ? first.etag : '';
    expect((await feeds.read({ public: 'codeforces' }, etag)).status).toBe('not-modified');
    expect((await feeds.read({ public: 'codeforces' })).status).toBe('ok');
    expect(world.objects.reads).toBe(reads);
    world.clock.ms += 61_000;
    expect((await feeds.read({ public: 'codeforces' }, etag)).status).toBe('not-modified');
    expect(world.objects.reads).toBe(reads + 1);
  });
});

describe('who a feed belongs to', () => {
  const refused: [string, string][] = [
    ['empty', ''],
    ['a lone high surrogate', '\ud800'],
    ['a lone low surrogate inside', 'a\udc00b'],
    ['a control character', 'alice\u0000'],
    ['257 bytes', 'é'.repeat(128) + 'x'],
  ];

  it.each(refused)('refuses the user id %s before anything is written (no door item, no object, no message)', async (_shown, userId) => {
    const world = calendarWorld(T0 * 1000);
    // The write path's own check, as the real one refuses (lambda/reminders/input.ts).
    world.deps.reminders = {
      listReminders: async (input) => {
        parseInput(listInputSchema, input, 'listReminders');
        return { reminders: [] };
      },
    };
    const feeds = createFeeds(world.deps);
    for (const call of [() => feeds.issue(userId), () => feeds.revoke(userId), () => feeds.status(userId), () => feeds.rebuild(userId)]) {
      await expect(call()).rejects.toMatchObject({ code: 'invalid-input' });
    }
    expect([world.door.feeds.size, world.objects.objects.size, world.sent.length]).toEqual([0, 0, 0]);
  });

  it('drops a rebuild message for a user id the product does not take', async () => {
    const world = calendarWorld(T0 * 1000);
    for (const [, userId] of refused) expect(await handleMessage(world.deps, JSON.stringify({ rebuild: 'user', userId }))).toBe('invalid');
    expect(await handleMessage(world.deps, JSON.stringify({ rebuild: 'user', userId: '𝒳'.repeat(64) }))).toBe('no-feed');
  });
});

describe('qualified ids in the calendar', () => {
  it("reads an event and a projection of the release before qualified ids (numbers) as Codeforces', UIDs unchanged", async () => {
    const world = calendarWorld(T0 * 1000);
    // The door table as that release left it: keyed and named by the number.
    const before = apply({ contests: {} }, contestEvent('ContestAnnounced', 2120, T0 + DAY, T0 - 60), T0).projection;
    const legacy = { '2120': { ...before.contests[cf(2120)]!, contestId: 2120 } } as unknown as Projection['contests'];
    await world.deps.door.saveProjection('codeforces', { contests: legacy }, 0);
    const { projection } = await world.deps.door.projection('codeforces');
    expect(Object.keys(projection.contests)).toEqual([cf(2120)]);
    // An event still in flight from that release: detail.contestId a number.
    const inFlight = {
      ...contestEvent('ContestRescheduled', 2120, T0 + 2 * DAY, T0),
      detail: { ...contestEvent('ContestRescheduled', 2120, T0 + 2 * DAY, T0).detail, contestId: 2120 },
    };
    await handleMessage(world.deps, JSON.stringify(inFlight));
    const feed = parseFeed(world.objects.objects.get(FEED_OBJECTS.public('codeforces'))!);
    expect(feed.events.map((e) => [e.uid, e.sequence, e.start])).toEqual([
      ['codeforces-2120@contest-sync', 1, new Date((T0 + 2 * DAY) * 1000).toISOString()],
    ]);
  });

  it('two platforms whose ids collide as numbers are two contests: each in its own public feed, both in the feed of every platform and of a user reminded of both', async () => {
    const world = calendarWorld(T0 * 1000);
    const feeds = createFeeds(world.deps);
    world.reminders.set('alice', [
      { contestId: cf(199), minutesBefore: 30, remindAt: 0, state: 'scheduled' },
      { contestId: 'atcoder:199', minutesBefore: 10, remindAt: 0, state: 'scheduled' },
    ]);
    await feeds.issue('alice');
    await applyContestEvent(world.deps, contestEvent('ContestAnnounced', 199, T0 + DAY, T0));
    await applyContestEvent(
      world.deps,
      contestEvent('ContestAnnounced', 'atcoder:199', T0 + 2 * DAY, T0, { name: 'AtCoder Beginner Contest 199' }),
    );
    const publicUids = (platform: string) => parseFeed(world.objects.objects.get(FEED_OBJECTS.public(platform))!).events.map((e) => e.uid);
    expect(publicUids('codeforces')).toEqual(['codeforces-199@contest-sync']);
    expect(publicUids('atcoder')).toEqual(['atcoder-199@contest-sync']);
    // The feed of every platform holds both, soonest first, each event as its platform's feed has it (UID included).
    const feedOf = (name: string) => parseFeed(world.objects.objects.get(FEED_OBJECTS.public(name))!);
    const all = feedOf(ALL_PLATFORMS_FEED);
    expect(all.name).toBe('Programming contests');
    expect(all.events).toEqual([...feedOf('codeforces').events, ...feedOf('atcoder').events]);
    expect(feedOf('atcoder').name).toBe('AtCoder contests');
    // Each event asked for alice's feed; the rebuild shows both, each with its own alarm.
    for (const message of world.sent) await handleMessage(world.deps, message.body);
    const mine = parseFeed(world.objects.objects.get(FEED_OBJECTS.user(world.door.feeds.get('alice')!.hash))!);
    expect(mine.events.map((e) => [e.uid, e.alarms])).toEqual([
      ['codeforces-199@contest-sync', [-1800]],
      ['atcoder-199@contest-sync', [-600]],
    ]);
  });
});
