import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig } from '../../../lambda/sync/config.js';

const env = {
  CONTESTS_TABLE_NAME: 'contests-table',
  REMINDERS_TABLE_NAME: 'reminders-table',
  COORDINATION_TABLE_NAME: 'coordination-table',
};

describe('readConfig', () => {
  it('applies the documented defaults', () => {
    expect(readConfig(env)).toEqual({
      tables: { contests: 'contests-table', reminders: 'reminders-table', coordination: 'coordination-table' },
      codeforcesApiUrl: 'https://codeforces.com/api',
      leaseDurationSeconds: 30,
      finishedRetentionDays: 7,
      scheduleRateMinutes: 60,
      missingSyncsBeforeDelete: 3,
      acceptHeldAfterReplies: 3,
      dueShards: 1,
    });
  });

  it("reads the previous release's tables of the upgrade, both or neither", () => {
    const legacy = { LEGACY_CONTESTS_TABLE_NAME: 'old-contests', LEGACY_REMINDERS_TABLE_NAME: 'old-reminders' };
    expect(readConfig({ ...env, ...legacy }).legacy).toEqual({ contests: 'old-contests', reminders: 'old-reminders' });
    expect(readConfig(env).legacy).toBeUndefined();
    expect(() => readConfig({ ...env, LEGACY_CONTESTS_TABLE_NAME: 'old-contests' })).toThrow(/set together or not at all/);
    expect(() => readConfig({ ...env, ...legacy, LEGACY_REMINDERS_TABLE_NAME: 'x' })).toThrow(/LEGACY_REMINDERS_TABLE_NAME/);
  });

  it('reads DUE_SHARDS, the byDue partitions the stack runs (1 to 16)', () => {
    expect(readConfig({ ...env, DUE_SHARDS: '4' }).dueShards).toBe(4);
    expect(() => readConfig({ ...env, DUE_SHARDS: '0' })).toThrow(/DUE_SHARDS must be >= 1/);
    expect(() => readConfig({ ...env, DUE_SHARDS: '17' })).toThrow(/DUE_SHARDS must be <= 16/);
    expect(() => readConfig({ ...env, DUE_SHARDS: '1.5' })).toThrow(/DUE_SHARDS must be a whole number/);
  });

  it('reads overrides and trims a trailing slash from the API URL', () => {
    const config = readConfig({ ...env, CODEFORCES_API_URL: 'http://127.0.0.1:9999/api/', LEASE_DURATION_SECONDS: '2' });
    expect(config.codeforcesApiUrl).toBe('http://127.0.0.1:9999/api');
    expect(config.leaseDurationSeconds).toBe(2);
  });

  it('allows keeping finished contests for 0 days, as the stack does', () => {
    expect(readConfig({ ...env, FINISHED_RETENTION_DAYS: '0' }).finishedRetentionDays).toBe(0);
  });

  it('names every missing or bad setting', () => {
    expect(() => readConfig({ LEASE_DURATION_SECONDS: 'soon' })).toThrow(ConfigError);
    expect(() => readConfig({ ...env, LEASE_DURATION_SECONDS: 'soon', CODEFORCES_API_URL: 'not a url' })).toThrow(
      /LEASE_DURATION_SECONDS must be a number.*|CODEFORCES_API_URL must be an http\(s\) URL/,
    );
    expect(() => readConfig({ REMINDERS_TABLE_NAME: 'r' })).toThrow(/CONTESTS_TABLE_NAME/);
  });
});
