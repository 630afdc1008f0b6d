/**
 * The shareable console test events deployed with the stack (packages/scheduled-singleton/src/cdk/console-test-events.ts):
 * the schema in the template, named from the function's name, and every example in it parsed by the
 * handler's own parser into the invocation its name promises. The construct on its own is tested
 * with the package (packages/scheduled-singleton/test/cdk/console-test-events.test.ts).
 */
import { readdirSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseEvent, type Invocation } from '../../lambda/sync/invocation.js';
import { TEST_EVENT_REGISTRY } from '@contest-sync/scheduled-singleton/cdk';
import { CONSOLE_TEST_EVENTS, DELIVERY_CONSOLE_TEST_EVENTS } from '../../lib/contest-sync-stack.js';
import { findSyncFunction, synthTemplate, type CfnTemplate } from '../../local/template.js';

/** What each named event must do when the console sends it: the name is a promise. */
const PROMISED: Record<string, Invocation> = {
  'scheduled-tick': { source: 'schedule', interval: '2026-11-29T14:00:00Z', dryRun: false, force: false },
  sync: { source: 'console', interval: undefined, dryRun: false, force: false },
  'dry-run': { source: 'console', interval: undefined, dryRun: true, force: false },
  'rerun-interval': { source: 'console', interval: '2026-11-29T14:00:00Z', dryRun: false, force: false },
  'force-rerun-interval': { source: 'console', interval: '2026-11-29T14:00:00Z', dryRun: false, force: true },
  'accept-held': { source: 'console', interval: undefined, dryRun: false, force: false, acceptHeld: true },
  // A new event: the invocation it promises here (and its name in CONSOLE_TEST_EVENTS).
};

interface SchemaDocument {
  openapi: string;
  components: { schemas: Record<string, unknown>; examples: Record<string, { value: unknown }> };
}

let json: CfnTemplate;
let template: Template;
let schemaId: string;
let schema: { Properties: Record<string, any>; DependsOn?: string[] };
let document: SchemaDocument;

/** The sync's resources (the delivery job's console test events are checked in test/infra/delivery.test.ts). */
const syncOnly = (found: Record<string, any>) => Object.entries(found).filter(([id]) => !/^(Delivery\d*|Events)[A-Z]/.test(id));

beforeAll(async () => {
  ({ template: json } = await synthTemplate({ bundle: false }));
  template = Template.fromJSON(json);
  const schemas = syncOnly(template.findResources('AWS::EventSchemas::Schema'));
  expect(schemas).toHaveLength(1);
  [schemaId, schema] = schemas[0] as [string, typeof schema];
  document = JSON.parse(schema.Properties.Content as string) as SchemaDocument;
});

describe('the stack: shareable test events of the sync function', () => {
  it('deploys one OpenApi3 schema in lambda-testevent-schemas named _<function name>-schema', () => {
    const { logicalId } = findSyncFunction(json);
    expect(syncOnly(template.findResources('AWS::EventSchemas::Schema'))).toHaveLength(1);
    template.hasResourceProperties('AWS::EventSchemas::Schema', {
      RegistryName: 'lambda-testevent-schemas',
      Type: 'OpenApi3',
      SchemaName: { 'Fn::Join': ['', ['_', { Ref: logicalId }, '-schema']] },
    });
    expect(document.openapi).toBe('3.0.0');
    expect(document.components.schemas).toHaveProperty('Event');
  });

  it('holds every listed event, in order, under components.examples.<name>.value', () => {
    expect(Object.keys(document.components.examples)).toEqual([...CONSOLE_TEST_EVENTS]);
    expect(Object.keys(document.components.examples)).toEqual(Object.keys(PROMISED));
    for (const example of Object.values(document.components.examples)) expect(Object.keys(example)).toEqual(['value']);
  });

  it.each(Object.entries(PROMISED))('example %s parses (handler parser, today) into the invocation its name promises', (name, promised) => {
    const example = document.components.examples[name];
    expect(example, name).toBeDefined();
    expect(parseEvent(example!.value, { periodMinutes: 60 })).toEqual(promised);
  });

  it('has one copy of the payloads: every events/*.json is a listed event, and every listed event has its file', () => {
    const files = readdirSync(new URL('../../events/', import.meta.url)).filter((file) => file.endsWith('.json'));
    expect(files.map((file) => file.replace(/\.json$/, '')).sort()).toEqual(
      [...CONSOLE_TEST_EVENTS, ...DELIVERY_CONSOLE_TEST_EVENTS].sort(),
    );
  });

  it('creates the registry only if absent (ConflictException ignored) and never deletes it', () => {
    // The only CloudFormation registry is the event bus's own (docs/events.md), never the console's.
    const cfnRegistries = Object.values(template.findResources('AWS::EventSchemas::Registry')) as {
      Properties?: { RegistryName?: unknown };
    }[];
    expect(cfnRegistries.filter((r) => r.Properties?.RegistryName === 'lambda-testevent-schemas')).toEqual([]);
    expect(cfnRegistries.length).toBeLessThanOrEqual(1);
    const registries = syncOnly(template.findResources('Custom::LambdaTestEventRegistry'));
    expect(registries).toHaveLength(1);
    const [registryId, registry] = registries[0]!;
    expect(schema.DependsOn).toContain(registryId);
    const create = JSON.parse(registry.Properties.Create as string);
    expect(create).toMatchObject({ service: 'Schemas', action: 'CreateRegistry', parameters: { RegistryName: TEST_EVENT_REGISTRY } });
    expect(JSON.parse(registry.Properties.Update as string)).toEqual(create);
    const ignored = new RegExp(create.ignoreErrorCodesMatching as string);
    expect(ignored.test('ConflictException')).toBe(true);
    for (const code of ['ForbiddenException', 'BadRequestException', 'ServiceUnavailableException']) expect(ignored.test(code)).toBe(false);
    expect(registry.Properties.Delete).toBeUndefined();
    expect(registry.Properties.InstallLatestAwsSdk).toBe(false);
  });

  it('lets the provider call CreateRegistry on that registry only, and write its own log group', () => {
    const [registryId, registry] = syncOnly(template.findResources('Custom::LambdaTestEventRegistry'))[0]!;
    const providerId = registry.Properties.ServiceToken['Fn::GetAtt'][0] as string;
    const provider = template.findResources('AWS::Lambda::Function')[providerId]!;
    const roleId = provider.Properties.Role['Fn::GetAtt'][0] as string;
    expect(template.findResources('AWS::IAM::Role')[roleId]!.Properties.ManagedPolicyArns).toBeUndefined();
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((policy: any) => policy.Properties.Roles.some((role: { Ref?: string }) => role.Ref === roleId))
      .flatMap((policy: any) => policy.Properties.PolicyDocument.Statement as any[]);
    // Each function's ConsoleTestEvents adds the same CreateRegistry grant to the shared provider: the same permission.
    const distinct = [...new Map(statements.map((statement) => [JSON.stringify(statement), statement])).values()];
    expect(distinct).toEqual([
      {
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [provider.Properties.LoggingConfig.LogGroup.Ref, 'Arn'] },
      },
      {
        Action: 'schemas:CreateRegistry',
        Effect: 'Allow',
        Resource: {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':schemas:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':registry/lambda-testevent-schemas',
            ],
          ],
        },
      },
    ]);
    // The custom resource waits for its policy; the schema waits for the registry.
    expect(json.Resources[registryId].DependsOn).toEqual(expect.arrayContaining([expect.stringMatching(/CustomResourcePolicy/)]));
    expect(schemaId).toMatch(/^SyncConsoleTestEvents/);
  });
});
