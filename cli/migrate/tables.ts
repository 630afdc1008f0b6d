/**
 * `npm run migrate`, where the tables are: a deployed stack's outputs (CloudFormation
 * DescribeStacks), or the persisted DynamoDB Local of `npm start -- --persist`.
 */
import { type CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import type { MigrationTables } from '../../lambda/migration/store.js';

/** The stack outputs that name the tables (lib/contest-sync-stack.ts). */
export const TABLE_OUTPUTS: Record<keyof MigrationTables, string> = {
  legacyContests: 'LegacyContestsTableName',
  legacyReminders: 'LegacyRemindersTableName',
  contests: 'ContestsTableName',
  reminders: 'RemindersTableName',
  coordination: 'CoordinationTableName',
};

export class MigrateUsageError extends Error {
  override readonly name = 'MigrateUsageError';
}

export async function tablesOfStack(cloudFormation: CloudFormationClient, stackName: string): Promise<MigrationTables> {
  let stacks;
  try {
    ({ Stacks: stacks } = await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName })));
  } catch (error) {
    throw new MigrateUsageError(`could not describe stack ${stackName}: ${(error as Error).message}`);
  }
  const outputs = stacks?.[0]?.Outputs ?? [];
  const entries = Object.entries(TABLE_OUTPUTS).map(([role, key]) => {
    const value = outputs.find((o) => o.OutputKey === key)?.OutputValue;
    if (value === undefined)
      throw new MigrateUsageError(
        `stack ${stackName} has no ${key} output: is it a contest-sync stack of the release with qualified keys?`,
      );
    return [role, value];
  });
  return Object.fromEntries(entries) as MigrationTables;
}
