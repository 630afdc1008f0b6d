/**
 * The gate of the upgrade (docs/runbook.md, "Upgrading to qualified keys"): while the copy is not
 * done, what this release would write beside the previous release's data waits — the reminder
 * write path answers 503 `migrating`, the sync migrates instead of syncing. A container asks the
 * marker only until it has seen `done`, then never again (a migration, once done, stays done).
 * It applies only where the stack names the previous release's tables in the environment.
 */
import type { MigrationState } from './marker.js';

export interface MigrationGate {
  /** Whether the migration is done: one marker read until it is, none after. */
  done(signal?: AbortSignal): Promise<boolean>;
}

/** How long a caller is told to wait before trying again (the HTTP API's Retry-After). */
export const MIGRATING_RETRY_AFTER_SECONDS = 30;

export function migrationGate(readState: (signal?: AbortSignal) => Promise<MigrationState | undefined>): MigrationGate {
  let seenDone = false;
  return {
    async done(signal) {
      if (!seenDone) seenDone = (await readState(signal)) === 'done';
      return seenDone;
    },
  };
}

/** The gate that never closes: a function whose environment names no legacy tables (local runs, tests). */
export const NO_GATE: MigrationGate = { done: () => Promise.resolve(true) };
