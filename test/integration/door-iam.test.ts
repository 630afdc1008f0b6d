/**
 * The door's roles, used = granted (DynamoDB Local, S3 and SQS stand-ins enforce no IAM): the HTTP
 * API's deployed bundle behind the local API Gateway (local/door/) and the feed builder, each on
 * its own counting proxy in front of DynamoDB Local, through every route and the builder's work
 * (contest events folded in, users' feeds rebuilt, a rebuild superseded by a rotation); every
 * DynamoDB, S3 and SQS action each one sends, on which table, index, bucket or queue, is exactly
 * what its role's policy in the synthesized template allows.
 */
import { dirname } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { DOOR_KEYS } from '../../lambda/calendar/contract.js';
import { startDynamoProxy, type AfterApply, type DynamoProxy } from '../../local/dynamo-proxy.js';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { deliverOutbox } from '../../local/local-events.js';
import { apiFunctionId, startLocalDoor, type LocalDoor } from '../../local/door/door.js';
import { callApi } from '../../local/door/walkthrough.js';
import { tableDefinitionsFromTemplate, type TableNames } from '../../local/tables.js';
import { localHandler } from '../support/handler.js';
import { synthesizedTemplate } from '../support/tables.js';
import { useWorld, type World } from '../support/world.js';

let world: World;
useWorld('door-iam', (w) => (world = w));
const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

type Resources = Record<string, { Type: string; Properties: any }>;
const SERVICES = /^(dynamodb|s3|sqs):/;
/**
 * Granted but never sent: S3 answers a GET of a missing key 404 only to a role that may list the
 * bucket (403 otherwise), and a revoked or unknown feed must answer 404 (lib/constructs/door.ts).
 */
const GRANTED_FOR_ANSWERS = ['feeds s3:ListBucket'];
/** The upgrade's gate of the reminder writes: the marker's read, only where the previous tables are named (test/integration/upgrade.test.ts). */
const GRANTED_FOR_THE_UPGRADE = ['coordination dynamodb:GetItem'];
/** Granted to the builder's role for Lambda's poller of the feed queue (the event source mapping), not sent by its code. */
const GRANTED_FOR_THE_MAPPING = ['ChangeMessageVisibility', 'DeleteMessage', 'GetQueueAttributes', 'GetQueueUrl', 'ReceiveMessage'].map(
  (action) => `queue sqs:${action}`,
);

/** Labels of what the door's roles name: table roles (and `role/index`), `feeds`, `queue`. */
function labelOf(resource: unknown, logicalIds: Map<string, string>): string | undefined {
  const text = JSON.stringify(resource);
  for (const [id, label] of logicalIds) {
    if (!text.includes(`"${id}"`)) continue;
    const index = /\/index\/([A-Za-z0-9_.-]+)/.exec(text)?.[1];
    return index === undefined ? label : `${label}/${index}`;
  }
  return undefined;
}

/** Every `label action` a function's role allows (DynamoDB, S3 and SQS only). */
function granted(functionId: string, logicalIds: Map<string, string>): string[] {
  const resources = (synthesizedTemplate() as { Resources: Resources }).Resources;
  const roleId = resources[functionId]!.Properties.Role['Fn::GetAtt'][0] as string;
  const statements = Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((role: { Ref?: string }) => role.Ref === roleId))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Effect: string; Action: string | string[]; Resource: unknown }[]);
  const allowed = new Set<string>();
  for (const statement of statements.filter((s) => s.Effect === 'Allow')) {
    for (const action of [statement.Action].flat().filter((a) => SERVICES.test(a))) {
      for (const resource of [statement.Resource].flat()) {
        const label = labelOf(resource, logicalIds);
        if (label !== undefined) allowed.add(`${label} ${action}`);
      }
    }
  }
  return [...allowed].sort();
}

