/**
 * The reminder delivery job and the outbox in the synthesized ContestSync template (bundling
 * skipped): a minute schedule, its own lease key, exactly the DynamoDB calls the job makes (the
 * Query on byDue, the claim, the contests' BatchGetItem and the claim's ConditionCheck on them,
 * PutItem on its own outbox keys), its events' source and schema, its console test events
 * deployed like the sync's; one job per `contestSync:dueShards`, the same DUE_SHARDS for every job
 * and the sync; and the windows of a redrive (outbox TTL, dead letters) as lambda/event-windows.ts sets them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../lambda/contract.js';
import { REMINDER_DUE_SCHEMA_VERSION, deliveryLeaseKey, deliveryRunRecordPrefix } from '../../lambda/delivery/schema.js';
import { PLATFORMS } from '../../lambda/sources/platforms.js';
import { DELIVERY_ACTIONS, EVENT_SOURCES, DELIVERY_CONSOLE_TEST_EVENTS, consoleTestEventPayloads } from '../../lib/contest-sync-stack.js';
import { EVENT_WINDOWS } from '../../lambda/event-windows.js';
import { CONTEXT_KEYS } from '../../lib/config.js';
import { findDeliveryFunction, findSyncFunction, synthTemplate, type CfnTemplate } from '../../local/template.js';

type Resource = { Type: string; Properties: Record<string, any> };
let json: CfnTemplate;
let fn: Resource;
let fnId: string;

beforeAll(async () => {
  ({ template: json } = await synthTemplate({ bundle: false }));
  const found = findDeliveryFunction(json, 0);
  fn = found.resource as Resource;
  fnId = found.logicalId;
});

const resources = () => json.Resources as Record<string, Resource>;
const variables = () => fn.Properties.Environment.Variables as Record<string, any>;
const statements = (): any[] => {
  const roleId = fn.Properties.Role['Fn::GetAtt'][0] as string;
  return Object.values(resources())
    .filter((r) => r.Type === 'AWS::IAM::Policy' && (r.Properties.Roles as { Ref: string }[]).some((role) => role.Ref === roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement as any[]);
};
const tableRef = (name: string) =>
  (findSyncFunction(json).resource.Properties?.Environment as { Variables: Record<string, { Ref: string }> }).Variables[name]!.Ref;

describe('reminder delivery job', () => {
  it('is a separate function from the sync, on the same tables, serving shard 0 under its own lease', () => {
    expect(fnId).not.toBe(findSyncFunction(json).logicalId);
    expect(variables()).toMatchObject({
      DUE_SHARD: '0',
      DUE_SHARDS: '1',
      LEASE_KEY: deliveryLeaseKey(0),
      RUN_RECORD_PREFIX: deliveryRunRecordPrefix(0),
      SCHEDULE_RATE_MINUTES: '1',
      OUTBOX_EVENT_SOURCE: EVENT_SOURCES.reminders,
      [ENV.contestsTable]: { Ref: tableRef(ENV.contestsTable) },
      [ENV.remindersTable]: { Ref: tableRef(ENV.remindersTable) },
    });
    expect(variables()[ENV.codeforcesApiUrl]).toBeUndefined();
    expect(fn.Properties).toMatchObject({ Runtime: 'nodejs22.x', Timeout: 120 });
  });

  it('runs every minute', () => {
    const rules = Object.values(resources()).filter(
      (r) =>
        r.Type === 'AWS::Events::Rule' && (r.Properties.Targets as { Arn: unknown }[]).some((t) => JSON.stringify(t.Arn).includes(fnId)),
    );
    expect(rules.map((r) => r.Properties.ScheduleExpression)).toEqual(['rate(1 minute)']);
  });

  it('may send exactly its calls to the data tables: Query on byDue only, UpdateItem on Reminders, BatchGetItem and ConditionCheckItem on Contests', () => {
    const data = statements().filter((s) => ['RemindersDueIndex', 'RemindersClaim', 'ContestsReadCheck'].includes(s.Sid));
    const reminders = tableRef(ENV.remindersTable);
    const contests = tableRef(ENV.contestsTable);
    expect(data).toEqual([
      {
        Sid: 'RemindersDueIndex',
        Effect: 'Allow',
        Action: DELIVERY_ACTIONS.remindersIndex[0],
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [reminders, 'Arn'] }, '/index/byDue']] },
      },
      { Sid: 'RemindersClaim', Effect: 'Allow', Action: DELIVERY_ACTIONS.reminders[0], Resource: { 'Fn::GetAtt': [reminders, 'Arn'] } },
      {
        Sid: 'ContestsReadCheck',
        Effect: 'Allow',
        Action: ['dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem'],
        Resource: { 'Fn::GetAtt': [contests, 'Arn'] },
      },
    ]);
    expect(DELIVERY_ACTIONS.contests).toEqual(['dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem']);
    // No Scan anywhere, no grant on the table's other indexes, nothing on Contests but the read and the check.
    const all = JSON.stringify(statements());
    expect(all).not.toMatch(/dynamodb:Scan/);
    expect(all).not.toMatch(/index\/\*/);
  });

  it('writes only its own keys of the outbox, and its own lease item and run records', () => {
    const outbox = statements().find((s) => s.Sid === 'OutboxTable');
    expect(outbox).toMatchObject({
      Action: 'dynamodb:PutItem',
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${EVENT_SOURCES.reminders}#*`] } },
    });
    const coordination = statements().find((s) => s.Sid === 'CoordinationTable');
    expect(coordination.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [deliveryLeaseKey(0), `${deliveryRunRecordPrefix(0)}*`] },
    });
  });

  it('publishes the ReminderDue schema in the bus registry', () => {
    const schemas = Object.values(resources()).filter(
      (r) => r.Type === 'AWS::EventSchemas::Schema' && String(r.Properties.SchemaName ?? '').includes('ReminderDue'),
    );
    expect(schemas).toHaveLength(1);
    const content = JSON.parse(schemas[0]!.Properties.Content as string);
    expect(content.properties.source.enum).toEqual([EVENT_SOURCES.reminders]);
    expect(content.properties.detail.required).toEqual(
      expect.arrayContaining([
        'eventId',
        'contestId',
        'contest',
        'platform',
        'platformId',
        'userId',
        'minutesBefore',
        'startTimeSeconds',
        'name',
        'url',
      ]),
    );
    // Version 2: the contest id is the platform-qualified id (a string; an integer in version 1),
    // `contest` (deprecated) the same, the platform and the platform's own id beside it.
    const qualified = new RegExp(content.properties.detail.properties.contestId.pattern as string);
    expect(content.properties.detail.properties).toMatchObject({
      contestId: { type: 'string' },
      contest: { type: 'string', pattern: content.properties.detail.properties.contestId.pattern },
      platform: { type: 'string', enum: [...PLATFORMS] },
      platformId: { type: 'string' },
    });
    for (const id of ['codeforces:2051', 'atcoder:abc199', 'codechef:START151A', 'leetcode:weekly-contest-91'])
      expect(id).toMatch(qualified);
    for (const id of ['2051', 'codeforces:', 'codeforces:#1', 'Codeforces:2051']) expect(id).not.toMatch(qualified);
    expect(content.properties.detail.description).toContain(`version ${REMINDER_DUE_SCHEMA_VERSION}`);
    expect(REMINDER_DUE_SCHEMA_VERSION).toBe(2);
    expect(content.properties.detail.properties.intent).toBeUndefined();
  });

  it('keeps outbox items 7 days and dead letters 5, records given up after a day: the windows a redrive relies on', () => {
    const outbox = Object.entries(resources()).find(
      ([id, r]) => id.startsWith('Events') && r.Type === 'AWS::DynamoDB::Table' && r.Properties.StreamSpecification !== undefined,
    )!;
    const queue = Object.entries(resources()).find(([id, r]) => id.startsWith('Events') && r.Type === 'AWS::SQS::Queue')!;
    const mapping = Object.entries(resources()).find(([id, r]) => id.startsWith('Events') && r.Type === 'AWS::Lambda::EventSourceMapping')!;
    expect(queue[1].Properties.MessageRetentionPeriod).toBe(EVENT_WINDOWS.deadLetterRetentionSeconds);
    expect(mapping[1].Properties.MaximumRecordAgeInSeconds).toBe(EVENT_WINDOWS.maxRecordAgeSeconds);
    expect(outbox[1].Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'ttl', Enabled: true });
    // The jobs write the TTL from OUTBOX_RETENTION_DAYS.
    expect(variables().OUTBOX_RETENTION_DAYS).toBe(String(EVENT_WINDOWS.outboxRetentionDays));
    expect(JSON.stringify(json.Outputs?.OutboxTableName?.Value)).toContain(outbox[0]);
  });

  it('deploys its console test events like the sync does, each a payload the handler accepts', () => {
    const payloads = consoleTestEventPayloads(DELIVERY_CONSOLE_TEST_EVENTS);
    expect(Object.keys(payloads)).toEqual(['delivery-tick', 'delivery-now', 'delivery-dry-run']);
    const registry = Object.values(resources()).filter(
      (r) => r.Type === 'AWS::EventSchemas::Schema' && r.Properties.RegistryName === 'lambda-testevent-schemas',
    );
    const ours = registry.find((r) => JSON.stringify(r.Properties.SchemaName).includes(fnId));
    expect(ours, 'the delivery function has its shareable test events').toBeDefined();
    for (const name of DELIVERY_CONSOLE_TEST_EVENTS) expect(ours!.Properties.Content as string).toContain(`"${name}"`);
  });
});

describe('contestSync:dueShards', () => {
  it('deploys one delivery job per shard, each told its shard and the one setting, which the sync gets too', async () => {
    const { template } = await synthTemplate({ bundle: false, context: { [CONTEXT_KEYS.dueShards]: 3 } });
    const jobs = [0, 1, 2].map((shard) => findDeliveryFunction(template, shard).resource as Resource);
    for (const [shard, job] of jobs.entries()) {
      expect(job.Properties.Environment.Variables).toMatchObject({
        DUE_SHARD: String(shard),
        DUE_SHARDS: '3',
        LEASE_KEY: deliveryLeaseKey(shard),
        OUTBOX_EVENT_SOURCE: shard === 0 ? EVENT_SOURCES.reminders : `${EVENT_SOURCES.reminders}.${shard}`,
      });
    }
    expect(() => findDeliveryFunction(template, 3)).toThrow(/found 0/);
    expect((findSyncFunction(template).resource.Properties?.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject(
      {
        [ENV.dueShards]: '3',
      },
    );
  });
});
