/**
 * createTablesFromTemplate against DynamoDB Local: the tables that come out have the keys, GSI
 * and TTL of the synthesized template.
 */
import { randomBytes } from 'node:crypto';
import {
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  PutItemCommand,
  QueryCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { createTablesFromTemplate, tableDefinitionsFromTemplate, type TableNames } from '../../local/tables.js';
import { synthTemplate, type CfnTemplate } from '../../local/template.js';

let template: CfnTemplate;
let client: DynamoDBClient;
let names: TableNames;
const prefix = `infra-${randomBytes(3).toString('hex')}`;

beforeAll(async () => {
  ({ template } = await synthTemplate({ bundle: false }));
  client = localDynamoClient(inject('dynamoEndpoint'));
  names = await createTablesFromTemplate(client, template, prefix);
});

afterAll(() => client?.destroy());

const sortKeys = <T extends { AttributeName?: string }>(list: T[] | undefined): T[] =>
  [...(list ?? [])].sort((a, b) => (a.AttributeName ?? '').localeCompare(b.AttributeName ?? ''));

describe('tableDefinitionsFromTemplate', () => {
  it("finds the three tables and their roles from the function environment, the outbox from the stream its relay reads, the previous release's two from their outputs", () => {
    const definitions = tableDefinitionsFromTemplate(template);
    expect(definitions.map((d) => d.role).sort()).toEqual([
      'contests',
      'coordination',
      'door',
      'legacyContests',
      'legacyReminders',
      'outbox',
      'reminders',
    ]);
    expect(definitions.find((d) => d.role === 'outbox')).toMatchObject({
      keySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      ttlAttribute: 'ttl',
      streamViewType: 'NEW_IMAGE',
    });
    const byRole = Object.fromEntries(definitions.map((d) => [d.role, d]));
    expect(byRole.contests).toMatchObject({
      keySchema: [{ AttributeName: 'contestId', KeyType: 'HASH' }],
      ttlAttribute: 'expiresAt',
      globalSecondaryIndexes: [
        {
          indexName: 'byPlatformStart',
          keySchema: [
            { AttributeName: 'platform', KeyType: 'HASH' },
            { AttributeName: 'startTimeSeconds', KeyType: 'RANGE' },
          ],
          projection: { ProjectionType: 'ALL' },
        },
      ],
    });
    expect(byRole.contests!.attributeDefinitions).toContainEqual({ AttributeName: 'contestId', AttributeType: 'S' });
    expect(byRole.reminders).toMatchObject({
      keySchema: [
        { AttributeName: 'contestKey', KeyType: 'HASH' },
        { AttributeName: 'userId', KeyType: 'RANGE' },
      ],
      ttlAttribute: 'expiresAt',
      globalSecondaryIndexes: [
        {
          indexName: 'byDue',
          keySchema: [
            { AttributeName: 'dueShard', KeyType: 'HASH' },
            { AttributeName: 'dueAt', KeyType: 'RANGE' },
          ],
          projection: { ProjectionType: 'ALL' },
        },
        {
          indexName: 'byUser',
          keySchema: [
            { AttributeName: 'userId', KeyType: 'HASH' },
            { AttributeName: 'contestId', KeyType: 'RANGE' },
          ],
          projection: {
            ProjectionType: 'INCLUDE',
            NonKeyAttributes: ['minutesBefore', 'remindAt', 'dueAt', 'paused', 'notifiedStart', 'notifiedAt', 'expiresAt'],
          },
        },
      ],
    });
    expect(byRole.reminders!.attributeDefinitions).toContainEqual({ AttributeName: 'contestId', AttributeType: 'S' });
    // The previous release's tables: keyed by Codeforces' numbers, as it deployed them.
    expect(byRole.legacyContests).toMatchObject({
      keySchema: [{ AttributeName: 'contestId', KeyType: 'HASH' }],
      ttlAttribute: 'expiresAt',
    });
    expect(byRole.legacyContests!.attributeDefinitions).toContainEqual({ AttributeName: 'contestId', AttributeType: 'N' });
    expect(byRole.legacyReminders).toMatchObject({
      keySchema: [
        { AttributeName: 'contestId', KeyType: 'HASH' },
        { AttributeName: 'userId', KeyType: 'RANGE' },
      ],
      ttlAttribute: 'expiresAt',
    });
    expect(byRole.legacyReminders!.attributeDefinitions).toContainEqual({ AttributeName: 'contestId', AttributeType: 'N' });
    expect(byRole.coordination).toMatchObject({ keySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }], ttlAttribute: 'ttl' });
    for (const d of definitions) expect(d.logicalId in template.Resources).toBe(true);
  });

  it('refuses a template whose tables the function does not reference', () => {
    const broken = structuredClone(template);
    const [fnId] = Object.entries(broken.Resources as Record<string, { Type: string; Properties: any }>).find(
      ([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.CONTESTS_TABLE_NAME,
    )!;
    delete broken.Resources[fnId].Properties.Environment.Variables.CONTESTS_TABLE_NAME;
    expect(() => tableDefinitionsFromTemplate(broken)).toThrow(/CONTESTS_TABLE_NAME/);
  });
});

describe('createTablesFromTemplate', () => {
  it("names the tables after the prefix (the previous release's only when asked for)", () => {
    expect(names).toEqual({
      contests: `${prefix}-contests`,
      reminders: `${prefix}-reminders`,
      coordination: `${prefix}-coordination`,
      outbox: `${prefix}-outbox`,
      door: `${prefix}-door`,
    });
  });

  it("creates every table ACTIVE, on demand, with the template keys, attributes and GSIs; the previous release's with legacy: true", async () => {
    const legacyPrefix = `${prefix}-legacy`;
    const withLegacy = await createTablesFromTemplate(client, template, legacyPrefix, { legacy: true });
    expect(withLegacy).toMatchObject({
      legacyContests: `${legacyPrefix}-legacyContests`,
      legacyReminders: `${legacyPrefix}-legacyReminders`,
    });
    const definitions = tableDefinitionsFromTemplate(template);
    expect(definitions).toHaveLength(7);
    const isLegacy = (role: string) => role.startsWith('legacy');
    const created = [
      ...definitions.filter((d) => !isLegacy(d.role)).map((d) => [names[d.role], d] as const),
      ...definitions.map((d) => [withLegacy[d.role], d] as const),
    ];
    expect(created).toHaveLength(12);
    for (const [TableName, definition] of created) {
      expect(TableName, definition.role).toBeDefined();
      const { Table } = await client.send(new DescribeTableCommand({ TableName }));
      expect(Table?.TableStatus).toBe('ACTIVE');
      expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
      expect(Table?.KeySchema).toEqual(definition.keySchema);
      expect(sortKeys(Table?.AttributeDefinitions)).toEqual(sortKeys(definition.attributeDefinitions));
      const gsis = (Table?.GlobalSecondaryIndexes ?? []).map((g) => ({
        indexName: g.IndexName,
        keySchema: g.KeySchema,
        projection: {
          ProjectionType: g.Projection?.ProjectionType,
          ...(g.Projection?.NonKeyAttributes !== undefined ? { NonKeyAttributes: g.Projection.NonKeyAttributes } : {}),
        },
      }));
      expect(gsis).toEqual(definition.globalSecondaryIndexes);
    }
  });

  it('enables TTL on expiresAt (Contests, Reminders) and ttl (Coordination)', async () => {
    const ttl = async (TableName: string) => (await client.send(new DescribeTimeToLiveCommand({ TableName }))).TimeToLiveDescription;
    expect(await ttl(names.contests)).toMatchObject({ AttributeName: 'expiresAt', TimeToLiveStatus: 'ENABLED' });
    expect(await ttl(names.coordination)).toMatchObject({ AttributeName: 'ttl', TimeToLiveStatus: 'ENABLED' });
    expect(await ttl(names.reminders)).toMatchObject({ AttributeName: 'expiresAt', TimeToLiveStatus: 'ENABLED' });
  });

  it('serves "upcoming contests" from the byPlatformStart index', async () => {
    const put = (contestId: string, startTimeSeconds: number, platform = 'codeforces') =>
      client.send(
        new PutItemCommand({
          TableName: names.contests,
          Item: { contestId: { S: contestId }, platform: { S: platform }, startTimeSeconds: { N: String(startTimeSeconds) } },
        }),
      );
    await put('codeforces:1', 3_000);
    await put('codeforces:2', 1_000);
    await put('codeforces:3', 2_000);
    // Another platform's contest of the same number: its own item, not in Codeforces' answer.
    await put('atcoder:1', 2_500, 'atcoder');
    const { Items } = await client.send(
      new QueryCommand({
        TableName: names.contests,
        IndexName: 'byPlatformStart',
        KeyConditionExpression: 'platform = :p AND startTimeSeconds >= :t',
        ExpressionAttributeValues: { ':p': { S: 'codeforces' }, ':t': { N: '1500' } },
      }),
    );
    expect(Items?.map((i) => i.contestId?.S)).toEqual(['codeforces:3', 'codeforces:1']);
  });

  it('fails rather than reuse tables that already exist', async () => {
    await expect(createTablesFromTemplate(client, template, prefix)).rejects.toThrow(/exist|in use/i);
  });
});