/** What a proxy saw, as IAM authorises it (a transaction per contained action). */
function recordCalls(proxy: DynamoProxy, roleOf: Map<string, string>, used: Set<string>, also?: AfterApply): void {
  proxy.setAfterApply(async (request, reply) => {
    const body = request.body ?? {};
    const items = request.operation === 'TransactWriteItems' ? (body.TransactItems as Record<string, { TableName: string }>[]) : undefined;
    const actions = items?.map((item) => {
      const [kind, inner] = Object.entries(item)[0]!;
      const action = { ConditionCheck: 'ConditionCheckItem', Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem' }[kind];
      return { action: `dynamodb:${action}`, table: inner.TableName };
    }) ?? [{ action: `dynamodb:${request.operation}`, table: String(body.TableName) }];
    for (const { action, table } of actions) {
      const index = typeof body.IndexName === 'string' ? `/${body.IndexName}` : '';
      used.add(`${roleOf.get(table) ?? table}${index} ${action}`);
    }
    await also?.(request, reply);
  });
}

const S3_ACTION: Record<string, string> = { GET: 's3:GetObject', PUT: 's3:PutObject', DELETE: 's3:DeleteObject' };

/** The S3 and SQS requests made since the last call, as actions of `used`. */
function takeStandins(door: LocalDoor, used: Set<string>, sent: { before: number }): void {
  for (const [method, n] of door.objects.requests) if (n > 0) used.add(`feeds ${S3_ACTION[method]}`);
  door.objects.requests.clear();
  if (door.queue.sent > sent.before) used.add('queue sqs:SendMessage');
  sent.before = door.queue.sent;
}

describe("the door's roles against the calls the code makes", () => {
  it('the HTTP API and the feed builder each send exactly what their role allows, and use all of it', async () => {
    expect((await localHandler(world.tables, world.standin.baseUrl).invoke({})).summary?.outcome).toBe('succeeded');
    const template = synthesizedTemplate() as { Resources: Resources };
    const names = world.tables.names as TableNames;
    const endpoint = inject('dynamoEndpoint');
    const [apiProxy, builderProxy] = [await startDynamoProxy(endpoint), await startDynamoProxy(endpoint)];
    closing.push(
      () => apiProxy.close(),
      () => builderProxy.close(),
    );
    const roleOf = new Map(Object.entries(names).map(([role, name]) => [name, role]));
    const api = new Set<string>();
    const builder = new Set<string>();
    recordCalls(apiProxy, roleOf, api);
    recordCalls(builderProxy, roleOf, builder);
    const door = await startLocalDoor({
      template,
      outdir: dirname(inject('templatePath')),
      dynamoEndpoint: apiProxy.endpoint,
      builderDynamoEndpoint: builderProxy.endpoint,
      names,
      port: 0,
    });
    closing.push(() => door.close());
    const sent = { before: 0 };
    const token = await door.issuer.token('alice');
    const call = (method: string, path: string, body?: unknown) => callApi(door, token, method, path, body);

    // The API alone (the feed queue held): every route, refusals included.
    door.queue.hold(true);
    await call('GET', '/contests');
    await call('PUT', '/me/reminders/codeforces:2101', { minutesBefore: 30 });
    await call('PUT', '/me/reminders/codeforces:2102', { minutesBefore: 30 });
    await call('DELETE', '/me/reminders/codeforces:2102');
    await call('DELETE', '/me/reminders/codeforces:2102');
    await call('GET', '/me/reminders');
    await call('GET', '/me/calendar');
    const first = await call('POST', '/me/calendar');
    const second = await call('POST', '/me/calendar');
    await fetch(String(first.body.url));
    await fetch(String(second.body.url));
    await fetch(`${door.url}/calendar/codeforces.ics`);
    await call('DELETE', '/me/calendar');
    const revoked = await call('POST', '/me/calendar');
    takeStandins(door, api, sent);

    // The builder alone: the held rebuilds, the contest events (folded in, their users' feeds
    // asked for), and a rebuild whose feed is rotated while it builds (its object removed again).
    let rotateOnce = true;
    recordCalls(builderProxy, roleOf, builder, async (request) => {
      const body = request.body as { Key?: { pk?: { S?: string } } } | undefined;
      if (rotateOnce && request.operation === 'GetItem' && body?.Key?.pk?.S === DOOR_KEYS.userFeed('alice')) {
        rotateOnce = false;
        await world.tables.doc.send(
          new PutCommand({ TableName: names.door!, Item: { pk: DOOR_KEYS.userFeed('alice'), hash: 'rotated', createdAt: Date.now() } }),
        );
      }
    });
    door.queue.hold(false);
    await door.settled();
    await deliverOutbox({ template, dynamo: localDynamoClient(endpoint), endpoint, names, more: door.bus });
    await door.settled();
    takeStandins(door, builder, sent);

    const logicalIds = new Map<string, string>(tableDefinitionsFromTemplate(template).map((d) => [d.logicalId, d.role]));
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (id.startsWith('DoorFeeds') && resource.Type === 'AWS::S3::Bucket') logicalIds.set(id, 'feeds');
      if (id.startsWith('DoorFeedQueue') && resource.Type === 'AWS::SQS::Queue') logicalIds.set(id, 'queue');
    }
    const builderId = Object.keys(template.Resources).find(
      (id) => id.startsWith('DoorBuilder') && template.Resources[id]!.Type === 'AWS::Lambda::Function',
    )!;
    expect([...api, ...GRANTED_FOR_ANSWERS, ...GRANTED_FOR_THE_UPGRADE].sort()).toEqual(granted(apiFunctionId(template), logicalIds));
    expect([...builder, ...GRANTED_FOR_THE_MAPPING].sort()).toEqual(granted(builderId, logicalIds));
    // A rotated feed's URL answers 404 (what ListBucket is for); so does the one the rotation during a rebuild superseded.
    expect((await fetch(String(first.body.url))).status).toBe(404);
    expect((await fetch(String(revoked.body.url))).status).toBe(404);
  });
});
