/**
 * Every source its own sync job (docs/sources.md, "One job per source"), in the synthesized
 * template (bundling skipped): per source one function with its own entry, lease key, run-record
 * prefix, service and schedule (its settings' poll period), its own failure queue, five alarms on
 * its own metrics, its console test events, and an outbox grant on its own event source only. The
 * data-table grants are the same statements for every source (the shared sync makes the same calls:
 * test/integration/iam.test.ts proves used = granted on Codeforces' job, and
 * test/integration/sources.test.ts that every source's calls are allowed by its own role).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV, METRICS_NAMESPACE } from '../../lambda/contract.js';
import { jobNames, pollMinutes } from '../../lambda/sources/job.js';
import { CONTEST_EVENT_SOURCES, SOURCE_JOBS } from '../../lambda/sources/jobs.js';
import { PLATFORMS } from '../../lambda/sources/platforms.js';
import { JOB_ENV } from '@contest-sync/scheduled-singleton/contract';
import { rateMinutes } from '@contest-sync/scheduled-singleton/cdk';
import { synthTemplate, type CfnTemplate } from '../../local/template.js';

type Resource = { Type: string; Properties: Record<string, any> };
let resources: Record<string, Resource>;

beforeAll(async () => {
  const template: CfnTemplate = (await synthTemplate({ bundle: false })).template;
  resources = template.Resources as Record<string, Resource>;
}, 180_000);

const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const ref = (value: unknown): string | undefined => (value as { Ref?: string } | undefined)?.Ref;
const getAtt = (value: unknown): string | undefined => (value as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0];

/** The function of a source's job: the one whose lease key is the job's. */
function jobFunction(leaseKey: string): [string, Resource] {
  const found = ofType('AWS::Lambda::Function').filter(([, r]) => r.Properties.Environment?.Variables?.[JOB_ENV.leaseKey] === leaseKey);
  expect(found, leaseKey).toHaveLength(1);
  return found[0]!;
}

function roleStatements(fn: Resource): { Sid?: string; Action: string | string[]; Resource: unknown; Condition?: any }[] {
  const roleId = getAtt(fn.Properties.Role);
  return ofType('AWS::IAM::Policy')
    .filter(([, p]) => (p.Properties.Roles as unknown[]).some((role) => ref(role) === roleId))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
}

/** A statement as text, with the parts that name a job's own keys left out (compared on their own). */
const dataStatements = (fn: Resource) =>
  roleStatements(fn)
    .filter((s) => s.Sid === 'ContestsTable' || s.Sid === 'RemindersTable' || s.Sid === 'RemindersDueIndex')
    .map((s) => JSON.stringify(s))
    .sort();

