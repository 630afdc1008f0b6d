import { describe, expect, it } from 'vitest';
import { CODEFORCES_JOB } from '../../../lambda/sources/codeforces/job.js';
import { ATCODER_JOB } from '../../../lambda/sources/atcoder/job.js';
import { ConfigError, readConfig } from '../../../lambda/sync/config.js';

const env = {
  CONTESTS_TABLE_NAME: 'contests-table',
  REMINDERS_TABLE_NAME: 'reminders-table',
  COORDINATION_TABLE_NAME: 'coordination-table',
};

describe('readConfig', () => {
  it('applies the documented defaults', () => {
    expect(readConfig(env, CODEFORCES_JOB)).toEqual({
      tables: { contests: 'contests-table', reminders: 'reminders-table', coordination: 'coordination-table' },
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
    expect(readConfig({ ...env, ...legacy }, CODEFORCES_JOB).legacy).toEqual({ contests: 'old-contests', reminders: 'old-reminders' });
    expect(readConfig(env, CODEFORCES_JOB).legacy).toBeUndefined();
    expect(() => readConfig({ ...env, LEGACY_CONTESTS_TABLE_NAME: 'old-contests' }, CODEFORCES_JOB)).toThrow(/set together or not at all/);
    expect(() => readConfig({ ...env, ...legacy, LEGACY_REMINDERS_TABLE_NAME: 'x' }, CODEFORCES_JOB)).toThrow(
      /LEGACY_REMINDERS_TABLE_NAME/,
    );
  });

  it("reads the source's own origin variable, and its settings' defaults", () => {
    // Unset, the source's real origin (its factory's default); another source's variable is not read.
    expect(readConfig(env, CODEFORCES_JOB).baseUrl).toBeUndefined();
    const atcoder = readConfig(
      { ...env, ATCODER_BASE_URL: 'http://127.0.0.1:9/atcoder/', CODEFORCES_API_URL: 'http://127.0.0.1:9/api' },
      ATCODER_JOB,
    );
    expect(atcoder.baseUrl).toBe('http://127.0.0.1:9/atcoder');
    expect(atcoder.scheduleRateMinutes).toBe(ATCODER_JOB.settings.pollPeriodSeconds / 60);
    expect(atcoder.acceptHeldAfterReplies).toBe(ATCODER_JOB.settings.schedule.acceptMoveAfterReplies);
    expect(() => readConfig({ ...env, ATCODER_BASE_URL: 'not a url' }, ATCODER_JOB)).toThrow(/ATCODER_BASE_URL must be an http\(s\) URL/);
  });

  it('reads DUE_SHARDS, the byDue partitions the stack runs (1 to 16)', () => {
    expect(readConfig({ ...env, DUE_SHARDS: '4' }, CODEFORCES_JOB).dueShards).toBe(4);
    expect(() => readConfig({ ...env, DUE_SHARDS: '0' }, CODEFORCES_JOB)).toThrow(/DUE_SHARDS must be >= 1/);
    expect(() => readConfig({ ...env, DUE_SHARDS: '17' }, CODEFORCES_JOB)).toThrow(/DUE_SHARDS must be <= 16/);
    expect(() => readConfig({ ...env, DUE_SHARDS: '1.5' }, CODEFORCES_JOB)).toThrow(/DUE_SHARDS must be a whole number/);
  });

  it('reads overrides and trims a trailing slash from the API URL', () => {
    const config = readConfig({ ...env, CODEFORCES_API_URL: 'http://127.0.0.1:9999/api/', LEASE_DURATION_SECONDS: '2' }, CODEFORCES_JOB);
    expect(config.baseUrl).toBe('http://127.0.0.1:9999/api');
    expect(config.leaseDurationSeconds).toBe(2);
  });

  it('allows keeping finished contests for 0 days, as the stack does', () => {
    expect(readConfig({ ...env, FINISHED_RETENTION_DAYS: '0' }, CODEFORCES_JOB).finishedRetentionDays).toBe(0);
  });

  it('names every missing or bad setting', () => {
    expect(() => readConfig({ LEASE_DURATION_SECONDS: 'soon' }, CODEFORCES_JOB)).toThrow(ConfigError);
    expect(() => readConfig({ ...env, LEASE_DURATION_SECONDS: 'soon', CODEFORCES_API_URL: 'not a url' }, CODEFORCES_JOB)).toThrow(
      /LEASE_DURATION_SECONDS must be a number.*|CODEFORCES_API_URL must be an http\(s\) URL/,
    );
    expect(() => readConfig({ REMINDERS_TABLE_NAME: 'r' }, CODEFORCES_JOB)).toThrow(/CONTESTS_TABLE_NAME/);
  });
});
