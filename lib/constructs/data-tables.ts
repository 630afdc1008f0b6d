/**
 * The three DynamoDB tables of docs/design.md ("Tables"). On-demand, point-in-time recovery, TTL where
 * the design names one. CloudFormation picks the table names; the function learns them from its
 * environment and local runs rebuild the same schema from the synthesized template
 * (local/tables.ts), so nothing depends on a fixed name.
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
 * Name of the Reminders GSI the write path lists a user's reminders from (`userId`, `contestId`),
 * projecting what a listed reminder shows (lambda/reminders/table.ts).
 */
export { REMINDERS_BY_USER_INDEX };

export class DataTables extends Construct {
  public readonly contests: dynamodb.Table;
  public readonly reminders: dynamodb.Table;
  public readonly coordination: dynamodb.Table;

  constructor(scope: Construct, id: string) {
    super(scope, id);

    const common = {
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    } as const;

    // The app's data: kept if the stack is deleted (a re-created stack gets new, empty tables).
    this.contests = new dynamodb.Table(this, 'Contests', {
      ...common,
      partitionKey: { name: 'contestId', type: dynamodb.AttributeType.NUMBER },
      timeToLiveAttribute: 'expiresAt',
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.contests.addGlobalSecondaryIndex({
      indexName: CONTESTS_BY_PLATFORM_START_INDEX,
      partitionKey: { name: 'platform', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'startTimeSeconds', type: dynamodb.AttributeType.NUMBER },
      projectionType: dynamodb.ProjectionType.ALL,
    });

    // Written by the app (users' reminders): kept on stack deletion. The sync never deletes one;
    // `expiresAt` (the contest's end + retention) bounds them, orphans included.
    this.reminders = new dynamodb.Table(this, 'Reminders', {
      ...common,
      partitionKey: { name: 'contestId', type: dynamodb.AttributeType.NUMBER },
      sortKey: { name: 'userId', type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: 'expiresAt',
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.reminders.addGlobalSecondaryIndex({
      indexName: REMINDERS_BY_DUE_INDEX,
      partitionKey: { name: 'dueShard', type: dynamodb.AttributeType.NUMBER },
      sortKey: { name: 'dueAt', type: dynamodb.AttributeType.NUMBER },
      projectionType: dynamodb.ProjectionType.ALL,
    });
    this.reminders.addGlobalSecondaryIndex({
      indexName: REMINDERS_BY_USER_INDEX,
      partitionKey: { name: 'userId', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'contestId', type: dynamodb.AttributeType.NUMBER },
      projectionType: dynamodb.ProjectionType.INCLUDE,
      nonKeyAttributes: [...BY_USER_PROJECTION],
    });

    // Lease and run records only: nothing of value outlives the stack.
    this.coordination = new dynamodb.Table(this, 'Coordination', {
      ...common,
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: 'ttl',
      removalPolicy: RemovalPolicy.DESTROY,
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