describe('one sync job per source', () => {
  it('lists every platform once, with distinct names (Codeforces keeps the ones it always had)', () => {
    expect(SOURCE_JOBS.map((job) => job.platform).sort()).toEqual([...PLATFORMS].sort());
    for (const key of ['constructId', 'leaseKey', 'runRecordPrefix', 'service', 'eventSource'] as const) {
      expect(new Set(SOURCE_JOBS.map((job) => jobNames(job)[key])).size, key).toBe(SOURCE_JOBS.length);
    }
    const codeforces = jobNames(SOURCE_JOBS.find((job) => job.platform === 'codeforces')!);
    expect(codeforces).toEqual({
      constructId: 'Sync',
      leaseKey: 'lease#contest-sync',
      runRecordPrefix: 'run#',
      service: 'contest-sync',
      eventSource: 'contest-sync.contests',
    });
    expect(jobNames(SOURCE_JOBS.find((job) => job.platform === 'atcoder')!).leaseKey).toBe('lease#contest-sync#atcoder');
  });

  for (const job of SOURCE_JOBS) {
    const names = jobNames(job);
    describe(job.platform, () => {
      it('has its own function, entry, ledger, service and origin variable', () => {
        const [, fn] = jobFunction(names.leaseKey);
        const variables = fn.Properties.Environment.Variables;
        expect(variables[JOB_ENV.runRecordPrefix]).toBe(names.runRecordPrefix);
        expect(variables[JOB_ENV.serviceName]).toBe(names.service);
        expect(variables[JOB_ENV.metricsNamespace]).toBe(METRICS_NAMESPACE);
        expect(variables[JOB_ENV.eventSource]).toBe(names.eventSource);
        expect(variables[ENV.scheduleRateMinutes]).toBe(String(pollMinutes(job)));
        expect(variables[ENV.acceptHeldAfterReplies]).toBe(String(job.settings.schedule.acceptMoveAfterReplies));
        // Only Codeforces' origin is set by the stack (its context); the others call their real origin.
        const origins = Object.keys(variables).filter((name) => SOURCE_JOBS.some((other) => other.baseUrlVariable === name));
        expect(origins).toEqual(job.platform === 'codeforces' ? [job.baseUrlVariable] : []);
        expect(fn.Properties.Description).toContain(job.label);
      });

      it('has its own schedule at its poll period, its own failure queue and five alarms on its own metrics', () => {
        const [fnId] = jobFunction(names.leaseKey);
        const rules = ofType('AWS::Events::Rule').filter(([, r]) =>
          (r.Properties.Targets as { Arn?: unknown }[] | undefined)?.some((t) => getAtt(t.Arn) === fnId),
        );
        expect(rules).toHaveLength(1);
        const expression = rules[0]![1].Properties.ScheduleExpression as string;
        // Codeforces' schedule is the stack's context (hourly on the hour by default); every other source's its poll period.
        if (job.platform === 'codeforces') expect(expression).toBe('cron(0 * * * ? *)');
        else expect(rateMinutes(expression)).toBe(pollMinutes(job));
        expect(rules[0]![1].Properties.State).toBe('ENABLED');
        const dlq = rules[0]![1].Properties.Targets[0].DeadLetterConfig.Arn;
        const invokeConfig = ofType('AWS::Lambda::EventInvokeConfig').find(([, c]) => ref(c.Properties.FunctionName) === fnId);
        expect(invokeConfig![1].Properties.DestinationConfig.OnFailure.Destination).toEqual(dlq);
        const queueId = getAtt(dlq)!;
        const others = SOURCE_JOBS.filter((other) => other !== job).map((other) => jobFunction(jobNames(other).leaseKey)[0]);
        expect(others.some((other) => JSON.stringify(resources[other]).includes(queueId))).toBe(false);

        const alarms = ofType('AWS::CloudWatch::Alarm').filter(([, a]) => {
          const dims = JSON.stringify(a.Properties.Dimensions ?? a.Properties.Metrics ?? []);
          return dims.includes(`"${names.service}"`) || dims.includes(`"${fnId}"`) || dims.includes(`"${queueId}"`);
        });
        expect(alarms.map(([, a]) => a.Properties.MetricName ?? 'math').sort()).toHaveLength(5);
        for (const [, alarm] of alarms) expect(alarm.Properties.AlarmDescription).toContain(job.label);
      });

      it('deploys its console test events', () => {
        const [fnId] = jobFunction(names.leaseKey);
        const schemas = ofType('AWS::EventSchemas::Schema').filter(([, s]) =>
          JSON.stringify(s.Properties.SchemaName).includes(`"${fnId}"`),
        );
        expect(schemas).toHaveLength(1);
        expect(JSON.parse(schemas[0]![1].Properties.Content as string).components.examples).toHaveProperty('scheduled-tick');
      });

      it("is granted its own lease and run records, its own event source's outbox keys, and the data statements every source has", () => {
        const [, fn] = jobFunction(names.leaseKey);
        const statements = roleStatements(fn);
        const coordination = statements.find((s) => s.Sid === 'CoordinationTable')!;
        expect(coordination.Condition).toEqual({
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [names.leaseKey, `${names.runRecordPrefix}*`] },
        });
        const outbox = statements.find((s) => s.Sid === 'OutboxTable')!;
        expect(outbox.Action).toBe('dynamodb:PutItem');
        expect(outbox.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${names.eventSource}#*`] } });
        const [, codeforces] = jobFunction('lease#contest-sync');
        expect(dataStatements(fn)).toEqual(dataStatements(codeforces));
        // The upgrade's grants are Codeforces' job's alone: the previous release's tables held only Codeforces.
        expect(statements.map((s) => s.Sid).sort()).toEqual(
          roleStatements(codeforces)
            .map((s) => s.Sid)
            .filter((sid) => names.leaseKey === 'lease#contest-sync' || !sid?.startsWith('Migration'))
            .sort(),
        );
        expect(statements.some((s) => s.Sid?.startsWith('Migration'))).toBe(names.leaseKey === 'lease#contest-sync');
      });
    });
  }

  it("sends every source's contest events to the calendar", () => {
    const rule = ofType('AWS::Events::Rule').find(([id]) => id.startsWith('DoorContestEventsToFeeds'));
    expect([...rule![1].Properties.EventPattern.source].sort()).toEqual([...CONTEST_EVENT_SOURCES].sort());
  });
});
