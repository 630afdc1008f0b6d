/**
 * `npm run migrate -- back --apply` (docs/runbook.md, "Rolling back"): the rollback under the
 * sync's own lease, so that no sync (nor a migration) runs beside it and every write is fenced.
 * bin/migrate.ts calls it; the upgrade test (test/integration/upgrade.test.ts) runs it as is.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoFencedWriter, DynamoLease, leaseTiming, runExclusively } from '@contest-sync/scheduled-singleton';
import { LEASE_PK, RUN_PK_PREFIX } from '../../lambda/contract.js';
import { rollBack, type BackReport } from '../../lambda/migration/back.js';
import { dynamoMigrationStore, type MigrationTables } from '../../lambda/migration/store.js';
import { MigrateUsageError } from './tables.js';

/** How long `back --apply` may hold the sync's lease (it renews it meanwhile). */
export const BACK_BUDGET_MS = 15 * 60_000;

export interface ApplyBack {
  doc: DynamoDBDocumentClient;
  tables: MigrationTables;
  /** The previous release's DUE_SHARDS. */
  dueShards: number;
  /** @default Date.now */
  now?: () => number;
  /** @default BACK_BUDGET_MS */
  budgetMs?: number;
}

/** The rollback, applied under the sync's lease: its report, or an error saying why it could not run. */
export async function applyBack({ doc, tables, dueShards, now = Date.now, budgetMs = BACK_BUDGET_MS }: ApplyBack): Promise<BackReport> {
  const store = dynamoMigrationStore(doc, tables);
  const timing = leaseTiming(30);
  const startedAt = now();
  const outcome = await runExclusively(
    { runId: randomUUID(), source: 'migrate-back', remainingMs: () => budgetMs - (now() - startedAt) },
    (work) => rollBack(work, { store, tables, dueShards, now, signal: work.signal }),
    {
      lease: new DynamoLease({ doc, table: tables.coordination, key: LEASE_PK, timing, now }),
      writer: new DynamoFencedWriter(doc, { now }),
      timing,
      now,
      runRecordPrefix: RUN_PK_PREFIX,
    },
  );
  if (outcome.outcome === 'succeeded') return outcome.value;
  if (outcome.outcome === 'skipped')
    throw new MigrateUsageError(
      `the sync's lease is ${outcome.reason === 'lease-held' ? `held by ${outcome.holder}` : 'busy'}: pause the stack first, then run back again`,
    );
  throw outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error));
}
