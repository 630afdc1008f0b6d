/**
 * Names the calendar shares with the stack and the tests: where feeds and the published
 * projection are kept, and the messages of the feed queue. No imports: the CDK app loads it.
 * docs/api.md, "Calendar".
 */

/** The builder's environment (the API function reads the same names). */
export const CALENDAR_ENV = {
  doorTable: 'DOOR_TABLE_NAME',
  feedBucket: 'FEED_BUCKET_NAME',
  feedQueueUrl: 'FEED_QUEUE_URL',
  remindersTable: 'REMINDERS_TABLE_NAME',
  contestsTable: 'CONTESTS_TABLE_NAME',
  /** The stack's byDue shards: the write path makes a row due in its bucket's shard (docs/delivery.md). */
  dueShards: 'DUE_SHARDS',
} as const;

/** The door table's keys (partition key `pk`, String). */
export const DOOR_KEYS = {
  /** The user's current feed token: `{ hash, createdAt }` (the token itself is never stored). */
  userFeed: (userId: string) => `user#${userId}#feed`,
  /** What the product published of a platform's contests: the calendar's source. */
  published: (platform: string) => `published#${platform}`,
} as const;

/** The public feed of every platform's contests, beside each platform's own (no platform has this name). */
export const ALL_PLATFORMS_FEED = 'all';

/** The bucket's keys: public feeds are named by platform (or ALL_PLATFORMS_FEED), a user's by the SHA-256 of its token. */
export const FEED_OBJECTS = {
  public: (platform: string) => `feeds/public/${platform}.ics`,
  user: (tokenHash: string) => `feeds/users/${tokenHash}.ics`,
} as const;

/** The message asking for one user's feed to be built again (the API sends it when reminders change). */
export interface UserRebuildMessage {
  rebuild: 'user';
  userId: string;
}

/** The FIFO group of the contest events: one projection, one writer at a time, in order. */
export const CONTESTS_GROUP = 'contests';

/** How long a published contest stays in the feeds after its end (a cancelled one after its start). */
export const KEEP_AFTER_END_SECONDS = 7 * 86_400;
/**
 * Most bytes one platform's projection holds, measured as its JSON in UTF-8 (never less than what
 * DynamoDB counts of the same map): it is one DynamoDB item, which may not exceed 400 KB. About
 * 1,000 contests with the names Codeforces gives; 160 at the longest names the sync publishes
 * (512 characters of 3 bytes each).
 */
export const MAX_PROJECTION_BYTES = 300_000;
