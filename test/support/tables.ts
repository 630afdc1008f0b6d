/**
 * Tables for a test file: created in the run's DynamoDB Local from the synthesized CloudFormation
 * template (synthesized once per run by the global setup), so the schema tested is the one deployed.
 */
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createTablesFromTemplate } from '../../local/tables.js';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { EVENT_SOURCES } from '../../lambda/contract.js';

export interface TestTables {
  endpoint: string;
  names: { contests: string; reminders: string; coordination: string; outbox?: string };
  doc: DynamoDBDocumentClient;
  /** Environment for the function (in-process or a child process) pointing at these tables. */
  env: Record<string, string>;
}

let template: unknown;

export function synthesizedTemplate(): unknown {
  template ??= JSON.parse(readFileSync(inject('templatePath'), 'utf8'));
  return template;
}

export async function createTestTables(label: string): Promise<TestTables> {
  const endpoint = inject('dynamoEndpoint');
  const client = localDynamoClient(endpoint);
  const prefix = `${label}-${randomBytes(3).toString('hex')}`;
  const names = await createTablesFromTemplate(client, synthesizedTemplate(), prefix);
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return {
    endpoint,
    names,
    doc,
    env: {
      AWS_ENDPOINT_URL_DYNAMODB: endpoint,
      CONTESTS_TABLE_NAME: names.contests,
      REMINDERS_TABLE_NAME: names.reminders,
      COORDINATION_TABLE_NAME: names.coordination,
      // The sync publishes its contest events through the outbox, as deployed (lib/contest-sync-stack.ts).
      ...(names.outbox !== undefined
        ? { OUTBOX_TABLE_NAME: names.outbox, OUTBOX_EVENT_SOURCE: EVENT_SOURCES.contests, OUTBOX_RETENTION_DAYS: '7' }
        : {}),
    },
  };
}
