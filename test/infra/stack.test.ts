/**
 * Assertions on the synthesized ContestSync template (bundling skipped: fast, no esbuild).
 * One synth for the whole file.
 */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV, EVENT_SOURCES, LEASE_PK, METRIC, METRICS_NAMESPACE, RUN_PK_PREFIX, SERVICE_NAME } from '../../lambda/contract.js';
import { SYNC_DUE_INDEX_ACTIONS, TABLE_ACTIONS, TABLE_ROLES, type TableRole } from '../../lib/table-access.js';
import { synthTemplate, type CfnTemplate } from '../../local/template.js';

let json: CfnTemplate;
/** The template less the event delivery (OutboxDelivery `Events`), which has its own block below. */
let template: Template;
let full: Template;

type Resources = Record<
  string,
  { Type: string; Properties: Record<string, any>; DependsOn?: string[]; DeletionPolicy?: string; UpdateReplacePolicy?: string }
>;

/**
 * The sync's part of the stack: the reminder delivery jobs (`Delivery*`) and the outbox (`Events`)
 * have their own file, test/infra/delivery.test.ts.
 */
// The other sources' sync jobs have their own file, test/infra/source-jobs.test.ts.
const OTHER_PARTS = /^(Delivery\d*|Events|Door|Webhooks|SyncAtCoder|SyncCodeChef|SyncLeetCode)[A-Z]/;
const syncPart = (found: Resources): Resources => Object.fromEntries(Object.entries(found).filter(([id]) => !OTHER_PARTS.test(id)));

function ofType(type: string): Resources {
  return syncPart(template.findResources(type) as Resources);
}

function only(type: string, props: Record<string, unknown> = {}): [string, Resources[string]] {
  const found = Object.entries(
    syncPart(template.findResources(type, props ? { Properties: Match.objectLike(props) } : undefined) as Resources),
  );
  expect(found, `${type} matching ${JSON.stringify(props)}`).toHaveLength(1);
  return found[0]!;
}

/** Logical id of each table, from the function's `{Ref}` environment. */
function tableIds(): Record<TableRole, string> {
  const [, fn] = syncFunction();
  const vars = fn.Properties.Environment.Variables;
  return {
    contests: vars[ENV.contestsTable].Ref,
    reminders: vars[ENV.remindersTable].Ref,
    coordination: vars[ENV.coordinationTable].Ref,
  };
}

/** The sync function: the one that calls Codeforces (the delivery job and the outbox relay do not). */
function syncFunction(): [string, Resources[string]] {
  return only('AWS::Lambda::Function', {
    Handler: 'index.handler',
    Runtime: 'nodejs22.x',
    Environment: { Variables: Match.objectLike({ [ENV.codeforcesApiUrl]: Match.anyValue() }) },
  });
}

/** The sync function's own log group (the console test events' provider has the other one). */
function syncLogGroup(): [string, Resources[string]] {
  const groups = ofType('AWS::Logs::LogGroup');
  expect(Object.keys(groups)).toHaveLength(2);
  const id = syncFunction()[1].Properties.LoggingConfig.LogGroup.Ref as string;
  expect(groups[id], 'the sync function logs to a log group of the stack').toBeDefined();
  return [id, groups[id]!];
}

function alarm(metricName: string): Record<string, any> {
  const [, resource] = only('AWS::CloudWatch::Alarm', { MetricName: metricName });
  return resource.Properties;
}

beforeAll(async () => {
  ({ template: json } = await synthTemplate({ bundle: false }));
  full = Template.fromJSON(json);
  const resources = Object.fromEntries(
    Object.entries(json.Resources as Record<string, unknown>).filter(([id]) => !id.startsWith('Events')),
  );
  template = Template.fromJSON({ ...json, Resources: resources });
});

/** The previous release's tables (numeric keys), kept untouched as what the upgrade copies. */
const LEGACY_TABLES = { contests: 'TablesContests029826AF', reminders: 'TablesReminders622DEDAA' } as const;

const BY_USER_ATTRIBUTES = ['minutesBefore', 'remindAt', 'dueAt', 'paused', 'notifiedStart', 'notifiedAt', 'expiresAt'];

