/** The function's configuration, read once per container from the environment the stack sets. */
import * as z from 'zod';
import { DEFAULTS, ENV, MAX_DUE_SHARDS } from '../contract.js';
import { outboxSettings, type OutboxSettings } from '@contest-sync/scheduled-singleton';
import { pollMinutes, type SourceJob } from '../sources/job.js';

export interface Config {
  tables: { contests: string; reminders: string; coordination: string };
  /** The platform's origin, from the source's own variable (`SourceJob.baseUrlVariable`); absent, the real one. */
  baseUrl?: string;
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
const syncCountOf = () =>
  z.coerce.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be >= 1').max(48, 'must be <= 48');
const syncCount = (fallback: number) => syncCountOf().default(fallback);

/** The variables every source's job reads; the source's origin is read under `baseUrl`, its own variable's value. */
const schema = z.object({
  [ENV.contestsTable]: tableName,
  [ENV.remindersTable]: tableName,
  [ENV.coordinationTable]: tableName,
  baseUrl: z.url({ error: 'must be an http(s) URL' }).optional(),
  [ENV.leaseDurationSeconds]: positive(DEFAULTS.leaseDurationSeconds),
  [ENV.finishedRetentionDays]: z.coerce
    .number({ error: 'must be a number' })
    .nonnegative('must be >= 0')
    .default(DEFAULTS.finishedRetentionDays),
  [ENV.scheduleRateMinutes]: z.coerce.number({ error: 'must be a number' }).int().positive().optional(),
  [ENV.missingSyncsBeforeDelete]: syncCount(DEFAULTS.missingSyncsBeforeDelete),
  // Unset, the source's settings say (SourceSettings.schedule.acceptMoveAfterReplies).
  [ENV.acceptHeldAfterReplies]: syncCountOf().optional(),
  [ENV.dueShards]: z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be >= 1')
    .max(MAX_DUE_SHARDS, `must be <= ${MAX_DUE_SHARDS}`)
    .default(DEFAULTS.dueShards),
  [ENV.legacyContestsTable]: tableName.optional(),
  [ENV.legacyRemindersTable]: tableName.optional(),
});

export function readConfig(env: NodeJS.ProcessEnv, job: Pick<SourceJob, 'baseUrlVariable' | 'settings'>): Config {
  const named = (name: string) => (name === 'baseUrl' ? job.baseUrlVariable : name);
  const read: [string, string][] = [...Object.values(ENV).map((name): [string, string] => [name, name]), ['baseUrl', job.baseUrlVariable]];
  const present = Object.fromEntries(
    read.flatMap(([key, name]) => (env[name] === undefined || env[name] === '' ? [] : [[key, env[name]]])),
  );
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${named(issue.path.join('.'))} ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const c = parsed.data;
  const legacyContests = c[ENV.legacyContestsTable];
  const legacyReminders = c[ENV.legacyRemindersTable];
  if ((legacyContests === undefined) !== (legacyReminders === undefined))
    throw new ConfigError(
      `invalid configuration: ${ENV.legacyContestsTable} and ${ENV.legacyRemindersTable} are set together or not at all`,
    );
  const { baseUrl } = c;
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
    ...(baseUrl !== undefined ? { baseUrl: baseUrl.replace(/\/+$/, '') } : {}),
    leaseDurationSeconds: c[ENV.leaseDurationSeconds],
    finishedRetentionDays: c[ENV.finishedRetentionDays],
    scheduleRateMinutes: c[ENV.scheduleRateMinutes] ?? pollMinutes(job),
    missingSyncsBeforeDelete: c[ENV.missingSyncsBeforeDelete],
    acceptHeldAfterReplies: c[ENV.acceptHeldAfterReplies] ?? job.settings.schedule.acceptMoveAfterReplies,
    dueShards: c[ENV.dueShards],
  };
}
