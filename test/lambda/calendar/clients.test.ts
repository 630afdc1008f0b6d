/**
 * The door's environment (lambda/calendar/clients.ts): the byDue shards the write path makes rows
 * due in are the stack's setting, refused when it is not one.
 */
import { describe, expect, it } from 'vitest';
import { doorEnv } from '../../../lambda/calendar/clients.js';

const env = {
  CONTESTS_TABLE_NAME: 'contests',
  REMINDERS_TABLE_NAME: 'reminders',
  DOOR_TABLE_NAME: 'door-table',
  FEED_BUCKET_NAME: 'feeds',
  FEED_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/feeds.fifo',
};

describe('doorEnv', () => {
  it('reads DUE_SHARDS (1 when unset, as the stack defaults)', () => {
    expect(doorEnv(env).DUE_SHARDS).toBe(1);
    expect(doorEnv({ ...env, DUE_SHARDS: '4' }).DUE_SHARDS).toBe(4);
    expect(doorEnv({ ...env, DUE_SHARDS: '16' }).DUE_SHARDS).toBe(16);
  });

  it('refuses a DUE_SHARDS that is not a whole number from 1 to 16, naming it', () => {
    for (const bad of ['0', '17', '1.5', 'x', '-1']) expect(() => doorEnv({ ...env, DUE_SHARDS: bad }), bad).toThrow(/DUE_SHARDS/);
  });
});
