/**
 * THE list of DynamoDB actions the sync function may perform, per table. This is the one place to
 * change when the function starts using another API call. Transactions need no extra action:
 * `TransactWriteItems` is authorised per contained action (a ConditionCheck on the lease needs
 * `dynamodb:ConditionCheckItem` on Coordination, a Put on Contests needs `dynamodb:PutItem` there).
 *
 * Grants are on the table ARNs only, not on `table/index/*`: nothing here queries an index. If the
 * function ever queries the Contests GSI, add the index ARN explicitly in contest-sync-stack.ts.
 */
import { LEASE_PK, RUN_PK_PREFIX } from '../lambda/contract.js';

export type TableRole = 'contests' | 'reminders' | 'coordination';

export const TABLE_ROLES: readonly TableRole[] = ['contests', 'reminders', 'coordination'];

export const TABLE_ACTIONS: Readonly<Record<TableRole, readonly string[]>> = {
  contests: ['dynamodb:Scan', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
  reminders: ['dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
  // GetItem: the read-back of the lease after a release whose answer was lost. Nothing queries it.
  coordination: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:ConditionCheckItem'],
};

/**
 * Partition keys the function may touch, per table (`dynamodb:LeadingKeys`, StringLike patterns):
 * on Coordination only its own lease item and its run records, so that several jobs can share the
 * table without one able to take or overwrite another's lease.
 */
export const TABLE_LEADING_KEYS: Readonly<Partial<Record<TableRole, readonly string[]>>> = {
  coordination: [LEASE_PK, `${RUN_PK_PREFIX}*`],
};
