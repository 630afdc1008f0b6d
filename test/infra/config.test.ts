/**
 * Context settings: validation errors at synth time, and overrides reaching the template.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../lambda/contract.js';
import { cdkJsonContext } from '../../lib/app.js';
import { CONTEXT_KEYS, ContestSyncConfigError, DEFAULT_CONFIG, parseConfig } from '../../lib/config.js';
import { synthTemplate } from '../../local/template.js';
import { SOURCE_JOBS } from '../../lambda/sources/jobs.js';

describe('parseConfig', () => {
  it('defaults to hourly at minute 0, 60-minute rate, 30 s lease, 120 s timeout, 30-day logs, 7-day retention', () => {
    expect(parseConfig({})).toEqual({
      scheduleExpression: 'cron(0 * * * ? *)',
      scheduleRateMinutes: 60,
      leaseDurationSeconds: 30,
      functionTimeoutSeconds: 120,
      logRetentionDays: 30,
      finishedRetentionDays: 7,
      codeforcesApiUrl: 'https://codeforces.com/api',
      alarmEmail: '',
      missingSyncsBeforeDelete: 3,
      acceptHeldAfterReplies: 3,
      dueShards: 1,
      schedulePaused: false,
      logLevel: 'INFO',
      stage: '',
      jwtIssuer: '',
      jwtAudience: [],
      corsOrigins: [],
      apiThrottleRate: 50,
      apiThrottleBurst: 100,
      webhookUrl: '',
      webhookRatePerSecond: 10,
    });
  });

  it('reads the pause flag and the log level as -c passes them (strings, any case)', () => {
    expect(parseConfig({ schedulePaused: 'true', logLevel: 'debug' })).toMatchObject({ schedulePaused: true, logLevel: 'DEBUG' });
    expect(parseConfig({ schedulePaused: 'FALSE', logLevel: 'warn' })).toMatchObject({ schedulePaused: false, logLevel: 'WARN' });
    expect(parseConfig({ schedulePaused: true, logLevel: 'ERROR' })).toMatchObject({ schedulePaused: true, logLevel: 'ERROR' });
  });

  it('cdk.json carries every contestSync key with the defaults', () => {
    const context = cdkJsonContext();
    for (const [name, key] of Object.entries(CONTEXT_KEYS)) {
      expect(context[key], key).toEqual(DEFAULT_CONFIG[name as keyof typeof DEFAULT_CONFIG]);
    }
  });

  it('accepts numbers given as strings (cdk -c key=value)', () => {
    expect(parseConfig({ leaseDurationSeconds: '2', functionTimeoutSeconds: '16', logRetentionDays: '7' })).toMatchObject({
      leaseDurationSeconds: 2,
      functionTimeoutSeconds: 16,
      logRetentionDays: 7,
    });
  });

  it.each([
    [{ leaseDurationSeconds: 1 }, /leaseDurationSeconds=1: expected an integer from 2/],
    [{ leaseDurationSeconds: 2.5 }, /leaseDurationSeconds=2.5: expected an integer/],
    [{ leaseDurationSeconds: 'soon' }, /leaseDurationSeconds="soon": expected an integer/],
    [{ leaseDurationSeconds: 45 }, /functionTimeoutSeconds=120: must be at least 3 x .*leaseDurationSeconds \(45s\), i.e. >= 135s/],
    [
      { leaseDurationSeconds: 60, functionTimeoutSeconds: 300 },
      /leaseDurationSeconds=60: must be at most 50s so that a crashed run's lease lapses before Lambda's first retry/,
    ],
    [{ leaseDurationSeconds: 10, functionTimeoutSeconds: 29 }, /functionTimeoutSeconds=29: must be at least 3 x/],
    [{ functionTimeoutSeconds: 900 }, /functionTimeoutSeconds=900: expected an integer from 3 to 840/],
    [{ scheduleExpression: 'hourly' }, /scheduleExpression="hourly": expected an EventBridge expression/],
    [{ scheduleExpression: 'rate(30 minutes)' }, /scheduleRateMinutes=60: .*runs every 30 minutes; set .*scheduleRateMinutes to 30/],
    [{ scheduleRateMinutes: 0 }, /scheduleRateMinutes=0: expected an integer from 1 to 1440/],
    [{ logRetentionDays: 10 }, /logRetentionDays=10: CloudWatch Logs accepts only 1, 3, 5, 7, 14, 30/],
    [{ finishedRetentionDays: -1 }, /finishedRetentionDays=-1/],
    [{ codeforcesApiUrl: 'codeforces.com/api' }, /codeforcesApiUrl="codeforces.com\/api": expected an absolute URL/],
    [{ codeforcesApiUrl: 'ftp://codeforces.com/api' }, /expected an http\(s\) URL/],
    [{ alarmEmail: 'ops' }, /alarmEmail="ops": expected an e-mail address/],
    [
      { leaseDurationSeconds: 2, functionTimeoutSeconds: 14 },
      /functionTimeoutSeconds=14: must exceed 15s: a run keeps 13600 ms for the release/,
    ],
    [{ missingSyncsBeforeDelete: 0 }, /missingSyncsBeforeDelete=0: expected an integer from 1 to 48/],
    [{ acceptHeldAfterReplies: 0 }, /acceptHeldAfterReplies=0: expected an integer from 1 to 48/],
    [{ dueShards: 0 }, /dueShards=0: expected an integer from 1 to 16/],
    [{ dueShards: 17 }, /dueShards=17: expected an integer from 1 to 16/],
    [{ dueShards: 2.5 }, /dueShards=2.5: expected an integer/],
    [{ schedulePaused: 'yes' }, /schedulePaused="yes": expected true or false/],
    [{ schedulePaused: 1 }, /schedulePaused=1: expected true or false/],
    [{ stage: 'Prod' }, /stage="Prod": expected "" or up to 20 lowercase letters/],
    [{ stage: 'dev_1' }, /stage="dev_1": expected ""/],
    [{ stage: 'default' }, /stage="default": expected ""/],
    [{ stage: 'x'.repeat(21) }, /stage="x{21}": expected ""/],
    [{ logLevel: 'verbose' }, /logLevel="verbose": expected one of DEBUG, INFO, WARN, ERROR/],
    [{ logLevel: 3 }, /logLevel=3: expected a string/],
  ])('rejects %j', (raw, message) => {
    expect(() => parseConfig(raw)).toThrow(ContestSyncConfigError);
    expect(() => parseConfig(raw)).toThrow(message);
  });

  it('accepts rate() expressions that match the rate and the 2-second lease tests use', () => {
    expect(parseConfig({ scheduleExpression: 'rate(2 hours)', scheduleRateMinutes: 120 }).scheduleRateMinutes).toBe(120);
    expect(parseConfig({ leaseDurationSeconds: 2, functionTimeoutSeconds: 16 }).leaseDurationSeconds).toBe(2);
  });
});

describe('synth with bad context', () => {
  it('fails synthesis with the message naming the key', async () => {
    await expect(synthTemplate({ bundle: false, context: { [CONTEXT_KEYS.leaseDurationSeconds]: 45 } })).rejects.toThrow(
      /Invalid context contestSync:functionTimeoutSeconds=120: must be at least 3 x contestSync:leaseDurationSeconds/,
    );
  });
});

describe('synth with overridden context', () => {
  let template: Template;
  beforeAll(async () => {
    const { template: json } = await synthTemplate({
      bundle: false,
      context: {
        [CONTEXT_KEYS.scheduleExpression]: 'rate(15 minutes)',
        [CONTEXT_KEYS.scheduleRateMinutes]: '15',
        [CONTEXT_KEYS.leaseDurationSeconds]: 2,
        [CONTEXT_KEYS.functionTimeoutSeconds]: 60,
        [CONTEXT_KEYS.logRetentionDays]: 7,
        [CONTEXT_KEYS.finishedRetentionDays]: 3,
        [CONTEXT_KEYS.codeforcesApiUrl]: 'http://127.0.0.1:9999/api',
        [CONTEXT_KEYS.alarmEmail]: 'ops@example.com',
        [CONTEXT_KEYS.missingSyncsBeforeDelete]: 5,
        [CONTEXT_KEYS.acceptHeldAfterReplies]: 4,
      },
    });
    template = Template.fromJSON(json);
  });

  it('passes the settings to the function, log group, rule and trigger', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.handler',
      Timeout: 60,
      Environment: {
        Variables: {
          [ENV.leaseDurationSeconds]: '2',
          [ENV.missingSyncsBeforeDelete]: '5',
          [ENV.acceptHeldAfterReplies]: '4',
          [ENV.finishedRetentionDays]: '3',
          [ENV.scheduleRateMinutes]: '15',
          [ENV.codeforcesApiUrl]: 'http://127.0.0.1:9999/api',
        },
      },
    });
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 7 });
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(15 minutes)' });
    template.hasResourceProperties('Custom::Trigger', { Timeout: String(90_000) });
  });

  it('sizes the no-successful-sync alarm period to the schedule rate', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'RunSucceeded', Period: 900, EvaluationPeriods: 2 });
  });

  it('subscribes the alarm e-mail to the topic', () => {
    template.resourceCountIs('AWS::SNS::Subscription', 1);
    const topicId = Object.keys(template.findResources('AWS::SNS::Topic'))[0];
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: { Ref: topicId },
    });
  });
});

describe('synth paused, at DEBUG', () => {
  let template: Template;
  beforeAll(async () => {
    const { template: json } = await synthTemplate({
      bundle: false,
      context: { [CONTEXT_KEYS.schedulePaused]: 'true', [CONTEXT_KEYS.logLevel]: 'DEBUG' },
    });
    template = Template.fromJSON(json);
  });

  it("keeps the schedule rules (the sync's and the reminder delivery's) and their targets, disabled", () => {
    // The door's rule (contest events to the calendar) is not a schedule: a pause leaves it on.
    const rules = Object.entries(template.findResources('AWS::Events::Rule')).filter(([id]) => !id.startsWith('Door'));
    // Codeforces' sync, every other source's (at its settings' period: hourly) and the reminder delivery's.
    expect(rules.map(([, rule]) => rule.Properties.ScheduleExpression).sort()).toEqual([
      'cron(0 * * * ? *)',
      ...SOURCE_JOBS.slice(1).map(() => 'rate(1 hour)'),
      'rate(1 minute)',
    ]);
    for (const [, rule] of rules) {
      expect(rule.Properties.State).toBe('DISABLED');
      expect(rule.Properties.Targets).toHaveLength(1);
    }
    const [syncRuleId] = rules.find(([, rule]) => rule.Properties.ScheduleExpression === 'cron(0 * * * ? *)')!;
    expect(template.findOutputs('ScheduleRuleName').ScheduleRuleName?.Value).toEqual({ Ref: syncRuleId });
  });

  it('silences only the no-successful-sync alarm (its state stays visible); the others still notify', () => {
    const all = Object.entries(template.findResources('AWS::CloudWatch::Alarm'));
    // The event delivery's alarms (dead letters, lag) are not the schedule's: a pause leaves them on.
    for (const [, alarm] of all.filter(([id]) => id.startsWith('Events'))) expect(alarm.Properties.ActionsEnabled ?? true).toBe(true);
    // The reminder delivery job's own alarms follow the same rule as the sync's (checked below).
    const delivery = all.filter(([id]) => id.startsWith('Delivery')).map(([, alarm]) => alarm);
    expect(delivery.length).toBeGreaterThan(0);
    for (const alarm of delivery)
      expect(alarm.Properties.ActionsEnabled ?? true, alarm.Properties.MetricName).toBe(alarm.Properties.MetricName !== 'RunSucceeded');
    // The door's alarms (5xx, latency, feed dead letters) are not the schedule's either.
    for (const [, alarm] of all.filter(([id]) => id.startsWith('Door'))) expect(alarm.Properties.ActionsEnabled ?? true).toBe(true);
    const alarms = all.filter(([id]) => !/^(Events|Delivery|Door)/.test(id)).map(([, alarm]) => alarm);
    // Five per source's job (docs/sources.md, "One job per source").
    expect(alarms).toHaveLength(5 * SOURCE_JOBS.length);
    for (const alarm of alarms) {
      const paused = alarm.Properties.MetricName === 'RunSucceeded';
      expect(alarm.Properties.ActionsEnabled ?? true, alarm.Properties.MetricName).toBe(!paused); // CloudFormation's default is true
      expect(alarm.Properties.AlarmActions).toHaveLength(1);
    }
    const noSync = alarms.filter((a) => a.Properties.MetricName === 'RunSucceeded');
    expect(noSync).toHaveLength(SOURCE_JOBS.length);
    for (const alarm of noSync) expect(alarm.Properties.AlarmDescription).toMatch(/PAUSED/);
  });

  it("sets the logger and Lambda's log filter to DEBUG", () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.handler',
      Environment: { Variables: { POWERTOOLS_LOG_LEVEL: 'DEBUG' } },
      LoggingConfig: { LogFormat: 'JSON', ApplicationLogLevel: 'DEBUG' },
    });
  });
});
