/**
 * DynamoLease and DynamoFencedWriter on DynamoDB Local against the contract the in-memory ones also
 * pass (../testing/lease-contract.ts).
 */
import { beforeAll } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoFencedWriter, DynamoLease } from '@contest-sync/scheduled-singleton';
import { createTestTables, type TestTables } from '../../../../test/support/tables.js';
import { leaseContract } from '../testing/lease-contract.js';

let tables: TestTables;
beforeAll(async () => {
  tables = await createTestTables('contract');
});

leaseContract('DynamoDB Local', () => ({
  open: (key, timing, now) => ({
    lease: new DynamoLease({ doc: tables.doc, table: tables.names.coordination, key, timing, now }),
    writer: new DynamoFencedWriter(tables.doc, { now }),
  }),
  table: tables.names.coordination,
  read: async (pk) =>
    (await tables.doc.send(new GetCommand({ TableName: tables.names.coordination, Key: { pk }, ConsistentRead: true }))).Item,
}));
