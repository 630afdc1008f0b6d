/**
 * Turns the DynamoDB tables of the synthesized template into tables in DynamoDB Local, so local
 * runs and tests use exactly the keys, indexes and TTL attributes that get deployed. Which table
 * plays which role is read from the sync function's environment (`CONTESTS_TABLE_NAME: {Ref: …}`),
 * and the previous release's tables (kept for the upgrade) from the stack's `Legacy…TableName`
 * outputs, not from logical ids.
 */
import {
  CreateTableCommand,
  ListTablesCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  type AttributeDefinition,
  type DynamoDBClient,
  type KeySchemaElement,
  type Projection,
  type StreamViewType,
} from '@aws-sdk/client-dynamodb';
import { ENV } from '../lambda/contract.js';
import { CALENDAR_ENV } from '../lambda/calendar/contract.js';
import { TABLE_ROLES, type TableRole } from '../lib/table-access.js';
import { findSyncFunction, type CfnTemplate } from './template.js';

export type { TableRole } from '../lib/table-access.js';

/**
 * Besides the data tables: the outbox of the jobs' events (the table whose stream the relay reads)
 * and the door's table (named by the door functions' DOOR_TABLE_NAME: docs/api.md).
 */
export type LocalTableRole = TableRole | 'outbox' | 'door' | LegacyTableRole;

/** The previous release's Contests and Reminders (numeric keys), which the upgrade copies from: created only when asked. */
export type LegacyTableRole = 'legacyContests' | 'legacyReminders';
const LEGACY_OUTPUTS: Record<LegacyTableRole, string> = {
  legacyContests: 'LegacyContestsTableName',
  legacyReminders: 'LegacyRemindersTableName',
};

export interface GlobalSecondaryIndexDefinition {
  indexName: string;
  keySchema: KeySchemaElement[];
  projection: Projection;
}

export interface TableDefinition {
  logicalId: string;
  role: LocalTableRole;
  keySchema: KeySchemaElement[];
  attributeDefinitions: AttributeDefinition[];
  globalSecondaryIndexes: GlobalSecondaryIndexDefinition[];
  /** TTL attribute (epoch seconds), if the table has TTL enabled. */
  ttlAttribute?: string;
  /** The stream's view type, if the table has a stream (the outbox). */
  streamViewType?: StreamViewType;
}

/** The data tables' local names, and the outbox's and the door's when the template has them. */
export type TableNames = Record<TableRole, string> & { outbox?: string; door?: string } & Partial<Record<LegacyTableRole, string>>;

const ENV_OF_ROLE: Record<TableRole, string> = {
  contests: ENV.contestsTable,
  reminders: ENV.remindersTable,
  coordination: ENV.coordinationTable,
};

const TABLE_TYPES = new Set(['AWS::DynamoDB::Table', 'AWS::DynamoDB::GlobalTable']);

interface CfnKey {
  AttributeName: string;
  KeyType: string;
}
export interface CfnTableProperties {
  KeySchema?: CfnKey[];
  AttributeDefinitions?: { AttributeName: string; AttributeType: string }[];
  GlobalSecondaryIndexes?: {
    IndexName: string;
    KeySchema: CfnKey[];
    Projection?: { ProjectionType?: string; NonKeyAttributes?: string[] };
  }[];
  TimeToLiveSpecification?: { AttributeName?: string; Enabled?: boolean };
  StreamSpecification?: { StreamViewType?: string };
}

const keySchema = (keys: CfnKey[] | undefined): KeySchemaElement[] =>
  (keys ?? []).map((k) => ({ AttributeName: k.AttributeName, KeyType: k.KeyType as KeySchemaElement['KeyType'] }));