function contestsTableChecks(table: Resources[string], contestIdType: 'S' | 'N'): void {
  expect(table.Properties.KeySchema).toEqual([{ AttributeName: 'contestId', KeyType: 'HASH' }]);
  expect(table.Properties.AttributeDefinitions).toEqual(
    expect.arrayContaining([
      { AttributeName: 'contestId', AttributeType: contestIdType },
      { AttributeName: 'platform', AttributeType: 'S' },
      { AttributeName: 'startTimeSeconds', AttributeType: 'N' },
    ]),
  );
  expect(table.Properties.AttributeDefinitions).toHaveLength(3);
  expect(table.Properties.GlobalSecondaryIndexes).toEqual([
    {
      IndexName: 'byPlatformStart',
      KeySchema: [
        { AttributeName: 'platform', KeyType: 'HASH' },
        { AttributeName: 'startTimeSeconds', KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'ALL' },
    },
  ]);
  expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
  expect(table.DeletionPolicy).toBe('Retain');
  expect(table.UpdateReplacePolicy).toBe('Retain');
}

/** The Reminders indexes, the same on both tables (the key types are in AttributeDefinitions). */
const REMINDERS_INDEXES = [
  {
    IndexName: 'byDue',
    KeySchema: [
      { AttributeName: 'dueShard', KeyType: 'HASH' },
      { AttributeName: 'dueAt', KeyType: 'RANGE' },
    ],
    Projection: { ProjectionType: 'ALL' },
  },
  {
    IndexName: 'byUser',
    KeySchema: [
      { AttributeName: 'userId', KeyType: 'HASH' },
      { AttributeName: 'contestId', KeyType: 'RANGE' },
    ],
    Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: BY_USER_ATTRIBUTES },
  },
];

describe('tables', () => {
  it("has exactly five on-demand tables with PITR and no explicit names: the three the functions use and the previous release's two", () => {
    const tables = ofType('AWS::DynamoDB::Table');
    expect(Object.keys(tables).sort()).toEqual([...new Set([...Object.values(tableIds()), ...Object.values(LEGACY_TABLES)])].sort());
    expect(Object.keys(tables)).toHaveLength(5);
    for (const table of Object.values(tables)) {
      expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
      expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(table.Properties.TableName).toBeUndefined();
    }
  });

  it('Contests: pk contestId (S, the qualified id), TTL expiresAt, GSI byPlatformStart (platform S + startTimeSeconds N, ALL), retained', () => {
    contestsTableChecks(json.Resources[tableIds().contests], 'S');
  });

  it('Reminders: pk contestKey (S, <contestId>#<bucket>), sk userId (S), TTL expiresAt, the sparse byDue GSI (dueShard N, dueAt N), byUser (userId S, contestId S, what a listed reminder shows), retained', () => {
    const table = json.Resources[tableIds().reminders];
    expect(table.Properties.KeySchema).toEqual([
      { AttributeName: 'contestKey', KeyType: 'HASH' },
      { AttributeName: 'userId', KeyType: 'RANGE' },
    ]);
    expect(table.Properties.AttributeDefinitions).toEqual([
      { AttributeName: 'contestKey', AttributeType: 'S' },
      { AttributeName: 'userId', AttributeType: 'S' },
      { AttributeName: 'dueShard', AttributeType: 'N' },
      { AttributeName: 'dueAt', AttributeType: 'N' },
      { AttributeName: 'contestId', AttributeType: 'S' },
    ]);
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    expect(table.Properties.GlobalSecondaryIndexes).toEqual(REMINDERS_INDEXES);
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
  });

  it("keeps the previous release's Contests (pk contestId N) and Reminders (pk contestId N, sk userId S) as deployed, retained", () => {
    contestsTableChecks(json.Resources[LEGACY_TABLES.contests], 'N');
    const reminders = json.Resources[LEGACY_TABLES.reminders];
    expect(reminders.Properties.KeySchema).toEqual([
      { AttributeName: 'contestId', KeyType: 'HASH' },
      { AttributeName: 'userId', KeyType: 'RANGE' },
    ]);
    expect(reminders.Properties.AttributeDefinitions).toEqual([
      { AttributeName: 'contestId', AttributeType: 'N' },
      { AttributeName: 'userId', AttributeType: 'S' },
      { AttributeName: 'dueShard', AttributeType: 'N' },
      { AttributeName: 'dueAt', AttributeType: 'N' },
    ]);
    expect(reminders.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    expect(reminders.Properties.GlobalSecondaryIndexes).toEqual(REMINDERS_INDEXES);
    expect(reminders.DeletionPolicy).toBe('Retain');
    expect(reminders.UpdateReplacePolicy).toBe('Retain');
  });

  it("grants the previous release's tables only to the sync, only Scan (the upgrade's copy), and names them only to the sync and the HTTP API", () => {
    const [syncId, sync] = syncFunction();
    const syncRole = sync.Properties.Role['Fn::GetAtt'][0];
    for (const id of Object.values(LEGACY_TABLES)) {
      for (const [policyId, policy] of Object.entries(full.findResources('AWS::IAM::Policy'))) {
        const onLegacy = (policy.Properties.PolicyDocument.Statement as any[]).filter((st) => JSON.stringify(st.Resource).includes(id));
        if (policy.Properties.Roles.some((r: { Ref?: string }) => r.Ref === syncRole)) {
          expect(
            onLegacy.map((st) => [st.Sid, st.Action]),
            policyId,
          ).toEqual([['MigrationLegacyTables', 'dynamodb:Scan']]);
        } else expect(onLegacy, `${policyId} grants ${id}`).toEqual([]);
      }
      for (const [fnId, fn] of Object.entries(full.findResources('AWS::Lambda::Function'))) {
        const told = JSON.stringify(fn.Properties.Environment ?? {}).includes(id);
        const api = String(fn.Properties.Description ?? '').startsWith('contest-sync HTTP API');
        expect(told, `${fnId} is told of ${id}`).toBe(fnId === syncId || api);
      }
    }
  });

  it('Coordination: pk pk (S), TTL ttl, deleted with the stack', () => {
    const table = json.Resources[tableIds().coordination];
    expect(table.Properties.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    expect(table.Properties.AttributeDefinitions).toEqual([{ AttributeName: 'pk', AttributeType: 'S' }]);
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'ttl', Enabled: true });
    expect(table.DeletionPolicy).toBe('Delete');
  });
});

