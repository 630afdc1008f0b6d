/**
 * The three DynamoDB tables of docs/design.md ("Tables"). On-demand, point-in-time recovery, TTL where
 * the design names one. CloudFormation picks the table names; the function learns them from its
 * environment and local runs rebuild the same schema from the synthesized template
 * (local/tables.ts), so nothing depends on a fixed name.
 *
 * Contests and Reminders are keyed by platform-qualified ids (`ContestsV2`, `RemindersV2`: new
 * resources, since DynamoDB cannot change a table's key). The tables of the release keyed by
 * Codeforces' numbers stay in the stack untouched (construct ids `Contests` and `Reminders`,
 * RETAIN) as what the upgrade copies from (docs/runbook.md, "Upgrade"); no function is granted
 * them here.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { BY_USER_PROJECTION, REMINDERS_BY_USER_INDEX } from '../../lambda/reminders/table.js';
import { REMINDER_WRITE_PATH_ACTIONS, type TableRole } from '../table-access.js';

/** Name of the Contests GSI serving "upcoming contests" queries (platform + startTimeSeconds). */
export const CONTESTS_BY_PLATFORM_START_INDEX = 'byPlatformStart';

/**
 * Name of the Reminders GSI a notifier queries (`dueShard = :s AND dueAt <= :now`): sparse, since
 * only due reminders carry `dueShard` and `dueAt` (docs/tables.md).
 */
export const REMINDERS_BY_DUE_INDEX = 'byDue';

/**
 * Name of the Reminders GSI the write path lists a user's reminders from (`userId`, `contestId` String),
 * projecting what a listed reminder shows (lambda/reminders/table.ts).
 */
export { REMINDERS_BY_USER_INDEX };

export class DataTables extends Construct {
  /** Contests by qualified id (`contestId` String). */
  public readonly contests: dynamodb.Table;
  /** Reminders by `contestKey` (`<contestId>#<bucket>`) and `userId`. */
  public readonly reminders: dynamodb.Table;
  public readonly coordination: dynamodb.Table;
  /** The previous release's tables (numeric `contestId`), kept for the upgrade's copy: never granted here. */
  public readonly legacyContests: dynamodb.Table;
  public readonly legacyReminders: dynamodb.Table;

  constructor(scope: Construct, id: string) {
    super(scope, id);

    const common = {
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    } as const;
    this.contests = this.contestsTable('ContestsV2', dynamodb.AttributeType.STRING, common);
    this.reminders = new dynamodb.Table(this, 'RemindersV2', {
      ...common,
      partitionKey: { name: 'contestKey', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'userId', type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: 'expiresAt',
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.addReminderIndexes(this.reminders, dynamodb.AttributeType.STRING);

    // Lease and run records only: nothing of value outlives the stack.
    this.coordination = new dynamodb.Table(this, 'Coordination', {
      ...common,
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: 'ttl',
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // The previous release's tables, exactly as it deployed them.
    this.legacyContests = this.contestsTable('Contests', dynamodb.AttributeType.NUMBER, common);
    this.legacyReminders = new dynamodb.Table(this, 'Reminders', {
      ...common,
      partitionKey: { name: 'contestId', type: dynamodb.AttributeType.NUMBER },
      sortKey: { name: 'userId', type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: 'expiresAt',
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.addReminderIndexes(this.legacyReminders, dynamodb.AttributeType.NUMBER);
  }

  /**
   * The app's contests: kept if the stack is deleted (a re-created stack gets new, empty tables);
   * `byPlatformStart` serves "upcoming contests".
   */
  private contestsTable(id: string, key: dynamodb.AttributeType, common: Partial<dynamodb.TableProps>): dynamodb.Table {
    const table = new dynamodb.Table(this, id, {
      ...common,
      partitionKey: { name: 'contestId', type: key },
      timeToLiveAttribute: 'expiresAt',
      removalPolicy: RemovalPolicy.RETAIN,
    });
    table.addGlobalSecondaryIndex({
      indexName: CONTESTS_BY_PLATFORM_START_INDEX,
      partitionKey: { name: 'platform', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'startTimeSeconds', type: dynamodb.AttributeType.NUMBER },
      projectionType: dynamodb.ProjectionType.ALL,
    });
    return table;
  }

  /**
   * Written by the app (users' reminders): kept on stack deletion. The sync never deletes one;
   * `expiresAt` (the contest's end + retention) bounds them, orphans included. The sparse `byDue`
   * (due rows only) and `byUser` (a user's list, by contest) indexes.
   */
  private addReminderIndexes(table: dynamodb.Table, contestIdType: dynamodb.AttributeType): void {
    table.addGlobalSecondaryIndex({
      indexName: REMINDERS_BY_DUE_INDEX,
      partitionKey: { name: 'dueShard', type: dynamodb.AttributeType.NUMBER },
      sortKey: { name: 'dueAt', type: dynamodb.AttributeType.NUMBER },
      projectionType: dynamodb.ProjectionType.ALL,
    });
    table.addGlobalSecondaryIndex({
      indexName: REMINDERS_BY_USER_INDEX,
      partitionKey: { name: 'userId', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'contestId', type: contestIdType },
      projectionType: dynamodb.ProjectionType.INCLUDE,
      nonKeyAttributes: [...BY_USER_PROJECTION],
    });
  }

  /**
   * Grants `grantee` exactly what the reminder write path (lambda/reminders/) sends: the function
   * that calls setReminder, cancelReminder and listReminders (the HTTP API's).
   */
  grantReminderWritePath(grantee: iam.IGrantable): iam.Grant[] {
    return [
      iam.Grant.addToPrincipal({ grantee, actions: [...REMINDER_WRITE_PATH_ACTIONS.contests], resourceArns: [this.contests.tableArn] }),
      iam.Grant.addToPrincipal({ grantee, actions: [...REMINDER_WRITE_PATH_ACTIONS.reminders], resourceArns: [this.reminders.tableArn] }),
      iam.Grant.addToPrincipal({
        grantee,
        actions: [...REMINDER_WRITE_PATH_ACTIONS.remindersByUser],
        resourceArns: [`${this.reminders.tableArn}/index/${REMINDERS_BY_USER_INDEX}`],
      }),
    ];
  }

  byRole(): Record<TableRole, dynamodb.Table> {
    return { contests: this.contests, reminders: this.reminders, coordination: this.coordination };
  }
}
