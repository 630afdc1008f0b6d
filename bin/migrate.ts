#!/usr/bin/env node
/**
 * `npm run migrate`: the upgrade to platform-qualified keys (docs/runbook.md, "Upgrading to
 * qualified keys"), for an operator.
 *
 *   npm run migrate -- status                   the marker: copying (which table, how far), done, rolled back
 *   npm run migrate -- verify                   every item of the previous release's tables against its copy (read-only)
 *   npm run migrate -- back                     what a rollback would write (a dry run)
 *   npm run migrate -- back --apply             the new tables' Codeforces items under the previous keys, under the sync's lease
 *
 *   --stack NAME      the stack (default ContestSync): its table outputs; --region REGION
 *   --local           the persisted DynamoDB Local of `npm start -- --persist`
 *   --due-shards N    the DUE_SHARDS the copy was made under (default: the marker's)
 */
import { existsSync, readdirSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { rollBack } from '../lambda/migration/back.js';
import { dynamoMigrationStore, type MigrationTables } from '../lambda/migration/store.js';
import { verifyCopy } from '../lambda/migration/verify.js';
import { STACK_ID } from '../lib/contest-sync-stack.js';
import { PERSIST_DIR, startDynamoDbLocal, type DynamoDbLocal } from '../local/dynamodb-local.js';
import { localMigrationTables } from '../local/tables.js';
import { applyBack } from '../cli/migrate/back.js';
import { formatBack, formatMarker, formatVerify } from '../cli/migrate/format.js';
import { MigrateUsageError, tablesOfStack } from '../cli/migrate/tables.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE = [
  'usage: npm run migrate -- status|verify|back [--apply] [--stack NAME | --local] [--region REGION] [--due-shards N]',
  '  status          the upgrade marker: copying (which table, how far), done, or rolled back',
  "  verify          every item of the previous release's tables against its copy (read-only)",
  "  back            a rollback: the new tables' Codeforces items under the previous keys (a dry run; --apply writes)",
  '  --stack NAME    the stack whose table outputs to use (default ContestSync)',
  '  --local         the persisted DynamoDB Local of `npm start -- --persist`',
  '  --due-shards N  the DUE_SHARDS of the copy (default: the one the marker records)',
].join('\n');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    stack: { type: 'string' },
    local: { type: 'boolean', default: false },
    region: { type: 'string' },
    'due-shards': { type: 'string' },
    apply: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

let local: DynamoDbLocal | undefined;
try {
  const [command, ...extra] = positionals;
  if (command === undefined || !['status', 'verify', 'back'].includes(command) || extra.length > 0)
    throw new MigrateUsageError(`name one command: status, verify or back`);
  if (values.local && values.stack !== undefined) throw new MigrateUsageError('choose one of --stack, --local');
  if (values.apply && command !== 'back') throw new MigrateUsageError('--apply is for back only');
  const dueShardsOption = values['due-shards'] === undefined ? undefined : Number(values['due-shards']);
  if (dueShardsOption !== undefined && !(Number.isInteger(dueShardsOption) && dueShardsOption >= 1 && dueShardsOption <= 16))
    throw new MigrateUsageError('--due-shards must be a whole number from 1 to 16');

  let client: DynamoDBClient;
  let tables: MigrationTables;
  let source: string;
  if (values.local) {
    const shown = relative(process.cwd(), PERSIST_DIR) || PERSIST_DIR;
    if (!existsSync(PERSIST_DIR) || !readdirSync(PERSIST_DIR).some((name) => name.endsWith('.db')))
      throw new MigrateUsageError(`no persisted local database in ${shown}: run \`npm start -- --offline --persist\` first`);
    local = await startDynamoDbLocal({ path: PERSIST_DIR });
    client = local.client();
    tables = localMigrationTables('local');
    source = `DynamoDB Local, ${shown}`;
  } else {
    const region = values.region === undefined ? {} : { region: values.region };
    const stackName = values.stack ?? STACK_ID;
    const cloudFormation = new CloudFormationClient(region);
    tables = await tablesOfStack(cloudFormation, stackName);
    cloudFormation.destroy();
    client = new DynamoDBClient(region);
    source = `stack ${stackName}`;
  }
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const store = dynamoMigrationStore(doc, tables);
  const marker = await store.readMarker();
  const dueShards = dueShardsOption ?? marker?.dueShards ?? 1;

  if (command === 'status') {
    process.stdout.write(formatMarker(marker, source, Date.now()));
  } else if (command === 'verify') {
    const { text, ok } = formatVerify(await verifyCopy({ store, tables, dueShards }));
    process.stdout.write(text);
    if (!ok) process.exitCode = 1;
  } else if (!values.apply) {
    process.stdout.write(formatBack(await rollBack(undefined, { store, tables, dueShards, now: Date.now }), false));
  } else {
    process.stdout.write(formatBack(await applyBack({ doc, tables, dueShards }), true));
  }
  client.destroy();
} catch (error) {
  console.error(`migrate: ${error instanceof Error ? error.message : String(error)}`);
  if (error instanceof MigrateUsageError) console.error(USAGE);
  process.exitCode = error instanceof MigrateUsageError ? 2 : 1;
} finally {
  await local?.stop();
}
