/**
 * The sync job of one source, on the package's wrapper like reminder delivery: each source's entry
 * (`lambda/sources/<platform>/handler.ts`) is `createSyncHandler` on its job and its source, so
 * that its bundle holds that source only and this file knows no platform. The
 * wrapper parses the event (schedule, deploy-time trigger, console), runs the work under the lease
 * (or unfenced for a dry run), writes the one summary line and the EMF metrics, and throws when a
 * scheduled run failed so that Lambda retries it. This file is the wiring: the sync's configuration
 * and parts (read once per container), its console option, and how its result is told
 * (docs/design.md, "Invocations").
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Dispatcher } from 'undici';
import { isSourceError } from '../sources/errors.js';
import { jobNames, type SourceJob } from '../sources/job.js';
import type { SourceOptions, SourceSettings } from '../sources/settings.js';
import type { Source } from '../sources/source.js';
import { ConfigError, readConfig, type Config } from './config.js';
import { DEFAULT_PLAN_SETTINGS, type PlanSettings } from '../contests/plan.js';
import { JOB_DEFAULTS } from '../contract.js';
import { JOB_ENV } from '@contest-sync/scheduled-singleton/contract';
import { SYNC_CONSOLE_OPTIONS } from './invocation.js';
import type { MigrationJob } from '../migration/job.js';
import type { Migrating, Upgrade } from './migrating.js';
import { logSummary } from './observe.js';
import { failurePhase } from './phases.js';
import {
  describe,
  scheduledSingleton,
  ScheduledRunFailedError,
  type CoordinationStore,
  type LambdaContextLike,
  type RunResult,
  type ScheduledSingletonHandler,
  type Write,
} from '@contest-sync/scheduled-singleton';
import { DynamoContestStore } from './store.js';
import { changesOf, countsOf, emptyCounts, judgedOf, type RunCounts, type RunSummary } from './summary.js';
import { progressOf, syncContests, type StorePort, type SyncDeps, type Synced } from './sync.js';

/** Thrown by scheduled runs that failed, so that Lambda retries them (its `errorType`); carries the result. */
export class SyncFailedError extends ScheduledRunFailedError {
  override readonly name = 'SyncFailedError';
  /** The failed run's result: the sync's summary. */
  declare readonly summary: RunResult & RunSummary;
}

export interface HandlerOptions {
  /** @default process.env */
  env?: Record<string, string | undefined>;
  /** @default Date.now */
  now?: () => number;
  newRunId?: () => string;
  /** @default a client with the package's time budget */
  dynamo?: DynamoDBClient;
  /** The source's undici dispatcher (tests pass a MockAgent). */
  dispatcher?: Dispatcher;
  /** Overrides of the plan settings the configuration gives (the simulated year's broken variants). */
  planSettings?: Partial<PlanSettings>;
  /** Where log and metric lines go. @default stdout */
  write?: Write;
  /** Where the lease and the fenced writes live (a unit test's in-memory store). @default DynamoDB */
  coordination?: CoordinationStore;
  /** The contest store and the source's reply (a unit test's fakes). @default DynamoDB, and the job's source through undici */
  store?: StorePort;
  fetchReply?: SyncDeps['source']['fetchReply'];
  /** The platform this job keeps, with its own reply (one job per platform is one more instance). @default Codeforces */
  source?: SyncDeps['source'];
}

/** What the work returns: what the sync did (nothing while the upgrade copies), whether it was a dry run, the upgrade's progress. */
type SyncValue = Partial<Synced> & { dryRun: boolean; migration?: Migrating['migration'] };

/** The sync's parts, and the upgrade's job where the stack names the previous release's tables. */
type SyncJobDeps = SyncDeps & { migration?: MigrationJob };

/** The handler: every result has the summary's shape (the hooks below give it). */
export type Handler = (event: unknown, context: LambdaContextLike) => Promise<RunSummary>;

/** A source's job as its entry runs it: its names and settings, and how to make its source. */
export interface SyncEntry {
  job: SourceJob;
  source: (options: SourceOptions) => Source;
  /** The upgrade from the previous release's tables (Codeforces' job: docs/runbook.md). @default none */
  upgrade?: Upgrade;
}