describe('function', () => {
  it('runs Node.js 22 on arm64 with 256 MB and the context timeout, without X-Ray tracing', () => {
    const [, fn] = syncFunction();
    expect(fn.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      MemorySize: 256,
      Timeout: 120,
      Handler: 'index.handler',
    });
    // Nothing is instrumented: tracing off, and so no X-Ray grant (docs/stack.md, "Tracing").
    expect(fn.Properties.TracingConfig).toBeUndefined();
  });

  it('gets every contract environment variable with the defaults', () => {
    const [, fn] = syncFunction();
    const ids = tableIds();
    expect(fn.Properties.Environment.Variables).toEqual({
      [ENV.contestsTable]: { Ref: ids.contests },
      [ENV.remindersTable]: { Ref: ids.reminders },
      [ENV.coordinationTable]: { Ref: ids.coordination },
      [ENV.codeforcesApiUrl]: 'https://codeforces.com/api',
      [ENV.leaseDurationSeconds]: '30',
      [ENV.finishedRetentionDays]: '7',
      [ENV.scheduleRateMinutes]: '60',
      [ENV.missingSyncsBeforeDelete]: '3',
      [ENV.acceptHeldAfterReplies]: '3',
      // The byDue partitions (contestSync:dueShards), the same the delivery jobs get.
      [ENV.dueShards]: '1',
      // The upgrade's copy source (docs/runbook.md, "Upgrading to qualified keys").
      [ENV.legacyContestsTable]: { Ref: LEGACY_TABLES.contests },
      [ENV.legacyRemindersTable]: { Ref: LEGACY_TABLES.reminders },
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_LOG_LEVEL: 'INFO',
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      // Set by ScheduledSingletonJob for the package's wrapper (the contract's JOB_ENV).
      LEASE_KEY: LEASE_PK,
      RUN_RECORD_PREFIX: RUN_PK_PREFIX,
      // How long a duplicate invocation can arrive: the ledger remembers an interval that long.
      MAX_EVENT_AGE_SECONDS: '7200',
      // Its contest events go through the stack's outbox (docs/events.md).
      OUTBOX_TABLE_NAME: { Ref: expect.stringMatching(/^EventsTable/) },
      OUTBOX_EVENT_SOURCE: EVENT_SOURCES.contests,
      OUTBOX_RETENTION_DAYS: '7',
      NODE_OPTIONS: '--enable-source-maps',
    });
    expect(new Set(Object.values(ids)).size).toBe(3);
  });

  it('logs JSON at INFO to its own log group with 30-day retention', () => {
    const [, fn] = syncFunction();
    const [logGroupId, logGroup] = syncLogGroup();
    expect(logGroup.Properties.RetentionInDays).toBe(30);
    expect(fn.Properties.LoggingConfig).toEqual({ LogFormat: 'JSON', LogGroup: { Ref: logGroupId }, ApplicationLogLevel: 'INFO' });
  });

  it('has its own role without managed policies', () => {
    const [, fn] = syncFunction();
    const roleId = fn.Properties.Role['Fn::GetAtt'][0];
    const role = json.Resources[roleId];
    expect(role.Type).toBe('AWS::IAM::Role');
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      expect.objectContaining({ Action: 'sts:AssumeRole', Principal: { Service: 'lambda.amazonaws.com' } }),
    ]);
  });
});

