/**
 * The Codeforces sync job's side of the upgrade (docs/runbook.md, "Upgrading to qualified keys"):
 * while the marker is not `done`, a run copies instead of syncing. A container asks the marker only
 * until it has seen `done`; from then on the sync runs with no extra request.
 */
import { migrationGate, type MigrationGate } from './gate.js';
import { migrate, type MigrationDeps, type MigrationProgress, type MigrationRun } from './migrate.js';

export interface MigrationJob {
  /**
   * A run that holds the lease: the copy goes on. Undefined when the migration was already done
   * (the sync runs); otherwise what this run did (state `done` when it finished the copy).
   */
  run(work: MigrationRun): Promise<MigrationProgress | undefined>;
  /** A run without the lease (a dry run): whether the copy is done (it does nothing else). */
  gate: MigrationGate;
}

export function migrationJob(deps: MigrationDeps): MigrationJob {
  let seenDone = false;
  const gate = migrationGate(async (signal) => {
    if (!seenDone) seenDone = (await deps.store.readMarker(signal))?.state === 'done';
    return seenDone ? 'done' : 'copying';
  });
  return {
    gate,
    async run(work) {
      if (seenDone) return undefined;
      const progress = await migrate(work, deps);
      if (progress.state !== 'done') return progress;
      seenDone = true;
      const copiedNow = Object.values(progress.copied).some((count) => count > 0);
      return copiedNow ? progress : undefined;
    },
  };
}
