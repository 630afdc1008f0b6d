/**
 * The sync job during the upgrade to qualified keys (docs/runbook.md, "Upgrading to qualified
 * keys"): where the stack names the previous release's tables, a run first asks whether the copy
 * is done (one marker read per container until it is, none after). While it is not, the run copies
 * under its own lease, every write fenced, instead of syncing; the run that finishes the copy goes
 * on to sync with what earlier syncs handed over, under qualified ids. A dry run copies nothing.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { realSleep } from '@contest-sync/scheduled-singleton';
import { MAX_DUE_SHARDS } from '../contract.js';
import { deliveryLeaseKey } from '../delivery/schema.js';
import { migrationJob, type MigrationJob } from '../migration/job.js';
import { qualifiedHandoff, type MigrationProgress } from '../migration/migrate.js';
import { dynamoMigrationStore, dynamoShardLeases } from '../migration/store.js';
import type { Config } from './config.js';
import type { SyncJob } from './sync.js';

/** The migration job of a container, when the configuration names the previous release's tables. */
export function migrationOf(config: Config, doc: DynamoDBDocumentClient, now: () => number): MigrationJob | undefined {
  if (config.legacy === undefined) return undefined;
  const tables = {
    legacyContests: config.legacy.contests,
    legacyReminders: config.legacy.reminders,
    contests: config.tables.contests,
    reminders: config.tables.reminders,
    coordination: config.tables.coordination,
  };
  // Every shard a delivery job of either release may hold (a deploy may lower DUE_SHARDS too).
  const keys = Array.from({ length: MAX_DUE_SHARDS }, (_, shard) => deliveryLeaseKey(shard));
  return migrationJob({
    store: dynamoMigrationStore(doc, tables),
    shardLeases: dynamoShardLeases({ doc, table: tables.coordination, keys, now, sleep: realSleep }),
    tables,
    dueShards: config.dueShards,
    now,
    sleep: realSleep,
  });
}

/** What the upgrade leaves the run: the migration's progress (if it worked), and the job the sync runs with (none: it does not sync). */
export interface Migrating {
  migration?: MigrationProgress | { state: 'copying'; dryRun: true };
  sync?: SyncJob;
}

export async function migrateFirst(job: SyncJob, migration: MigrationJob | undefined): Promise<Migrating> {
  if (migration === undefined) return { sync: job };
  if (job.dryRun) return (await migration.gate.done(job.signal)) ? { sync: job } : { migration: { state: 'copying', dryRun: true } };
  const progress = await migration.run(job);
  if (progress === undefined) return { sync: job };
  if (progress.state !== 'done') return { migration: progress };
  return { migration: progress, sync: { ...job, handoff: new Set(qualifiedHandoff(job.handoff)) } };
}

/**
 * The upgrade from the previous release's tables, as a sync entry carries it: Codeforces' job only,
 * since those tables held Codeforces alone; the other sources' bundles hold none of it.
 */
export interface Upgrade {
  migrationOf: typeof migrationOf;
  migrateFirst: typeof migrateFirst;
}

export const UPGRADE: Upgrade = { migrationOf, migrateFirst };
