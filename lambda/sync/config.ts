/** The function's configuration, read once per container from the environment the stack sets. */
import * as z from 'zod';
import { DEFAULTS, ENV, MAX_DUE_SHARDS } from '../contract.js';
import { outboxSettings, type OutboxSettings } from '@contest-sync/scheduled-singleton';

export interface Config {
  tables: { contests: string; reminders: string; coordination: string };
  codeforcesApiUrl: string;
  leaseDurationSeconds: number;
  finishedRetentionDays: number;
  scheduleRateMinutes: number;
  missingSyncsBeforeDelete: number;
  acceptHeldAfterReplies: number;
  /** Partitions of the `byDue` index (DUE_SHARDS, 1 to MAX_DUE_SHARDS): a due row's `dueShard` is its bucket mod dueShards (lambda/reminders/table.ts). */
  dueShards: number;
  /** The previous release's tables the upgrade copies from (both or neither): absent, no migration gate. */
  legacy?: { contests: string; reminders: string };
  /** Where the contest events go (set by the stack's `outbox`: docs/events.md); absent, none are published. */
  outbox?: OutboxSettings;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const tableName = z.string({ error: 'is not set' }).regex(/^[a-zA-Z0-9_.-]{3,255}$/, 'is not a DynamoDB table name');
const positive = (fallback: number) => z.coerce.number({ error: 'must be a number' }).positive('must be > 0').default(fallback);
/** A number of consecutive syncs (the grace period, the replies that accept held change): 1 to 48. */
const syncCount = (fallback: number) =>
  z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be >= 1')
    .max(48, 'must be <= 48')
    .default(fallback);

const schema = z.object({
  [ENV.contestsTable]: tableName,
  [ENV.remindersTable]: tableName,
  [ENV.coordinationTable]: tableName,
  [ENV.codeforcesApiUrl]: z.url({ error: 'must be an http(s) URL' }).default(DEFAULTS.codeforcesApiUrl),
  [ENV.leaseDurationSeconds]: positive(DEFAULTS.leaseDurationSeconds),
  [ENV.finishedRetentionDays]: z.coerce
    .number({ error: 'must be a number' })
    .nonnegative('must be >= 0')
    .default(DEFAULTS.finishedRetentionDays),
  [ENV.scheduleRateMinutes]: z.coerce.number({ error: 'must be a number' }).int().positive().default(DEFAULTS.scheduleRateMinutes),
  [ENV.missingSyncsBeforeDelete]: syncCount(DEFAULTS.missingSyncsBeforeDelete),
  [ENV.acceptHeldAfterReplies]: syncCount(DEFAULTS.acceptHeldAfterReplies),
  [ENV.dueShards]: z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be >= 1')
    .max(MAX_DUE_SHARDS, `must be <= ${MAX_DUE_SHARDS}`)
    .default(DEFAULTS.dueShards),
  [ENV.legacyContestsTable]: tableName.optional(),
  [ENV.legacyRemindersTable]: tableName.optional(),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(
    Object.values(ENV).flatMap((name) => (env[name] === undefined || env[name] === '' ? [] : [[name, env[name]]])),
  );
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const c = parsed.data;
  const legacyContests = c[ENV.legacyContestsTable];
  const legacyReminders = c[ENV.legacyRemindersTable];
  if ((legacyContests === undefined) !== (legacyReminders === undefined))
    throw new ConfigError(
      `invalid configuration: ${ENV.legacyContestsTable} and ${ENV.legacyRemindersTable} are set together or not at all`,
    );
  let outbox: OutboxSettings | undefined;
  try {
    outbox = outboxSettings(env);
  } catch (error) {
    throw new ConfigError(`invalid configuration: ${(error as Error).message}`);
  }
  return {
    ...(outbox !== undefined ? { outbox } : {}),
    ...(legacyContests !== undefined && legacyReminders !== undefined
      ? { legacy: { contests: legacyContests, reminders: legacyReminders } }
      : {}),
    tables: { contests: c[ENV.contestsTable], reminders: c[ENV.remindersTable], coordination: c[ENV.coordinationTable] },
    codeforcesApiUrl: c[ENV.codeforcesApiUrl].replace(/\/+$/, ''),
    leaseDurationSeconds: c[ENV.leaseDurationSeconds],
    finishedRetentionDays: c[ENV.finishedRetentionDays],
    scheduleRateMinutes: c[ENV.scheduleRateMinutes],
    missingSyncsBeforeDelete: c[ENV.missingSyncsBeforeDelete],
    acceptHeldAfterReplies: c[ENV.acceptHeldAfterReplies],
    dueShards: c[ENV.dueShards],
  };
}
