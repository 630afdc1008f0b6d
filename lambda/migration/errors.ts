/**
 * Every error of the upgrade to qualified keys (docs/runbook.md, "Upgrading to qualified keys"):
 * one base class, so a caller catches them all and branches on the class. Messages are at most
 * 1 KB and never quote an item whole (a hand-written item may be huge).
 */
import { bound } from '@contest-sync/scheduled-singleton';

export class MigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(bound(message), options);
  }
}

/** An item that cannot be carried to the other key: refused and counted, never written half. */
export class MigrationItemError extends MigrationError {
  override readonly name = 'MigrationItemError';

  constructor(
    readonly table: 'contests' | 'reminders',
    problem: string,
  ) {
    super(`${table} item refused: ${problem}`);
  }
}

/** The marker item is not one the migration wrote, or asks for what cannot be done. */
export class MigrationStateError extends MigrationError {
  override readonly name = 'MigrationStateError';
}
