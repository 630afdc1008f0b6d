/**
 * Stages side by side: context `contestSync:stage` names the stack (`ContestSync`, `ContestSync-dev`),
 * tags every resource with `app` and `stage`, and publishes the table names as SSM parameters
 * under `/contest-sync/<stage>/tables/<role>` with outputs.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { createContestSyncApp } from '../../lib/app.js';
import { tableParameterName } from '../../lib/contest-sync-stack.js';
import { TABLE_ROLES } from '../../lib/table-access.js';
import { SOURCE_JOBS } from '../../lambda/sources/jobs.js';
import { jobNames } from '../../lambda/sources/job.js';

type Resources = Record<string, { Type: string; Properties?: Record<string, any> }>;

function synth(context: Record<string, unknown>): { stackName: string; template: Record<string, any>; stackTags: Record<string, string> } {
  const { app, stack } = createContestSyncApp({ nag: false, cfnValidation: false, context: { 'aws:cdk:bundling-stacks': [], ...context } });
  const artifact = app.synth().getStackArtifact(stack.artifactId);
  return { stackName: stack.stackName, template: artifact.template, stackTags: artifact.tags };
}

/** CDK's singleton custom resource provider of triggers: raw resources without a tag manager. */
const isCdkProvider = (id: string): boolean => id.startsWith('AWSCDK');

/** Resource types that carry no Tags property in CloudFormation (CDK's Tags aspect skips them). */
const UNTAGGABLE = new Set([
  'AWS::IAM::Policy',
  'AWS::SQS::QueuePolicy',
  'AWS::SNS::TopicPolicy',
  'AWS::Lambda::Permission',
  'AWS::Lambda::Version',
  'AWS::Lambda::EventInvokeConfig',
  'AWS::Events::Rule',
  'AWS::CloudWatch::Alarm',
  'AWS::CloudWatch::Dashboard',
  'Custom::Trigger',
  'Custom::LambdaTestEventRegistry',
  // The door's parts that take no tags in CloudFormation.
  'AWS::S3::BucketPolicy',
  'AWS::ApiGatewayV2::Route',
  'AWS::ApiGatewayV2::Integration',
  'AWS::ApiGatewayV2::Authorizer',
  'AWS::Cognito::UserPoolClient',
]);

function tagsOf(resource: { Type: string; Properties?: Record<string, any> }): Record<string, string> {
  const tags = resource.Properties?.Tags ?? resource.Properties?.UserPoolTags; // AWS::Cognito::UserPool: UserPoolTags
  if (Array.isArray(tags)) return Object.fromEntries(tags.map((t: { Key: string; Value: string }) => [t.Key, t.Value]));
  return (tags ?? {}) as Record<string, string>; // AWS::SSM::Parameter: a map
}

describe.each([
  ['', 'ContestSync', 'default'],
  ['dev', 'ContestSync-dev', 'dev'],
])('stage %j', (stage, stackName, stageTag) => {
  let synthesized: ReturnType<typeof synth>;
  beforeAll(() => {
    synthesized = synth({ 'contestSync:stage': stage });
  });

  it(`is the stack ${stackName}`, () => {
    expect(synthesized.stackName).toBe(stackName);
  });

  it(`tags the stack app=contest-sync, stage=${stageTag} (CloudFormation propagates these to every resource)`, () => {
    expect(synthesized.stackTags).toEqual({ app: 'contest-sync', stage: stageTag });
  });

  it(`tags every taggable resource app=contest-sync, stage=${stageTag} in the template`, () => {
    const resources = synthesized.template.Resources as Resources;
    const taggable = Object.entries(resources).filter(([id, r]) => !UNTAGGABLE.has(r.Type) && !isCdkProvider(id));
    // 5 tables (the 3 the jobs use and the previous release's Contests and Reminders), log group, role, function, queue, topic, 3 SSM parameters; the console test
    // events' schema, and their provider's function, role and log group; the event delivery's
    // outbox table, bus, schema registry, dead-letter queue, log group, relay role and function
    // and its event source mapping
    const delivery = taggable.filter(([id]) => id.startsWith('Delivery')).map(([id, r]) => `${id} ${r.Type}`);
    // ... and the schemas in the bus's registry: ReminderDue and the sync's four contest events (30). The reminder delivery job
    // (function, role, log group, failure queue, its console test events' schema) is tagged the same way.
    // The app's door (docs/api.md: its table, bucket, queues, functions, roles, log groups, API, user pool) is tagged the same way.
    const door = taggable.filter(([id]) => id.startsWith('Door'));
    expect(door.length).toBeGreaterThan(10);
    // Every other source's job (lambda/sources/jobs.ts) is tagged the same way, the same resources each.
    const others = SOURCE_JOBS.slice(1).map((job) => jobNames(job).constructId);
    const sources = others.map((constructId) => taggable.filter(([id]) => id.startsWith(constructId)).length);
    expect(new Set(sources).size, JSON.stringify(sources)).toBe(1);
    expect(sources[0]).toBeGreaterThan(3);
    const ofSources = sources.reduce((a, b) => a + b, 0);
    // ... and each other source's four contest events in the bus's registry, under its own event source.
    expect(taggable.length - delivery.length - door.length - ofSources, JSON.stringify(delivery)).toBe(30 + 4 * others.length);
    expect(delivery.length, JSON.stringify(delivery)).toBe(5);
    for (const [id, resource] of taggable) {
      expect(tagsOf(resource), `${id} (${resource.Type})`).toMatchObject({ app: 'contest-sync', stage: stageTag });
    }
  });

  it(`publishes each table name as /contest-sync/${stageTag}/tables/<role>, with outputs`, () => {
    const template = Template.fromJSON(synthesized.template);
    const env = template.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler' } }) as Resources;
    const variables = Object.values(env).find((fn) => fn.Properties?.Environment?.Variables?.COORDINATION_TABLE_NAME)!.Properties!
      .Environment.Variables as Record<string, { Ref: string }>;
    const refOf = {
      contests: variables.CONTESTS_TABLE_NAME!.Ref,
      reminders: variables.REMINDERS_TABLE_NAME!.Ref,
      coordination: variables.COORDINATION_TABLE_NAME!.Ref,
    };
    for (const role of TABLE_ROLES) {
      const name = `/contest-sync/${stageTag}/tables/${role}`;
      expect(tableParameterName(stage, role)).toBe(name);
      template.hasResourceProperties('AWS::SSM::Parameter', { Name: name, Type: 'String', Value: { Ref: refOf[role] } });
      const outputs = template.findOutputs('*', {
        Value: { Ref: Object.keys(template.findResources('AWS::SSM::Parameter', { Properties: { Name: name } }))[0] },
      });
      expect(Object.keys(outputs), role).toEqual([`${role[0]!.toUpperCase()}${role.slice(1)}TableParameterName`]);
    }
  });
});

describe('two stages in one account', () => {
  it('share no stack name and no SSM parameter name', () => {
    const names = (stage: string) =>
      Object.values(synth({ 'contestSync:stage': stage }).template.Resources as Resources)
        .filter((r) => r.Type === 'AWS::SSM::Parameter')
        .map((r) => r.Properties!.Name as string);
    const prod = names('');
    const dev = names('dev');
    expect(prod).toHaveLength(3);
    expect(dev.filter((name) => prod.includes(name))).toEqual([]);
  });
});