export function createSyncHandler(entry: SyncEntry, options: HandlerOptions = {}): Handler {
  const now = options.now ?? Date.now;
  const handler: ScheduledSingletonHandler<SyncValue> = scheduledSingleton<SyncValue, undefined, SyncJobDeps>(
    async (job) => {
      const run = { ...job, acceptHeld: job.options.acceptHeld === true };
      const { migration, sync } = entry.upgrade === undefined ? { sync: run } : await entry.upgrade.migrateFirst(run, job.config.migration);
      const synced = sync === undefined ? {} : await syncContests(sync, job.config);
      return { ...synced, dryRun: job.dryRun, ...(migration === undefined ? {} : { migration }) };
    },
    {
      configure: (env, { dynamo }) => syncDeps(entry, readConfig(env, entry.job), dynamo, options, now),
      consoleOptions: SYNC_CONSOLE_OPTIONS,
      summary: (synced, run) => ({
        counts: countsOf(synced, run.heartbeats),
        ...judgedOf(synced),
        ...(synced.dryRun && synced.judgement !== undefined ? { changes: changesOf(synced as Synced) } : {}),
        ...(synced.migration === undefined ? {} : { migration: synced.migration }),
      }),
      failure: (error, run) => ({
        reason: run.reason === 'work' ? failurePhase(error) : run.reason,
        summary: { counts: failedCounts(error, run.heartbeats) },
      }),
      resultDefaults: () => ({ counts: emptyCounts() }),
      summaryLine: (result, log) => logSummary({ ...result, platform: entry.job.platform }, log),
      failedError: thrownFor,
      record: ({ value, error, heartbeats }) => ({
        dryRun: false,
        counts: value !== undefined ? countsOf(value, heartbeats) : failedCounts(error, heartbeats),
        ...(value !== undefined ? judgedOf(value) : {}),
        ...(error !== undefined ? { reason: failurePhase(error), error: describe(error) } : {}),
      }),
      env: { ...JOB_DEFAULTS, ...jobDefaults(entry.job), ...nonEmpty(options.env ?? process.env) },
      now,
      ...(options.dynamo !== undefined ? { dynamo: options.dynamo } : {}),
      ...(options.newRunId !== undefined ? { newRunId: options.newRunId } : {}),
      ...(options.write !== undefined ? { write: options.write } : {}),
      ...(options.coordination !== undefined ? { coordination: options.coordination } : {}),
    },
  );
  return handler as unknown as Handler;
}

/** A failed run's counts: what it did before failing, and the requests a failed fetch made. */
function failedCounts(error: unknown, heartbeats: number): RunCounts {
  const counts = countsOf(progressOf(error), heartbeats);
  return isSourceError(error) ? { ...counts, sourceAttempts: error.attempts } : counts;
}

/**
 * What a failed invocation throws: a bad event or configuration as it is (nothing ran), a failed
 * scheduled run as SyncFailedError carrying its result (Lambda retries it).
 */
function thrownFor(result: RunResult, error: unknown): Error {
  if (result.reason === 'event' && error instanceof Error) return error;
  if (result.reason === 'config') {
    if (error instanceof ConfigError) return error;
    return new ConfigError(`invalid configuration: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return new SyncFailedError(result, `sync ${result.runId} failed in phase ${result.reason ?? 'unknown'}: ${result.error ?? 'no detail'}`);
}

/** The sync's parts, built once per container on the wrapper's DynamoDB client. */
function syncDeps(entry: SyncEntry, config: Config, dynamo: DynamoDBClient, options: HandlerOptions, now: () => number): SyncJobDeps {
  const doc = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  const migration = entry.upgrade?.migrationOf(config, doc, now);
  const source = entry.source({
    now,
    ...(config.baseUrl !== undefined ? { baseUrl: config.baseUrl } : {}),
    ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
  });
  return {
    ...(migration === undefined ? {} : { migration }),
    store: options.store ?? new DynamoContestStore(doc, { contests: config.tables.contests, reminders: config.tables.reminders }),
    source: options.source ?? { platform: source.platform, fetchReply: options.fetchReply ?? ((call) => source.fetchReply(call)) },
    now,
    settings: planSettingsOf(config, entry.job.settings, options),
    publishing: config.outbox !== undefined,
  };
}

/** The job environment the stack sets for this source (its lease, ledger and service), for a run without it. */
function jobDefaults(job: SourceJob): Record<string, string> {
  const names = jobNames(job);
  return { [JOB_ENV.leaseKey]: names.leaseKey, [JOB_ENV.runRecordPrefix]: names.runRecordPrefix, [JOB_ENV.serviceName]: names.service };
}

/** The contest model's settings: the configuration's, the platform's schedule, then the options' overrides. */
export function planSettingsOf(config: Config, settings: SourceSettings, options: Pick<HandlerOptions, 'planSettings'> = {}): PlanSettings {
  const { moves, suspectMovesSeconds, suspectMoveHeldSeconds } = settings.schedule;
  return {
    ...DEFAULT_PLAN_SETTINGS,
    moves,
    suspectMovesSeconds,
    suspectMoveHeldSeconds,
    finishedRetentionSeconds: config.finishedRetentionDays * 24 * 3600,
    missingSyncsBeforeDelete: config.missingSyncsBeforeDelete,
    acceptHeldAfterReplies: config.acceptHeldAfterReplies,
    dueShards: config.dueShards,
    // No current evidence: reminders due before the next sync could see a change are paused.
    doubtSeconds: config.scheduleRateMinutes * 60 + 600,
    ...options.planSettings,
  };
}

/** An empty variable is an unset one (as the configuration reads it). */
function nonEmpty(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
}
