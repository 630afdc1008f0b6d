/** The delivery function's settings (lambda/delivery/handler.ts readDeliveryConfig): its shard and the stack's DUE_SHARDS. */
import { describe, expect, it } from 'vitest';
import { DeliveryConfigError, readDeliveryConfig } from '../../../lambda/delivery/handler.js';

const env = { CONTESTS_TABLE_NAME: 'contests', REMINDERS_TABLE_NAME: 'reminders', OUTBOX_EVENT_SOURCE: 'contest-sync.reminders' };

describe('readDeliveryConfig', () => {
  it('defaults to shard 0 of 1', () => {
    expect(readDeliveryConfig(env)).toEqual({
      tables: { contests: 'contests', reminders: 'reminders' },
      shard: 0,
      dueShards: 1,
      eventSource: 'contest-sync.reminders',
    });
  });

  it('reads its shard and DUE_SHARDS (1 to 16), the shard below the setting', () => {
    expect(readDeliveryConfig({ ...env, DUE_SHARD: '3', DUE_SHARDS: '4' })).toMatchObject({ shard: 3, dueShards: 4 });
    expect(() => readDeliveryConfig({ ...env, DUE_SHARD: '4', DUE_SHARDS: '4' })).toThrow(/DUE_SHARD 4 must be below DUE_SHARDS \(4\)/);
    expect(() => readDeliveryConfig({ ...env, DUE_SHARD: '1' })).toThrow(DeliveryConfigError);
    expect(() => readDeliveryConfig({ ...env, DUE_SHARDS: '17' })).toThrow(/DUE_SHARDS must be <= 16/);
    expect(() => readDeliveryConfig({ ...env, DUE_SHARDS: '0' })).toThrow(/DUE_SHARDS must be >= 1/);
    expect(() => readDeliveryConfig({ ...env, DUE_SHARD: '16', DUE_SHARDS: '16' })).toThrow(/DUE_SHARD must be <= 15/);
  });
});