describe('IAM', () => {
  const allStatementsOfFunctionRole = (): any[] => {
    const [, fn] = syncFunction();
    const roleId = fn.Properties.Role['Fn::GetAtt'][0];
    const policies = Object.values(ofType('AWS::IAM::Policy')).filter((p) =>
      p.Properties.Roles.some((r: { Ref?: string }) => r.Ref === roleId),
    );
    expect(policies).toHaveLength(1);
    return policies[0]!.Properties.PolicyDocument.Statement;
  };
  /** The sync's own grants; the upgrade's (Sid `Migration…`) are pinned apart below. */
  const statementsOfFunctionRole = (): any[] => allStatementsOfFunctionRole().filter((st) => !String(st.Sid).startsWith('Migration'));

  it("grants the upgrade's copy exactly MIGRATION_ACTIONS: Scan of the previous tables, the copies' puts, the marker's and the shard leases' keys", () => {
    const upgrade = allStatementsOfFunctionRole().filter((st) => String(st.Sid).startsWith('Migration'));
    const arn = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
    const keys = (leadingKeys: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': leadingKeys } });
    expect(upgrade).toEqual([
      {
        Sid: 'MigrationLegacyTables',
        Effect: 'Allow',
        Action: 'dynamodb:Scan',
        Resource: [arn(LEGACY_TABLES.contests), arn(LEGACY_TABLES.reminders)],
      },
      { Sid: 'MigrationReminderCopies', Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: arn(tableIds().reminders) },
      {
        Sid: 'MigrationMarker',
        Effect: 'Allow',
        Action: ['dynamodb:GetItem', 'dynamodb:PutItem'],
        Resource: arn(tableIds().coordination),
        Condition: keys(['migration#qualified-keys']),
      },
      {
        Sid: 'MigrationShardLeases',
        Effect: 'Allow',
        Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        Resource: arn(tableIds().coordination),
        Condition: keys(Array.from({ length: 16 }, (_, shard) => `lease#reminder-delivery#${shard}`)),
      },
    ]);
    for (const statement of upgrade) expect(JSON.stringify(statement.Resource)).not.toMatch(/"\*"|\/\*/);
  });
  const actionsOf = (statement: any): string[] => [statement.Action].flat().sort();

  it.each(TABLE_ROLES)(
    "grants exactly the listed actions on the %s table ARN, nothing on its indexes but the sync's byDue Query",
    (role) => {
      const tableArn = { 'Fn::GetAtt': [tableIds()[role], 'Arn'] };
      const statements = statementsOfFunctionRole().filter((s) => JSON.stringify(s.Resource).includes(tableIds()[role]));
      const onTable = statements.filter((s) => JSON.stringify(s.Resource) === JSON.stringify(tableArn));
      expect(onTable).toHaveLength(1);
      expect(onTable[0].Effect).toBe('Allow');
      expect(actionsOf(onTable[0])).toEqual([...TABLE_ACTIONS[role]].sort());
      const onIndexes = statements.filter((s) => s !== onTable[0]);
      if (role !== 'reminders') {
        expect(onIndexes).toEqual([]);
        return;
      }
      // The sweep of the byDue partitions a lowered DUE_SHARDS retired: a Query on that one index.
      expect(onIndexes).toHaveLength(1);
      expect(onIndexes[0].Effect).toBe('Allow');
      expect(onIndexes[0].Resource).toEqual({ 'Fn::Join': ['', [tableArn, '/index/byDue']] });
      expect(actionsOf(onIndexes[0])).toEqual([...SYNC_DUE_INDEX_ACTIONS].sort());
      expect(SYNC_DUE_INDEX_ACTIONS).toEqual(['dynamodb:Query']);
    },
  );

  it('pins the table action lists (change lib/table-access.ts and this test together): no Query on Coordination', () => {
    expect(TABLE_ACTIONS).toEqual({
      contests: ['dynamodb:Scan', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
      reminders: ['dynamodb:Query', 'dynamodb:UpdateItem'],
      coordination: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:ConditionCheckItem'],
    });
  });

  it('limits the Coordination grants to the lease item and the run records (dynamodb:LeadingKeys)', () => {
    const statements = statementsOfFunctionRole().filter((s) => JSON.stringify(s.Resource).includes(tableIds().coordination));
    expect(statements).toHaveLength(1);
    expect(statements[0].Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['lease#contest-sync', 'run#*'] },
    });
    for (const role of ['contests', 'reminders'] as const) {
      const [statement] = statementsOfFunctionRole().filter((s) => JSON.stringify(s.Resource).includes(tableIds()[role]));
      expect(statement.Condition).toBeUndefined();
    }
  });

  it('uses no wildcard action or resource anywhere (no X-Ray grant: tracing is off)', () => {
    const statements = statementsOfFunctionRole();
    for (const statement of statements) {
      for (const action of actionsOf(statement)) {
        expect(action).not.toContain('*');
        expect(action).not.toMatch(/^xray:/);
      }
      expect(JSON.stringify(statement.Resource)).not.toMatch(/"\*"|\/\*/);
    }
    const dynamoActions = statements.flatMap(actionsOf).filter((a) => a.startsWith('dynamodb:'));
    // The data tables' actions, the Query of the byDue index (retired shards), and the PutItem of its
    // outbox items (keys scoped to its source).
    expect(dynamoActions).toHaveLength(Object.values(TABLE_ACTIONS).flat().length + SYNC_DUE_INDEX_ACTIONS.length + 1);
    const outbox = statements.find((s) => s.Sid === 'OutboxTable');
    expect(outbox?.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${EVENT_SOURCES.contests}#*`] } });
  });

  it('lets the function write only to its own log group and send only to the failure queue', () => {
    const [logGroupId] = syncLogGroup();
    const [queueId] = only('AWS::SQS::Queue');
    const statements = statementsOfFunctionRole();
    const logs = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
    expect(logs).toEqual([expect.objectContaining({ Resource: { 'Fn::GetAtt': [logGroupId, 'Arn'] } })]);
    const sqs = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('sqs:')));
    expect(sqs).toEqual([expect.objectContaining({ Resource: { 'Fn::GetAtt': [queueId, 'Arn'] } })]);
    expect(actionsOf(sqs[0])).toContain('sqs:SendMessage');
  });
});