/** Role of each table logical id, from the `{ Ref }` values of the sync function's environment. */
function rolesByLogicalId(template: CfnTemplate): Map<string, LocalTableRole> {
  const variables = (findSyncFunction(template).resource.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
  const roles = new Map<string, LocalTableRole>();
  // The outbox: the table whose stream an event source mapping (the relay's) reads.
  for (const resource of Object.values(
    (template?.Resources ?? {}) as Record<string, { Type: string; Properties?: { EventSourceArn?: { 'Fn::GetAtt'?: [string, string] } } }>,
  )) {
    const source = resource.Type === 'AWS::Lambda::EventSourceMapping' ? resource.Properties?.EventSourceArn?.['Fn::GetAtt'] : undefined;
    if (source?.[1] === 'StreamArn') roles.set(source[0], 'outbox');
  }
  for (const resource of Object.values((template?.Resources ?? {}) as Record<string, { Type: string; Properties?: any }>)) {
    const door =
      resource.Type === 'AWS::Lambda::Function' ? resource.Properties?.Environment?.Variables?.[CALENDAR_ENV.doorTable] : undefined;
    if (typeof door?.Ref === 'string') roles.set(door.Ref, 'door');
  }
  const outputs = (template?.Outputs ?? {}) as Record<string, { Value?: { Ref?: unknown } }>;
  for (const [role, output] of Object.entries(LEGACY_OUTPUTS) as [LegacyTableRole, string][]) {
    const ref = outputs[output]?.Value?.Ref;
    if (typeof ref === 'string') roles.set(ref, role);
  }
  for (const role of TABLE_ROLES) {
    const value = variables[ENV_OF_ROLE[role]] as { Ref?: unknown } | undefined;
    if (typeof value?.Ref !== 'string') {
      throw new Error(`sync function environment ${ENV_OF_ROLE[role]} is not a { Ref } to a table: ${JSON.stringify(value)}`);
    }
    roles.set(value.Ref, role);
  }
  return roles;
}

export function tableDefinitionsFromTemplate(template: CfnTemplate): TableDefinition[] {
  const roles = rolesByLogicalId(template);
  const resources = (template?.Resources ?? {}) as Record<string, { Type: string; Properties?: CfnTableProperties }>;
  const definitions: TableDefinition[] = [];
  for (const [logicalId, resource] of Object.entries(resources)) {
    if (!TABLE_TYPES.has(resource.Type)) continue;
    const role = roles.get(logicalId);
    if (role === undefined) throw new Error(`table ${logicalId} is not referenced by the sync function's environment`);
    const props = resource.Properties ?? {};
    const ttl = props.TimeToLiveSpecification;
    definitions.push({
      logicalId,
      role,
      keySchema: keySchema(props.KeySchema),
      attributeDefinitions: (props.AttributeDefinitions ?? []).map((a) => ({
        AttributeName: a.AttributeName,
        AttributeType: a.AttributeType as AttributeDefinition['AttributeType'],
      })),
      globalSecondaryIndexes: (props.GlobalSecondaryIndexes ?? []).map((gsi) => ({
        indexName: gsi.IndexName,
        keySchema: keySchema(gsi.KeySchema),
        projection: {
          ProjectionType: (gsi.Projection?.ProjectionType ?? 'ALL') as Projection['ProjectionType'],
          ...(gsi.Projection?.NonKeyAttributes === undefined ? {} : { NonKeyAttributes: gsi.Projection.NonKeyAttributes }),
        },
      })),
      ...(ttl?.Enabled === true && ttl.AttributeName !== undefined ? { ttlAttribute: ttl.AttributeName } : {}),
      ...(props.StreamSpecification?.StreamViewType !== undefined
        ? { streamViewType: props.StreamSpecification.StreamViewType as StreamViewType }
        : {}),
    });
  }
  for (const role of TABLE_ROLES) {
    const count = definitions.filter((d) => d.role === role).length;
    if (count !== 1) throw new Error(`expected one ${role} table in the template, found ${count}`);
  }
  return definitions;
}

/**
 * Creates one table in DynamoDB Local from the Properties of an `AWS::DynamoDB::Table` resource
 * (keys, attributes, GSIs, TTL; on demand) and waits until it is ACTIVE: for any app's template
 * (examples/heartbeat); contest-sync's three tables go through createTablesFromTemplate below.
 */
export async function createTableFromResource(client: DynamoDBClient, TableName: string, properties: CfnTableProperties): Promise<void> {
  const gsis = properties.GlobalSecondaryIndexes ?? [];
  await client.send(
    new CreateTableCommand({
      TableName,
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: keySchema(properties.KeySchema),
      AttributeDefinitions: (properties.AttributeDefinitions ?? []).map((a) => ({
        AttributeName: a.AttributeName,
        AttributeType: a.AttributeType as AttributeDefinition['AttributeType'],
      })),
      ...(gsis.length === 0
        ? {}
        : {
            GlobalSecondaryIndexes: gsis.map((gsi) => ({
              IndexName: gsi.IndexName,
              KeySchema: keySchema(gsi.KeySchema),
              Projection: {
                ProjectionType: (gsi.Projection?.ProjectionType ?? 'ALL') as Projection['ProjectionType'],
                ...(gsi.Projection?.NonKeyAttributes === undefined ? {} : { NonKeyAttributes: gsi.Projection.NonKeyAttributes }),
              },
            })),
          }),
      ...streamOf(properties),
    }),
  );
  await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName });
  const ttl = properties.TimeToLiveSpecification;
  if (ttl?.Enabled === true && ttl.AttributeName !== undefined) {
    await client.send(
      new UpdateTimeToLiveCommand({ TableName, TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: true } }),
    );
  }
}

