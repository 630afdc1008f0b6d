/** The contest model's settings a source's job judges with: its configuration and its platform's schedule. */
import { describe, expect, it } from 'vitest';
import { CODECHEF_JOB } from '../../../lambda/sources/codechef/job.js';
import { CODEFORCES_JOB } from '../../../lambda/sources/codeforces/job.js';
import { LEETCODE_JOB } from '../../../lambda/sources/leetcode/job.js';
import type { SourceJob } from '../../../lambda/sources/job.js';
import { readConfig } from '../../../lambda/sync/config.js';
import { planSettingsOf } from '../../../lambda/sync/handler.js';

const env = {
  CONTESTS_TABLE_NAME: 'contests-table',
  REMINDERS_TABLE_NAME: 'reminders-table',
  COORDINATION_TABLE_NAME: 'coordination-table',
};
const settingsOf = (job: SourceJob, extra: Record<string, string> = {}) =>
  planSettingsOf(readConfig({ ...env, ...extra }, job), job.settings);

describe('planSettingsOf', () => {
  it("hands the judge the platform's schedule from the job's settings", () => {
    expect(settingsOf(CODECHEF_JOB)).toMatchObject({
      moves: true,
      suspectMovesSeconds: [-12 * 3600, 12 * 3600],
      suspectMoveHeldSeconds: 8 * 24 * 3600,
      acceptHeldAfterReplies: 3,
    });
    expect(settingsOf(LEETCODE_JOB)).toMatchObject({ moves: false, suspectMovesSeconds: [], acceptHeldAfterReplies: 6 });
    expect(settingsOf(CODEFORCES_JOB)).toMatchObject({ moves: true, suspectMovesSeconds: [], suspectMoveHeldSeconds: 0 });
  });

  it("keeps the configuration's held-change replies and doubt window, and the options' overrides last", () => {
    const config = readConfig({ ...env, ACCEPT_HELD_AFTER_REPLIES: '2', SCHEDULE_RATE_MINUTES: '30' }, LEETCODE_JOB);
    expect(planSettingsOf(config, LEETCODE_JOB.settings)).toMatchObject({ acceptHeldAfterReplies: 2, doubtSeconds: 30 * 60 + 600 });
    expect(planSettingsOf(config, LEETCODE_JOB.settings, { planSettings: { moves: true } }).moves).toBe(true);
  });
});
