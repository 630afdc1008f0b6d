/**
 * THE list of DynamoDB actions the sync function may perform, per table. This is the one place to
 * change when the function starts using another API call. Transactions need no extra action:
 * `TransactWriteItems` is authorised per contained action (a ConditionCheck on the lease needs
 * `dynamodb:ConditionCheckItem` on Coordination, a Put on Contests needs `dynamodb:PutItem` there).
 *
 * Grants are on the table ARNs, and on the one index the sync queries (SYNC_DUE_INDEX_ACTIONS, on
 * the Reminders `byDue` index's ARN only), never on `table/index/*`.
 */
import { COORDINATION_ACTIONS } from '@contest-sync/scheduled-singleton/cdk';

export type TableRole = 'contests' | 'reminders' | 'coordination';

export const TABLE_ROLES: readonly TableRole[] = ['contests', 'reminders', 'coordination'];

export const TABLE_ACTIONS: Readonly<Record<TableRole, readonly string[]>> = {
  contests: ['dynamodb:Scan', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
  // The sync never deletes a reminder (docs/design.md, "The firing rule"): it reads and updates them.
  reminders: ['dynamodb:Query', 'dynamodb:UpdateItem'],
  // What the single-execution module sends, granted by ScheduledSingletonJob on the job's own keys
  // (dynamodb:LeadingKeys). GetItem: the read-back of a release whose answer was lost. No Query.
  coordination: COORDINATION_ACTIONS,
};

/**
 * What the sync sends to the Reminders `byDue` index: the Query that reads a partition a lowered
 * DUE_SHARDS retired, to move its rows into their current one (docs/delivery.md).
 */
export const SYNC_DUE_INDEX_ACTIONS = ['dynamodb:Query'] as const;

/**
 * What the sync sends for the upgrade to qualified keys (lambda/migration/; docs/runbook.md,
 * "Upgrading to qualified keys"), besides TABLE_ACTIONS: the consistent Scans of the previous
 * release's tables (nothing else on them), the reminders' copies (a conditional Put in the page's
 * transaction) on the new Reminders table, and in Coordination the marker (read, and put in the
 * page's transaction) and the delivery shards' leases (the barrier acquires and releases each once).
 */
export const MIGRATION_ACTIONS = {
  legacy: ['dynamodb:Scan'],
  reminders: ['dynamodb:PutItem'],
  marker: ['dynamodb:GetItem', 'dynamodb:PutItem'],
  shardLeases: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
} as const;

/** What the HTTP API sends for the upgrade's gate: the marker's read, until it says `done`. */
export const MIGRATION_GATE_ACTIONS = ['dynamodb:GetItem'] as const;

/**
 * What the reminder write path (lambda/reminders/: setReminder, cancelReminder, listReminders)
 * sends, granted to whoever calls it (the HTTP API's function) by DataTables.grantReminderWritePath:
 * strongly consistent reads of a contest and a row, a set's transaction (a ConditionCheck on the
 * contest, a Put of the row), a cancel's Delete, and the Query of the `byUser` index (on the index
 * ARN only). test/integration/iam.test.ts records the calls against it: used = granted.
 */
export const REMINDER_WRITE_PATH_ACTIONS = {
  contests: ['dynamodb:GetItem', 'dynamodb:ConditionCheckItem'],
  reminders: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
  remindersByUser: ['dynamodb:Query'],
} as const;