/** The table's stream as the template declares it (DynamoDB Local serves DynamoDB Streams). */
function streamOf(properties: CfnTableProperties): { StreamSpecification?: { StreamEnabled: true; StreamViewType: StreamViewType } } {
  const view = properties.StreamSpecification?.StreamViewType;
  return view === undefined ? {} : { StreamSpecification: { StreamEnabled: true, StreamViewType: view as StreamViewType } };
}

/** The local table names for a prefix: `${namePrefix}-contests` etc. */
export function localTableNames(namePrefix: string, withOutbox = false, withDoor = false): TableNames {
  const names = Object.fromEntries(TABLE_ROLES.map((role) => [role, `${namePrefix}-${role}`])) as TableNames;
  return { ...names, ...(withOutbox ? { outbox: `${namePrefix}-outbox` } : {}), ...(withDoor ? { door: `${namePrefix}-door` } : {}) };
}

/** The tables of the upgrade to qualified keys, locally (`npm run migrate -- --local`): the previous release's beside this one's. */
export function localMigrationTables(namePrefix: string) {
  const names = localTableNames(namePrefix);
  return {
    legacyContests: `${namePrefix}-legacyContests`,
    legacyReminders: `${namePrefix}-legacyReminders`,
    contests: names.contests,
    reminders: names.reminders,
    coordination: names.coordination,
  };
}

/**
 * Creates the template's tables as `${namePrefix}-contests` etc. (on-demand), waits until they
 * are ACTIVE and enables TTL where the template has it. Fails if a table already exists, unless
 * `existing: 'keep'` (a persisted database): then tables already there are left as they are. The
 * previous release's tables only with `legacy: true` (an upgrade's test).
 */
export async function createTablesFromTemplate(
  client: DynamoDBClient,
  template: CfnTemplate,
  namePrefix: string,
  options: { existing?: 'fail' | 'keep'; legacy?: boolean } = {},
): Promise<TableNames> {
  const isLegacy = (role: LocalTableRole) => role === 'legacyContests' || role === 'legacyReminders';
  const definitions = tableDefinitionsFromTemplate(template).filter((d) => options.legacy === true || !isLegacy(d.role));
  const names: TableNames = {
    ...localTableNames(
      namePrefix,
      definitions.some((d) => d.role === 'outbox'),
      definitions.some((d) => d.role === 'door'),
    ),
    ...Object.fromEntries(definitions.filter((d) => isLegacy(d.role)).map((d) => [d.role, `${namePrefix}-${d.role}`])),
  };
  const present = new Set<string>();
  if (options.existing === 'keep') {
    let ExclusiveStartTableName: string | undefined;
    do {
      const page = await client.send(new ListTablesCommand({ ExclusiveStartTableName }));
      for (const name of page.TableNames ?? []) present.add(name);
      ExclusiveStartTableName = page.LastEvaluatedTableName;
    } while (ExclusiveStartTableName !== undefined);
  }
  await Promise.all(
    definitions
      .filter((definition) => !present.has(names[definition.role]!))
      .map(async (definition) => {
        const TableName = names[definition.role]!;
        await client.send(
          new CreateTableCommand({
            TableName,
            BillingMode: 'PAY_PER_REQUEST',
            KeySchema: definition.keySchema,
            AttributeDefinitions: definition.attributeDefinitions,
            ...(definition.globalSecondaryIndexes.length === 0
              ? {}
              : {
                  GlobalSecondaryIndexes: definition.globalSecondaryIndexes.map((gsi) => ({
                    IndexName: gsi.indexName,
                    KeySchema: gsi.keySchema,
                    Projection: gsi.projection,
                  })),
                }),
            ...(definition.streamViewType !== undefined
              ? { StreamSpecification: { StreamEnabled: true, StreamViewType: definition.streamViewType } }
              : {}),
          }),
        );
        await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName });
        if (definition.ttlAttribute !== undefined) {
          await client.send(
            new UpdateTimeToLiveCommand({
              TableName,
              TimeToLiveSpecification: { AttributeName: definition.ttlAttribute, Enabled: true },
            }),
          );
        }
      }),
  );
  return names;
}
