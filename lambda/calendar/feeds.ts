/**
 * The calendar feeds (docs/api.md, "Calendar"): the API's port (read, issue, revoke, status,
 * rebuild) and what the builder does with the feed queue's messages (a contest event folded
 * into the published projection, then every feed that shows the contest rebuilt; a user's feed
 * rebuilt). Feeds are objects regenerated on change, so a poll reads one object and no table.
 */
import { createHash } from 'node:crypto';
import { InvalidInputError } from '../reminders/errors.js';
import { isUserId, USER_ID_RULE } from '../reminders/user-id.js';
import { PLATFORMS, type Platform } from '../sources/platforms.js';
import { platformOf } from '../sources/ids.js';
import { ALL_PLATFORMS_FEED, CONTESTS_GROUP, FEED_OBJECTS, type UserRebuildMessage } from './contract.js';
import { apply, type ContestEvent, type Projection } from './projection.js';
import { renderPublicFeed, renderUserFeed } from './render.js';
import { newFeedToken, tokenHash, type DoorTable, type FeedObjects } from './store.js';

/** A public feed: a platform's, or every platform's. */
export type PublicFeed = Platform | typeof ALL_PLATFORMS_FEED;

/** A feed object as stored: its bytes and their entity tag. */
export type FeedRead = { status: 'ok'; body: string; etag: string } | { status: 'not-modified'; etag: string } | { status: 'missing' };

/** The calendar feeds (what the HTTP API serves): reading them, and a user's secret URL. */
export interface Feeds {
  /** A public feed (a platform's, or every platform's), or a user's feed by the token of its URL. */
  read(feed: { public: PublicFeed } | { token: string }, ifNoneMatch?: string): Promise<FeedRead>;
  /** A new secret token for the user's feed (replacing any previous one, which stops working at once), its feed built. */
  issue(userId: string): Promise<{ token: string; createdAt: number }>;
  /** Revokes the user's feed: false if there was none. */
  revoke(userId: string): Promise<boolean>;
  /** When the user's current feed token was made, if they have one. */
  status(userId: string): Promise<{ createdAt: number } | undefined>;
  /** Asks for the user's feed to be built again (their reminders changed). */
  rebuild(userId: string): Promise<void>;
}

/** What the feeds read of the reminder write path (lambda/reminders/): a user's reminders, a page at a time. */
export interface ReminderLister {
  listReminders(input: { userId: string; limit?: number; cursor?: string }): Promise<{
    reminders: readonly { contestId: string; minutesBefore: number }[];
    cursor?: string;
  }>;
}

export interface QueueMessage {
  body: string;
  group: string;
}

/** What the feeds need (the API's port): the stores, the user's reminders, the queue. */
export interface FeedDeps {
  objects: FeedObjects;
  door: DoorTable;
  reminders: ReminderLister;
  /** Sends messages to the feed queue (FIFO: each group in order). */
  send(messages: QueueMessage[]): Promise<void>;
  /** Epoch milliseconds. */
  now: () => number;
  newToken?: () => string;
}

/** And what the builder needs besides. */
export interface CalendarDeps extends FeedDeps {
  /** The users with a reminder on a contest, a page at a time. */
  usersOf(contestId: string): AsyncIterable<string[]>;
}

/** A user's feed shows at most this many reminders' contests (20 pages of the write path's largest). */
const MAX_REMINDER_PAGES = 20;
/** The public feed is one object every poller reads: kept in memory this long (ms). */
const PUBLIC_CACHE_MS = 60_000;

/** The FIFO group of a user's rebuilds: one per user (ids may be long or odd: hashed). */
export const userGroup = (userId: string): string => `user-${createHash('sha256').update(userId).digest('hex')}`;

export const rebuildMessage = (userId: string): QueueMessage => ({
  body: JSON.stringify({ rebuild: 'user', userId } satisfies UserRebuildMessage),
  group: userGroup(userId),
});

/**
 * The user id a feed is addressed by, checked before the first read or write: the door table's
 * key `user#<id>#feed` is only as distinct as the ids are (lambda/reminders/user-id.ts).
 */
function checkedUser(userId: string): string {
  if (!isUserId(userId)) throw new InvalidInputError(`userId must be a string of ${USER_ID_RULE}`, ['userId']);
  return userId;
}

/** The user's reminders: qualified contest id → lead time in minutes. */
async function remindersOf(deps: FeedDeps, userId: string): Promise<Map<string, number>> {
  const byContest = new Map<string, number>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_REMINDER_PAGES; page += 1) {
    const answer = await deps.reminders.listReminders({ userId, limit: 100, ...(cursor === undefined ? {} : { cursor }) });
    for (const reminder of answer.reminders) byContest.set(reminder.contestId, reminder.minutesBefore);
    cursor = answer.cursor;
    if (cursor === undefined) break;
  }
  return byContest;
}

