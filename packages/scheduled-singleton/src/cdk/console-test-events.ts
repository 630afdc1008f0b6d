/**
 * ConsoleTestEvents: a function's ready payloads as Lambda console *shareable* test events,
 * deployed with the stack, so that the console's Test tab lists them for everyone in the account.
 *
 * The console keeps shareable test events in the EventBridge schema registry
 * `lambda-testevent-schemas`: one schema per function, named `_<function name>-schema`, of type
 * `OpenApi3`, each event at `components.examples.<event name>.value` (the layout the console and
 * `sam remote test-event` read and write).
 *
 * The registry belongs to the account, not to a stack: the console creates it the first time
 * anyone saves a shareable event, and other functions' events live in it. So the registry is not
 * a CloudFormation resource here (an `AWS::EventSchemas::Registry` would fail to create where it
 * exists, would collide between two stacks of one account, and would delete everyone's events
 * with the stack). Instead:
 *
 *   - `Registry`: an AwsCustomResource calls `schemas:CreateRegistry` on create (and on update),
 *     treating `ConflictException` (it exists already) as success, and has no delete call: the
 *     registry is never deleted, whoever created it. Its role may call CreateRegistry on that one
 *     registry ARN and write its own log group, nothing else.
 *   - `Schema`: an `AWS::EventSchemas::Schema` in that registry, depending on `Registry`, named
 *     from the function's name (`Fn::Join` over its `Ref`). The stack owns it: it is updated when
 *     the payloads change and deleted with the function.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as eventschemas from 'aws-cdk-lib/aws-eventschemas';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { AwsCustomResource, AwsCustomResourcePolicy, PhysicalResourceId } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { ConsoleTestEventsError } from '../runtime/errors.js';
import { acknowledgeCustomResourceProviderNagFindings } from './acknowledge.js';

/** The registry the Lambda console reads shareable test events from. */
export const TEST_EVENT_REGISTRY = 'lambda-testevent-schemas';

/** The construct id of AwsCustomResource's singleton provider function in its stack. */
const AWS_CUSTOM_RESOURCE_PROVIDER_ID = 'AWS679f53fac002430cb0da5b7982bd2287';

/**
 * Event names: keys of OpenAPI 3 `components` must match this, and the console shows short names.
 * (The console's own limit for a test event name is 25 characters.)
 */
const EVENT_NAME = /^[A-Za-z0-9._-]{1,25}$/;

/** The Schemas API's limit for a schema's content (CreateSchema, UpdateSchema): all events together. */
const MAX_CONTENT_CHARS = 100_000;

export interface ConsoleTestEventsProps {
  /** The function whose console Test tab lists the events. */
  readonly function: lambda.IFunction;
  /** Event name (as the console lists it) to payload, in the order to list them. */
  readonly events: Readonly<Record<string, unknown>>;
}

/** The schema document the console reads: OpenAPI 3.0, the payloads under `components.examples`. */
export function testEventSchemaContent(events: Readonly<Record<string, unknown>>): string {
  const names = Object.keys(events);
  if (names.length === 0) throw new ConsoleTestEventsError('ConsoleTestEvents: at least one event is needed');
  for (const name of names) {
    if (!EVENT_NAME.test(name)) {
      throw new ConsoleTestEventsError(`ConsoleTestEvents: event name "${name}" must be 1-25 letters, digits, ".", "_" or "-"`);
    }
    if (JSON.stringify(events[name]) === undefined) throw new ConsoleTestEventsError(`ConsoleTestEvents: event "${name}" is not JSON`);
  }
  const content = JSON.stringify({
    openapi: '3.0.0',
    info: { version: '1.0.0', title: 'Event' },
    paths: {},
    components: {
      // The events differ in shape (an EventBridge tick beside console options): any JSON object.
      schemas: { Event: { type: 'object' } },
      examples: Object.fromEntries(names.map((name) => [name, { value: events[name] }])),
    },
  });
  if (content.length > MAX_CONTENT_CHARS) {
    throw new ConsoleTestEventsError(
      `ConsoleTestEvents: the events take ${content.length} characters; a schema holds at most ${MAX_CONTENT_CHARS}`,
    );
  }
  return content;
}

export class ConsoleTestEvents extends Construct {
  /** Ensures the registry exists (never deletes it). */
  public readonly registry: AwsCustomResource;
  /** The function's schema, `_<function name>-schema`, holding the events. */
  public readonly schema: eventschemas.CfnSchema;

  constructor(scope: Construct, id: string, props: ConsoleTestEventsProps) {
    super(scope, id);
    const content = testEventSchemaContent(props.events);
    const stack = Stack.of(this);
    const registryArn = stack.formatArn({ service: 'schemas', resource: 'registry', resourceName: TEST_EVENT_REGISTRY });

    const createRegistry = {
      service: 'Schemas',
      action: 'CreateRegistry',
      parameters: {
        RegistryName: TEST_EVENT_REGISTRY,
        Description: 'Lambda console shareable test events',
      },
      // The console (or another stack) created it already: that is the state wanted.
      ignoreErrorCodesMatching: '^ConflictException$',
      physicalResourceId: PhysicalResourceId.of(TEST_EVENT_REGISTRY),
    };
    // The provider function is a singleton per stack; its role and log group are made here, once.
    const providerExists = stack.node.tryFindChild(AWS_CUSTOM_RESOURCE_PROVIDER_ID) !== undefined;
    this.registry = new AwsCustomResource(this, 'Registry', {
      resourceType: 'Custom::LambdaTestEventRegistry',
      onCreate: createRegistry,
      onUpdate: createRegistry,
      // No onDelete: the registry holds other functions' events and may predate this stack.
      policy: AwsCustomResourcePolicy.fromStatements([
        new iam.PolicyStatement({ actions: ['schemas:CreateRegistry'], resources: [registryArn] }),
      ]),
      installLatestAwsSdk: false,
      timeout: Duration.minutes(1),
      memorySize: 256,
      ...(providerExists ? {} : this.providerRoleAndLogs()),
    });

    this.schema = new eventschemas.CfnSchema(this, 'Schema', {
      registryName: TEST_EVENT_REGISTRY,
      schemaName: `_${props.function.functionName}-schema`,
      type: 'OpenApi3',
      description:
        'Lambda console shareable test events, deployed with the stack (edits made in the console are replaced on the next deploy that changes them)',
      content,
    });
    this.schema.node.addDependency(this.registry);

    if (!providerExists) {
      const provider = stack.node.tryFindChild(AWS_CUSTOM_RESOURCE_PROVIDER_ID);
      if (provider !== undefined) acknowledgeCustomResourceProviderNagFindings(provider);
    }
  }

  /** A role that may write its own log group only (no managed policy), and that log group. */
  private providerRoleAndLogs(): { role: iam.Role; logGroup: logs.LogGroup } {
    const logGroup = new logs.LogGroup(this, 'ProviderLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new iam.Role(this, 'ProviderRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'AwsCustomResource provider: its log group and the listed SDK calls only',
    });
    logGroup.grantWrite(role);
    return { role, logGroup };
  }
}
