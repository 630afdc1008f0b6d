/**
 * The one stack of contest-sync (docs/design.md): tables, the sync function with its schedule, deploy
 * trigger and failure queue, and monitoring. Environment-agnostic: `cdk synth` needs no AWS
 * account or credentials. cdk-nag acknowledgements live in ./nag.ts next to the rule packs.
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { configFromContext, type ContestSyncConfig } from './config.js';
import { DataTables } from './constructs/data-tables.js';
import { Monitoring } from './constructs/monitoring.js';
import { SyncFunction } from './constructs/sync-function.js';
import { acknowledgeNagFindings } from './nag.js';

export const STACK_ID = 'ContestSync';

export class ContestSyncStack extends Stack {
  public readonly config: ContestSyncConfig;
  public readonly tables: DataTables;
  public readonly sync: SyncFunction;
  public readonly monitoring: Monitoring;

  constructor(scope: Construct, id: string = STACK_ID, props: StackProps = {}) {
    super(scope, id, {
      description: 'contest-sync: scheduled, lease-guarded sync of Codeforces contests into DynamoDB',
      ...props,
    });
    this.config = configFromContext(this.node);

    this.tables = new DataTables(this, 'Tables');
    this.sync = new SyncFunction(this, 'Sync', { config: this.config, tables: this.tables });
    this.monitoring = new Monitoring(this, 'Monitoring', {
      config: this.config,
      function: this.sync.function,
      logGroup: this.sync.logGroup,
      failureQueue: this.sync.failureQueue,
    });

    const output = (id: string, value: string, description: string) => new CfnOutput(this, id, { value, description });
    output('ContestsTableName', this.tables.contests.tableName, 'Contests table (read by the app)');
    output('RemindersTableName', this.tables.reminders.tableName, 'Reminders table (written by the app)');
    output('CoordinationTableName', this.tables.coordination.tableName, 'Lease and run records');
    output('FunctionName', this.sync.function.functionName, 'Sync function (console "Test" runs a sync now)');
    output(
      'ScheduleRuleName',
      this.sync.schedule.ruleName,
      `EventBridge rule of the schedule (${this.config.schedulePaused ? 'PAUSED' : 'enabled'}; pause with -c contestSync:schedulePaused=true)`,
    );
    output('LogGroupName', this.sync.logGroup.logGroupName, 'Function logs: one summary line per invocation (aws logs tail)');
    output('FailureQueueUrl', this.sync.failureQueue.queueUrl, 'Failed async invocations and undeliverable schedule events');
    output('AlarmTopicArn', this.monitoring.topic.topicArn, 'Alarm notifications');
    output('DashboardName', this.monitoring.dashboard.dashboardName, 'CloudWatch dashboard');

    acknowledgeNagFindings(this);
  }
}
