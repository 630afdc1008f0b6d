/**
 * ScheduledSingletonJob on its own (bundling skipped): defaults, a shared coordination table with
 * grants scoped per job, the standard alarms, pause, and props refused at synth time.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import { describe, expect, it } from 'vitest';
import {
  ScheduledSingletonJob,
  ScheduledSingletonJobError,
  createCoordinationTable,
  type ScheduledSingletonJobProps,
} from '@contest-sync/scheduled-singleton/cdk';

const entry = new URL('../fixtures/job.ts', import.meta.url).pathname;

const base = (name: string): ScheduledSingletonJobProps => ({
  entry,
  schedule: events.Schedule.rate(Duration.minutes(5)),
  periodMinutes: 5,
  leaseKey: `lease#${name}`,
  runRecordPrefix: `run#${name}#`,
  metrics: { namespace: 'Jobs', service: name },
});

function stackWith(build: (stack: Stack) => void): Template {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Jobs');
  build(stack);
  return Template.fromStack(stack);
}

const statements = (template: Template) =>
  Object.values(template.findResources('AWS::IAM::Policy')).flatMap((p: any) => p.Properties.PolicyDocument.Statement as any[]);

describe('ScheduledSingletonJob', () => {
  it('alone: creates its coordination table (pk S, TTL ttl), a topic, the five alarms, the schedule and the deploy run', () => {
    const template = stackWith((stack) => new ScheduledSingletonJob(stack, 'Beat', base('beat')));
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
    });
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.resourceCountIs('AWS::CloudWatch::Alarm', 5);
    template.resourceCountIs('Custom::Trigger', 1);
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)', State: 'ENABLED' });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: 120,
      Environment: {
        Variables: Match.objectLike({
          LEASE_DURATION_SECONDS: '30',
          SCHEDULE_RATE_MINUTES: '5',
          COORDINATION_TABLE_NAME: Match.anyValue(),
        }),
      },
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 7200 });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'RunSucceeded',
      Namespace: 'Jobs',
      Dimensions: [{ Name: 'service', Value: 'beat' }],
      Period: 300,
      EvaluationPeriods: 2,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
    for (const metric of ['RunFailed', 'LeaseLost'])
      template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: metric, Threshold: 1 });
  });

  it('shared: two jobs on one coordination table, each granted only its own lease key and run records', () => {
    const template = stackWith((stack) => {
      const coordinationTable = createCoordinationTable(stack, 'Coordination');
      new ScheduledSingletonJob(stack, 'A', { ...base('a'), coordinationTable });
      new ScheduledSingletonJob(stack, 'B', { ...base('b'), coordinationTable, deployRun: false, noSuccessPeriods: 3 });
    });
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    const keys = statements(template)
      .filter((s) => s.Sid === 'CoordinationTable')
      .map((s) => s.Condition['ForAllValues:StringLike']['dynamodb:LeadingKeys']);
    expect(keys).toEqual(
      expect.arrayContaining([
        ['lease#a', 'run#a#*'],
        ['lease#b', 'run#b#*'],
      ]),
    );
    expect(keys).toHaveLength(2);
    template.resourceCountIs('Custom::Trigger', 1);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'RunSucceeded',
      Dimensions: [{ Name: 'service', Value: 'b' }],
      EvaluationPeriods: 3,
    });
  });

  it('paused: the rule stays, disabled, and only the no-success alarm stops notifying', () => {
    const template = stackWith((stack) => new ScheduledSingletonJob(stack, 'Beat', { ...base('beat'), paused: true }));
    template.hasResourceProperties('AWS::Events::Rule', { State: 'DISABLED' });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'RunSucceeded', ActionsEnabled: false });
    const others = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter(
      (a: any) => a.Properties.MetricName !== 'RunSucceeded',
    );
    expect(others).toHaveLength(4);
    for (const alarm of others as any[]) expect(alarm.Properties.ActionsEnabled).not.toBe(false);
    // No deploy-time run while paused: a pause stops every automatic run.
    template.resourceCountIs('Custom::Trigger', 0);
    const running = stackWith((stack) => new ScheduledSingletonJob(stack, 'Beat', base('beat')));
    running.resourceCountIs('Custom::Trigger', 1);
  });

  it.each([
    [{ periodMinutes: 10 }, /rate\(5 minutes\) runs every 5 minutes but periodMinutes is 10/],
    [{ leaseDuration: Duration.seconds(60), timeout: Duration.seconds(300) }, /leaseDuration must be whole seconds, at most 50/],
    [{ leaseDuration: Duration.seconds(1) }, /leaseDuration: lease duration must be a number of seconds >= 2/],
    [{ leaseDuration: Duration.seconds(30), timeout: Duration.seconds(60) }, /timeout \(60s\) must be at least 3 x leaseDuration/],
    [{ leaseDuration: Duration.seconds(2), timeout: Duration.seconds(14) }, /timeout \(14s\) must exceed 15s/],
    [{ timeout: Duration.seconds(900) }, /timeout must be at most 840s/],
    [{ leaseKey: 'run#x#lease', runRecordPrefix: 'run#x#' }, /lease key outside the prefix/],
  ] as [Partial<ScheduledSingletonJobProps>, RegExp][])('refuses %j', (override, message) => {
    const build = () => stackWith((stack) => new ScheduledSingletonJob(stack, 'Beat', { ...base('beat'), ...override }));
    expect(build).toThrow(ScheduledSingletonJobError);
    expect(build).toThrow(message);
  });
});
