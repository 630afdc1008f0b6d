/**
 * Test doubles of the API's ports (lambda/api/ports.ts): an in-memory write path that keeps the
 * contract's promises the routes rely on (a set with the same lead time changes nothing; each
 * refusal is an error with the contract's `code`), a contest reader over a list, and feeds that
 * record what the routes asked of them.
 */
import type { ContestPageRequest, ContestRecord, Feeds, FeedRead, ReminderView, ReminderWritePath } from '../../../lambda/api/ports.js';

export class CodedError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly fields?: string[],
  ) {
    super(message);
  }
}

export interface Calls {
  writes: { op: 'set' | 'cancel'; contestId: string; userId: string; minutesBefore?: number }[];
  rebuilds: string[];
}

export function memoryWritePath(
  contests: ContestRecord[],
  now: () => number,
  calls: Calls,
): ReminderWritePath & { rows: Map<string, ReminderView & { userId: string }> } {
  const rows = new Map<string, ReminderView & { userId: string }>();
  const key = (contestId: string, userId: string) => `${contestId}/${userId}`;
  return {
    rows,
    async setReminder({ contestId, userId, minutesBefore }) {
      const contest = contests.find((c) => c.contestId === contestId);
      if (contest === undefined) throw new CodedError('contest-not-found', `contest ${contestId} not found`);
      if (now() / 1000 >= contest.startTimeSeconds) throw new CodedError('contest-started', `contest ${contestId} has already started`);
      const stored = rows.get(key(contestId, userId));
      if (stored?.minutesBefore === minutesBefore) return { reminder: stored, changed: false };
      const row = {
        contestId,
        userId,
        minutesBefore,
        remindAt: contest.startTimeSeconds - 60 * minutesBefore,
        state: 'scheduled' as const,
      };
      rows.set(key(contestId, userId), row);
      calls.writes.push({ op: 'set', contestId, userId, minutesBefore });
      return { reminder: row, changed: true };
    },
    async cancelReminder({ contestId, userId }) {
      const cancelled = rows.delete(key(contestId, userId));
      if (cancelled) calls.writes.push({ op: 'cancel', contestId, userId });
      return { cancelled };
    },
    async listReminders({ userId, limit = 50, cursor }) {
      const mine = [...rows.values()]
        .filter((r) => r.userId === userId)
        .sort((a, b) => (a.contestId < b.contestId ? -1 : a.contestId > b.contestId ? 1 : 0));
      const from = cursor === undefined ? 0 : Number(Buffer.from(cursor, 'base64url').toString());
      const page = mine.slice(from, from + limit);
      const next = from + limit < mine.length ? Buffer.from(String(from + limit)).toString('base64url') : undefined;
      return { reminders: page, ...(next === undefined ? {} : { cursor: next }) };
    },
  };
}

export function listReader(contests: ContestRecord[], requests: ContestPageRequest[] = []) {
  return {
    requests,
    async page(request: ContestPageRequest) {
      requests.push(request);
      return { contests: contests.slice(0, request.limit), ...(contests.length > request.limit ? { cursor: 'next' } : {}) };
    },
  };
}

export function recordingFeeds(
  calls: Calls,
  stored: Map<string, { body: string; etag: string }> = new Map(),
): Feeds & { tokens: Map<string, string> } {
  const tokens = new Map<string, string>();
  let counter = 0;
  const read = (name: string, ifNoneMatch?: string): FeedRead => {
    const object = stored.get(name);
    if (object === undefined) return { status: 'missing' };
    return ifNoneMatch === object.etag ? { status: 'not-modified', etag: object.etag } : { status: 'ok', ...object };
  };
  return {
    tokens,
    async read(feed, ifNoneMatch) {
      if ('public' in feed) return read(`public/${feed.public}`, ifNoneMatch);
      const owner = [...tokens].find(([, token]) => token === feed.token)?.[0];
      return owner === undefined ? { status: 'missing' } : read(`user/${owner}`, ifNoneMatch);
    },
    async issue(userId) {
      counter += 1;
      const token = String(counter).padStart(43, 'T');
      tokens.set(userId, token);
      stored.set(`user/${userId}`, { body: `BEGIN:VCALENDAR\r\nX-USER:${counter}\r\nEND:VCALENDAR\r\n`, etag: `"u${counter}"` });
      return { token, createdAt: 1_796_126_400_000 };
    },
    async revoke(userId) {
      stored.delete(`user/${userId}`);
      return tokens.delete(userId);
    },
    async status(userId) {
      return tokens.has(userId) ? { createdAt: 1_796_126_400_000 } : undefined;
    },
    async rebuild(userId) {
      calls.rebuilds.push(userId);
    },
  };
}
