/**
 * In-memory stand-ins of the calendar's stores (lambda/calendar/store.ts) for its unit tests: a
 * bucket whose ETag is the MD5 of the body (as S3's is for a single-part put), and a door table
 * with the projection's version check.
 */
import { createHash } from 'node:crypto';
import type { ReminderView } from '../../../lambda/api/ports.js';
import type { CalendarDeps, QueueMessage } from '../../../lambda/calendar/feeds.js';
import { projectionOf, type Projection } from '../../../lambda/calendar/projection.js';
import type { DoorTable, FeedObjects, UserFeed } from '../../../lambda/calendar/store.js';

export function memoryObjects(): FeedObjects & { objects: Map<string, string>; reads: number } {
  const objects = new Map<string, string>();
  const etag = (body: string) => `"${createHash('md5').update(body).digest('hex')}"`;
  const store = {
    objects,
    reads: 0,
    async get(key: string, ifNoneMatch?: string) {
      store.reads += 1;
      const body = objects.get(key);
      if (body === undefined) return { status: 'missing' as const };
      return ifNoneMatch === etag(body)
        ? { status: 'not-modified' as const, etag: etag(body) }
        : { status: 'ok' as const, body, etag: etag(body) };
    },
    async put(key: string, body: string) {
      objects.set(key, body);
    },
    async delete(key: string) {
      objects.delete(key);
    },
  };
  return store;
}

export function memoryDoor(): DoorTable & {
  feeds: Map<string, UserFeed>;
  /** Each platform's projection as stored (read as the door table's store reads it: projectionOf). */
  published: Map<string, { projection: Projection; version: number }>;
  reads: number;
} {
  const door = {
    feeds: new Map<string, UserFeed>(),
    published: new Map<string, { projection: Projection; version: number }>(),
    reads: 0,
    async userFeed(userId: string) {
      door.reads += 1;
      return door.feeds.get(userId);
    },
    async replaceUserFeed(userId: string, feed: UserFeed) {
      const old = door.feeds.get(userId);
      door.feeds.set(userId, feed);
      return old;
    },
    async removeUserFeed(userId: string) {
      const old = door.feeds.get(userId);
      door.feeds.delete(userId);
      return old;
    },
    async projection(platform: string) {
      door.reads += 1;
      const stored = structuredClone(door.published.get(platform) ?? { projection: { contests: {} }, version: 0 });
      return { projection: projectionOf(stored.projection.contests), version: stored.version };
    },
    async saveProjection(platform: string, projection: Projection, version: number) {
      if (version !== (door.published.get(platform)?.version ?? 0)) return false;
      door.published.set(platform, { projection: structuredClone(projection), version: version + 1 });
      return true;
    },
  };
  return door;
}

export interface World {
  deps: CalendarDeps;
  objects: ReturnType<typeof memoryObjects>;
  door: ReturnType<typeof memoryDoor>;
  sent: QueueMessage[];
  reminders: Map<string, ReminderView[]>;
  clock: { ms: number };
}

export function calendarWorld(startMs: number): World {
  const objects = memoryObjects();
  const door = memoryDoor();
  const sent: QueueMessage[] = [];
  const reminders = new Map<string, ReminderView[]>();
  const clock = { ms: startMs };
  let tokens = 0;
  const deps: CalendarDeps = {
    objects,
    door,
    reminders: { listReminders: async ({ userId }) => ({ reminders: reminders.get(userId) ?? [] }) },
    send: async (messages) => {
      sent.push(...messages);
    },
    async *usersOf(contestId) {
      const users = [...reminders].filter(([, list]) => list.some((r) => r.contestId === contestId)).map(([user]) => user);
      if (users.length > 0) yield users;
    },
    now: () => clock.ms,
    newToken: () => {
      tokens += 1;
      return `${String(tokens).padStart(43, 'k')}`;
    },
  };
  return { deps, objects, door, sent, reminders, clock };
}