describe('schedule, async invocation and failure queue', () => {
  it('schedules the function hourly at minute 0 with the queue as target DLQ', () => {
    const [fnId] = syncFunction();
    const [queueId] = only('AWS::SQS::Queue');
    const [, rule] = only('AWS::Events::Rule');
    expect(rule.Properties.ScheduleExpression).toBe('cron(0 * * * ? *)');
    expect(rule.Properties.State).toBe('ENABLED');
    expect(rule.Properties.Targets).toEqual([
      expect.objectContaining({
        Arn: { 'Fn::GetAtt': [fnId, 'Arn'] },
        DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queueId, 'Arn'] } },
        RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 7200 },
      }),
    ]);
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'events.amazonaws.com',
      FunctionName: { 'Fn::GetAtt': [fnId, 'Arn'] },
    });
  });

  it('retries async invocations twice within 2 hours, then sends them to the queue', () => {
    const [fnId] = syncFunction();
    const [queueId] = only('AWS::SQS::Queue');
    const [, config] = only('AWS::Lambda::EventInvokeConfig');
    expect(config.Properties).toEqual({
      FunctionName: { Ref: fnId },
      Qualifier: '$LATEST',
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 7200,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
    });
  });

  it('keeps failures 14 days, SQS-encrypted, TLS only', () => {
    const [queueId, queue] = only('AWS::SQS::Queue');
    expect(queue.Properties.MessageRetentionPeriod).toBe(14 * 24 * 3600);
    expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
    const [, policy] = only('AWS::SQS::QueuePolicy');
    expect(policy.Properties.Queues).toEqual([{ Ref: queueId }]);
    expect(policy.Properties.PolicyDocument.Statement).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Effect: 'Deny',
          Action: 'sqs:*',
          Principal: { AWS: '*' },
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'sqs:SendMessage',
          Principal: { Service: 'events.amazonaws.com' },
        }),
      ]),
    );
  });
});