/** The published projections of `platforms`, as one (their keys are qualified ids: they never collide); `known` as given. */
async function projectionsOf(
  deps: FeedDeps,
  platforms: Iterable<string>,
  known: Readonly<Record<string, Projection>> = {},
): Promise<Projection> {
  const sorted = [...new Set(platforms)].sort();
  const read = await Promise.all(sorted.map(async (platform) => known[platform] ?? (await deps.door.projection(platform)).projection));
  return { contests: Object.assign({}, ...read.map((projection) => projection.contests)) as Projection['contests'] };
}

/**
 * Builds the user's feed object from their reminders and the published projections of their
 * contests' platforms. A feed revoked or rotated while it was built is removed again, so a
 * revoked URL never comes back.
 */
export async function buildUserFeed(deps: FeedDeps, userId: string): Promise<'built' | 'no-feed' | 'superseded'> {
  const feed = await deps.door.userFeed(checkedUser(userId));
  if (feed === undefined) return 'no-feed';
  const reminders = await remindersOf(deps, userId);
  const projection = await projectionsOf(deps, [...reminders.keys()].map(platformOf));
  const key = FEED_OBJECTS.user(feed.hash);
  await deps.objects.put(key, renderUserFeed(projection, reminders));
  if ((await deps.door.userFeed(userId))?.hash === feed.hash) return 'built';
  await deps.objects.delete(key);
  return 'superseded';
}

/** Asks for the feeds of every user with a reminder on the contest to be rebuilt. */
async function fanOut(deps: CalendarDeps, contestId: string): Promise<number> {
  let users = 0;
  for await (const page of deps.usersOf(contestId)) {
    await deps.send(page.map(rebuildMessage));
    users += page.length;
  }
  return users;
}

/**
 * Folds a published contest event into the projection, then rebuilds the platform's public feed
 * and the one of every platform, and asks for the feeds of the contest's users. An event already applied last is finished again (a retry after
 * a crash half-way); an older or repeated one changes nothing.
 */
export async function applyContestEvent(deps: CalendarDeps, event: ContestEvent): Promise<{ outcome: 'applied' | 'stale'; users: number }> {
  // Each platform has its own projection and public feed.
  const platform = platformOf(event.detail.contestId) as Platform;
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    const { projection, version } = await deps.door.projection(platform);
    const result = apply(projection, event, Math.floor(deps.now() / 1000));
    const last = projection.contests[event.detail.contestId]?.lastEventId === event.detail.eventId;
    if (!result.changed && !last) return { outcome: 'stale', users: 0 };
    if (result.changed && !(await deps.door.saveProjection(platform, result.projection, version))) continue;
    await deps.objects.put(FEED_OBJECTS.public(platform), renderPublicFeed(platform, result.projection));
    // The feed of every platform: this projection as just saved, the others as stored (one writer at a time: CONTESTS_GROUP).
    const all = await projectionsOf(deps, PLATFORMS, { [platform]: result.projection });
    await deps.objects.put(FEED_OBJECTS.public(ALL_PLATFORMS_FEED), renderPublicFeed(ALL_PLATFORMS_FEED, all));
    return { outcome: 'applied', users: await fanOut(deps, event.detail.contestId) };
  }
  throw new Error('the published projection kept changing under this event; the queue retries it');
}

export { CONTESTS_GROUP };

/** The API's port on the feeds. */
export function createFeeds(deps: FeedDeps): Feeds {
  const publicCache = new Map<string, { body: string; etag: string; atMs: number }>();
  const readPublic = async (platform: PublicFeed, ifNoneMatch?: string) => {
    const cached = publicCache.get(platform);
    if (cached !== undefined && deps.now() - cached.atMs < PUBLIC_CACHE_MS) {
      const { body, etag } = cached;
      return ifNoneMatch === etag ? { status: 'not-modified' as const, etag } : { status: 'ok' as const, body, etag };
    }
    const read = await deps.objects.get(FEED_OBJECTS.public(platform));
    if (read.status === 'ok') publicCache.set(platform, { body: read.body, etag: read.etag, atMs: deps.now() });
    return read.status === 'ok' && ifNoneMatch === read.etag ? { status: 'not-modified' as const, etag: read.etag } : read;
  };
  return {
    read: (feed, ifNoneMatch) =>
      'public' in feed ? readPublic(feed.public, ifNoneMatch) : deps.objects.get(FEED_OBJECTS.user(tokenHash(feed.token)), ifNoneMatch),
    async issue(userId) {
      checkedUser(userId);
      const token = (deps.newToken ?? newFeedToken)();
      const createdAt = deps.now();
      const replaced = await deps.door.replaceUserFeed(userId, { hash: tokenHash(token), createdAt });
      if (replaced !== undefined) await deps.objects.delete(FEED_OBJECTS.user(replaced.hash));
      await buildUserFeed(deps, userId);
      return { token, createdAt };
    },
    async revoke(userId) {
      const removed = await deps.door.removeUserFeed(checkedUser(userId));
      if (removed !== undefined) await deps.objects.delete(FEED_OBJECTS.user(removed.hash));
      return removed !== undefined;
    },
    async status(userId) {
      const feed = await deps.door.userFeed(checkedUser(userId));
      return feed === undefined ? undefined : { createdAt: feed.createdAt };
    },
    rebuild: async (userId) => deps.send([rebuildMessage(checkedUser(userId))]),
  };
}
