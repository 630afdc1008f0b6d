/**
 * The logical ids of the deployed ContestSync stack, recorded before the stack was rebuilt on the
 * reusable ScheduledSingletonJob construct. CloudFormation replaces a resource whose logical id
 * changes: for the tables that means new, empty tables. Keep this test green; a construct path
 * change shows up here first.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { synthTemplate, type CfnTemplate } from '../../local/template.js';

let resources: Record<string, { Type: string }>;

beforeAll(async () => {
  const { template }: { template: CfnTemplate } = await synthTemplate({ bundle: false });
  resources = template.Resources;
});

/**
 * Must never change: a new logical id replaces the table (Contests and Reminders hold the app's data).
 * `TablesContests…` and `TablesReminders…` are the previous release's tables (numeric keys), kept as
 * what the upgrade copies; the `V2` tables are keyed by qualified ids and hold the app's data from
 * this release on.
 */
const TABLES = {
  TablesContests029826AF: 'AWS::DynamoDB::Table',
  TablesReminders622DEDAA: 'AWS::DynamoDB::Table',
  TablesCoordinationA381AA1F: 'AWS::DynamoDB::Table',
  TablesContestsV279FF6B77: 'AWS::DynamoDB::Table',
  TablesRemindersV27ACA9C75: 'AWS::DynamoDB::Table',
};

/** The rest of the stack as first deployed: kept so that an update changes resources in place. */
const OTHERS = {
  SyncLogGroupA767EC35: 'AWS::Logs::LogGroup',
  SyncRole17D2A083: 'AWS::IAM::Role',
  SyncRoleDefaultPolicyC92F0522: 'AWS::IAM::Policy',
  SyncFailureQueue7DA81FE6: 'AWS::SQS::Queue',
  SyncFailureQueuePolicy1C61AE28: 'AWS::SQS::QueuePolicy',
  SyncFunction878007FF: 'AWS::Lambda::Function',
  SyncFunctionEventInvokeConfig28B1D8FD: 'AWS::Lambda::EventInvokeConfig',
  SyncScheduleAC35317D: 'AWS::Events::Rule',
  SyncScheduleAllowEventRuleContestSyncFunctionE55B55FAFEFA1E96: 'AWS::Lambda::Permission',
  SyncDeploySyncE856E7ED: 'Custom::Trigger',
  AWSCDKTriggerCustomResourceProviderCustomResourceProviderRoleE18FAF0A: 'AWS::IAM::Role',
  AWSCDKTriggerCustomResourceProviderCustomResourceProviderHandler97BECD91: 'AWS::Lambda::Function',
  MonitoringAlarmTopicAF62D4F1: 'AWS::SNS::Topic',
  MonitoringAlarmTopicPolicyCB9CCFB0: 'AWS::SNS::TopicPolicy',
  MonitoringNoSuccessfulSync07F0FE74: 'AWS::CloudWatch::Alarm',
  MonitoringSyncFailed90F9C025: 'AWS::CloudWatch::Alarm',
  MonitoringFunctionErrors40FB895E: 'AWS::CloudWatch::Alarm',
  MonitoringFailureQueueMessages023E853C: 'AWS::CloudWatch::Alarm',
  MonitoringLeaseLost29779930: 'AWS::CloudWatch::Alarm',
  MonitoringDashboard0C3675C6: 'AWS::CloudWatch::Dashboard',
};

const typesOf = (ids: Record<string, string>) => Object.fromEntries(Object.keys(ids).map((id) => [id, resources[id]?.Type]));

describe('logical ids of the ContestSync stack', () => {
  it("keeps the data tables, the previous release's two included (an update must never replace them)", () => {
    expect(typesOf(TABLES)).toEqual(TABLES);
    // The data tables; the outbox (EventsTable…) holds only events already delivered.
    expect(
      Object.entries(resources)
        .filter(([id, r]) => r.Type === 'AWS::DynamoDB::Table' && !id.startsWith('Events') && !id.startsWith('Door'))
        .map(([id]) => id)
        .sort(),
    ).toEqual(Object.keys(TABLES).sort());
  });

  it('keeps the function, its role, log group, queue, schedule, trigger, topic, alarms and dashboard', () => {
    expect(typesOf(OTHERS)).toEqual(OTHERS);
  });

  it('publishes one function version per job (its id is a hash of the function configuration)', () => {
    const versions = Object.entries(resources)
      .filter(([, r]) => r.Type === 'AWS::Lambda::Version')
      .map(([id]) => id);
    // One for the sync, one for the reminder delivery job (shard 0): each job's deploy-time run and
    // console test events go to its published version.
    expect(versions).toHaveLength(2);
    expect(versions.filter((id) => /^SyncFunctionCurrentVersion/.test(id))).toHaveLength(1);
    expect(versions.filter((id) => /^DeliveryFunctionCurrentVersion/.test(id))).toHaveLength(1);
  });
});