describe('deploy-time trigger', () => {
  it('invokes the current function version synchronously after the tables and the role policy exist', () => {
    const [, trigger] = only('Custom::Trigger');
    const [fnId] = syncFunction();
    const versionId: string = trigger.Properties.HandlerArn.Ref;
    expect(json.Resources[versionId]).toMatchObject({ Type: 'AWS::Lambda::Version', Properties: { FunctionName: { Ref: fnId } } });
    expect(trigger.Properties).toMatchObject({
      InvocationType: 'RequestResponse',
      ExecuteOnHandlerChange: true,
      Timeout: String((120 + 30) * 1000),
    });
    const ids = tableIds();
    expect(trigger.DependsOn).toEqual(expect.arrayContaining([ids.contests, ids.reminders, ids.coordination]));
    const policyIds = Object.keys(ofType('AWS::IAM::Policy'));
    expect(trigger.DependsOn!.some((d) => policyIds.includes(d))).toBe(true);
  });
});

describe('alarms', () => {
  const topicRef = () => ({ Ref: only('AWS::SNS::Topic')[0] });
  const emfDimensions = [{ Name: 'service', Value: SERVICE_NAME }];

  it('has exactly the five alarms, each described and notifying the topic', () => {
    const alarms = Object.values(ofType('AWS::CloudWatch::Alarm'));
    expect(alarms.map((a) => a.Properties.MetricName).sort()).toEqual(
      [METRIC.runSucceeded, METRIC.runFailed, 'Errors', 'ApproximateNumberOfMessagesVisible', METRIC.leaseLost].sort(),
    );
    for (const a of alarms) {
      expect(a.Properties.AlarmActions).toEqual([topicRef()]);
      expect(a.Properties.AlarmDescription.length).toBeGreaterThan(80);
      expect(a.Properties.AlarmDescription).toMatch(/first/i);
    }
  });

  it('NoSuccessfulSync: RunSucceeded Sum per schedule interval < 1 for 2 periods, missing data breaching', () => {
    expect(alarm(METRIC.runSucceeded)).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      Dimensions: emfDimensions,
      Statistic: 'Sum',
      Period: 3600,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      EvaluationPeriods: 2,
      TreatMissingData: 'breaching',
      ActionsEnabled: true,
    });
  });

  it('SyncFailed: RunFailed Sum >= 1, missing data not breaching', () => {
    expect(alarm(METRIC.runFailed)).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      Dimensions: emfDimensions,
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it('LeaseLost: LeaseLost Sum >= 1', () => {
    expect(alarm(METRIC.leaseLost)).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      Dimensions: emfDimensions,
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('FunctionErrors: AWS/Lambda Errors of the sync function >= 1', () => {
    const [fnId] = syncFunction();
    expect(alarm('Errors')).toMatchObject({
      Namespace: 'AWS/Lambda',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: fnId } }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('FailureQueueMessages: visible messages in the failure queue >= 1', () => {
    const [queueId] = only('AWS::SQS::Queue');
    expect(alarm('ApproximateNumberOfMessagesVisible')).toMatchObject({
      Namespace: 'AWS/SQS',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('publishes to a TLS-only topic with no subscription by default', () => {
    const [topicId] = only('AWS::SNS::Topic');
    const [, policy] = only('AWS::SNS::TopicPolicy');
    expect(policy.Properties.Topics).toEqual([{ Ref: topicId }]);
    expect(policy.Properties.PolicyDocument.Statement).toEqual(
      expect.arrayContaining([expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
    );
    template.resourceCountIs('AWS::SNS::Subscription', 0);
  });
});

describe('dashboard', () => {
  const body = () => JSON.stringify(only('AWS::CloudWatch::Dashboard')[1].Properties.DashboardBody);

  it('shows runs, duration, contest counts, skips and failures, errors/throttles, queue depth, alarm status, recent runs', () => {
    for (const title of [
      'Runs by outcome',
      'Run duration (ms)',
      'Contests written / unchanged / removed',
      'Skips by reason, failures by phase',
      'Function errors & throttles',
      'Failure queue depth',
      'Alarms',
      'Recent runs (summary lines)',
      'Held / accepted changes',
      'Held now (newest run): contest, kind, since',
    ]) {
      expect(body()).toContain(title);
    }
    for (const metric of [
      METRIC.runSucceeded,
      METRIC.runFailed,
      METRIC.runSkipped,
      METRIC.duration,
      'Throttles',
      'ApproximateNumberOfMessagesVisible',
    ]) {
      expect(body()).toContain(`\\"${metric}\\"`);
    }
    expect(body()).toContain('p50');
    // Reminder delivery and contest events, from the summary lines of the jobs' log groups.
    for (const title of [
      'Reminders: due, delivered, deferred, lost, bad rows',
      'Bad reminder rows (skipped, never claimed): newest runs',
      'Reminder delivery alarms',
      'Contest events published / duplicate; reminder updates raced',
    ]) {
      expect(body()).toContain(title);
    }
    for (const field of ['counts.delivered', 'counts.invalidReasons', 'counts.eventsPublished', 'counts.remindersRaced'])
      expect(body()).toContain(field);
    // The held widgets read the summary line's fields (lambda/summary.ts: counts.contestsHeld, held[]).
    for (const field of ['counts.contestsHeld', 'counts.contestsAccepted', 'held.0.kind', 'held.0.since']) expect(body()).toContain(field);
    expect(body()).toContain('\\"type\\":\\"alarm\\"');
    for (const alarmId of Object.keys(ofType('AWS::CloudWatch::Alarm'))) expect(body()).toContain(alarmId);
  });

  it('charts the run counts from the summary lines of the function log group (Logs Insights), not from metrics', () => {
    const [logGroupId] = syncLogGroup();
    expect(body()).toContain(`"Ref":"${logGroupId}"`);
    expect(body()).toContain('\\"type\\":\\"log\\"');
    for (const field of ['counts.contestsWritten', 'counts.contestsUnchanged', 'counts.contestsRemoved', 'reason', 'phase']) {
      expect(body()).toContain(field);
    }
  });

  it('uses every emitted metric in an alarm or a widget (none is paid for and unread)', () => {
    const alarmMetrics = Object.values(ofType('AWS::CloudWatch::Alarm')).map((a) => a.Properties.MetricName);
    for (const metric of Object.values(METRIC)) {
      expect(alarmMetrics.includes(metric) || body().includes(`\\"${metric}\\"`), metric).toBe(true);
    }
  });
});

describe('outputs', () => {
  it('exports table names, function name, schedule rule name, log group, queue URL, topic ARN and dashboard name', () => {
    const ids = tableIds();
    const outputs = template.findOutputs('*');
    expect(outputs.ContestsTableName?.Value).toEqual({ Ref: ids.contests });
    expect(outputs.RemindersTableName?.Value).toEqual({ Ref: ids.reminders });
    expect(outputs.CoordinationTableName?.Value).toEqual({ Ref: ids.coordination });
    expect(outputs.FunctionName?.Value).toEqual({ Ref: syncFunction()[0] });
    expect(outputs.ScheduleRuleName?.Value).toEqual({ Ref: only('AWS::Events::Rule')[0] });
    expect(outputs.LogGroupName?.Value).toEqual({ Ref: syncLogGroup()[0] });
    expect(outputs.FailureQueueUrl?.Value).toEqual({ Ref: only('AWS::SQS::Queue')[0] });
    expect(outputs.AlarmTopicArn?.Value).toEqual({ Ref: only('AWS::SNS::Topic')[0] });
    expect(outputs.DashboardName?.Value).toEqual({ Ref: only('AWS::CloudWatch::Dashboard')[0] });
  });

  it('is environment-agnostic (no account or region baked in)', () => {
    // The console test events are sample payloads: the scheduled tick's placeholder account and
    // region are data, not where the stack deploys.
    const eventSchemas = Object.values(full.findResources('AWS::EventSchemas::Schema') as Resources).filter(
      (schema) => schema.Properties.Type === 'JSONSchemaDraft4',
    );
    expect(eventSchemas.every((schema) => !/\b\d{12}\b/.test(String(schema.Properties.Content)))).toBe(true);
    // (The sync's and the delivery job's console test events both carry a scheduled tick.)
    const samples = Object.values(template.findResources('AWS::EventSchemas::Schema') as Resources)
      .map((schema) => schema.Properties.Content)
      .filter((content): content is string => typeof content === 'string' && content.includes('123456789012'));
    expect(samples.length).toBeGreaterThanOrEqual(1);
    let text = JSON.stringify(json);
    for (const sample of samples) {
      expect(new Set(sample.match(/\b\d{12}\b/g))).toEqual(new Set(['123456789012']));
      text = text.replace(JSON.stringify(sample).slice(1, -1), '');
    }
    expect(text).not.toMatch(/\b\d{12}\b/);
    expect(text).not.toMatch(/"(us|eu|ap|sa|ca|me|af)-[a-z]+-\d"/);
  });
});

describe('event delivery (OutboxDelivery, docs/events.md)', () => {
  const events = (type: string) => Object.entries(full.findResources(type) as Resources).filter(([id]) => id.startsWith('Events'));

  it('has an outbox table with a new-image stream, TTL, on demand and PITR, deleted with the stack', () => {
    const [[, table]] = events('AWS::DynamoDB::Table') as [[string, Resources[string]]];
    expect(table.Properties).toMatchObject({
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
    expect(table.DeletionPolicy).toBe('Delete');
  });

  it('reads the stream with finite retries, bisection, partial-batch checkpoints, INSERTs only, and a dead-letter queue', () => {
    const [[, mapping]] = events('AWS::Lambda::EventSourceMapping') as [[string, Resources[string]]];
    const [[queueId]] = events('AWS::SQS::Queue') as [[string, Resources[string]]];
    expect(mapping.Properties).toMatchObject({
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      MaximumRetryAttempts: 5,
      BisectBatchOnFunctionError: true,
      MaximumRecordAgeInSeconds: 86400,
      ParallelizationFactor: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify({ eventName: ['INSERT'] }) }] },
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
    });
  });

  it('lets the relay do exactly what it does: PutEvents on its bus, read its stream, send to its queue, write its log group', () => {
    const [[, policy]] = events('AWS::IAM::Policy') as [[string, Resources[string]]];
    const [[busId]] = events('AWS::Events::EventBus') as [[string, Resources[string]]];
    const [[tableId]] = events('AWS::DynamoDB::Table') as [[string, Resources[string]]];
    const [[queueId]] = events('AWS::SQS::Queue') as [[string, Resources[string]]];
    const [[logId]] = events('AWS::Logs::LogGroup') as [[string, Resources[string]]];
    const statements = policy.Properties.PolicyDocument.Statement.map((s: { Action: string | string[]; Resource: unknown }) => ({
      Action: [s.Action].flat().sort(),
      Resource: s.Resource,
    }));
    expect(statements).toEqual([
      { Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: { 'Fn::GetAtt': [logId, 'Arn'] } },
      { Action: ['events:PutEvents'], Resource: { 'Fn::GetAtt': [busId, 'Arn'] } },
      {
        Action: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'],
        Resource: { 'Fn::GetAtt': [tableId, 'StreamArn'] },
      },
      { Action: ['sqs:GetQueueAttributes', 'sqs:SendMessage'], Resource: { 'Fn::GetAtt': [queueId, 'Arn'] } },
    ]);
  });

  it('alarms on dead letters, the iterator age and failed deliveries, notifying the topic; a registry for the schemas; the bus exported', () => {
    const topic = { Ref: only('AWS::SNS::Topic')[0] };
    const alarms = events('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    expect(alarms.map((a) => a.MetricName).sort()).toEqual(['ApproximateNumberOfMessagesVisible', 'EventsFailed', 'IteratorAge']);
    for (const a of alarms) expect(a.AlarmActions).toEqual([topic]);
    expect(events('AWS::EventSchemas::Registry')).toHaveLength(1);
    const outputs = full.findOutputs('*');
    expect(outputs.EventBusName?.Value).toEqual({ Ref: events('AWS::Events::EventBus')[0]![0] });
  });
});
