#!/usr/bin/env node
/**
 * `npm run status`: who holds the lease, until when, the fence, the last run and the last run
 * records, from the Coordination table of a deployed stack or of `npm start -- --persist`.
 *
 *   npm run status                              the stack named ContestSync (default AWS credentials and region)
 *   npm run status -- --stack NAME              another stack: its CoordinationTableName output
 *   npm run status -- --table NAME              a Coordination table by name
 *   npm run status -- --local                   the persisted DynamoDB Local of `npm start -- --persist`
 *   npm run status -- --runs 20                 how many run records to show (default 5)
 */
import { existsSync, readdirSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { STACK_ID } from '../lib/contest-sync-stack.js';
import { PERSIST_DIR, startDynamoDbLocal, type DynamoDbLocal } from '../local/dynamodb-local.js';
import { localTableNames } from '../local/tables.js';
import { formatStatus } from '../cli/status/format.js';
import { StatusError, coordinationTableOfStack, readStatus, statusJobOf } from '../cli/status/read.js';
import { SOURCE_JOBS } from '../lambda/sources/jobs.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE = 'usage: npm run status [-- --stack NAME | --table NAME | --local] [--runs N] [--region REGION]';

const { values } = parseArgs({
  options: {
    stack: { type: 'string' },
    table: { type: 'string' },
    local: { type: 'boolean', default: false },
    runs: { type: 'string', default: '5' },
    region: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const limit = Number(values.runs);
if (!Number.isInteger(limit) || limit < 0) {
  console.error(`--runs must be a whole number, got ${values.runs}\n${USAGE}`);
  process.exit(2);
}
if ([values.stack !== undefined, values.table !== undefined, values.local].filter(Boolean).length > 1) {
  console.error(`choose one of --stack, --table, --local\n${USAGE}`);
  process.exit(2);
}

let local: DynamoDbLocal | undefined;
try {
  let client: DynamoDBClient;
  let table: string;
  let source: string;
  if (values.local) {
    const shown = relative(process.cwd(), PERSIST_DIR) || PERSIST_DIR;
    if (!existsSync(PERSIST_DIR) || !readdirSync(PERSIST_DIR).some((name) => name.endsWith('.db'))) {
      throw new StatusError(`no persisted local database in ${shown}: run \`npm start -- --offline --persist\` first`);
    }
    local = await startDynamoDbLocal({ path: PERSIST_DIR });
    client = local.client();
    table = localTableNames('local').coordination;
    source = `table ${table} (DynamoDB Local, ${shown})`;
  } else {
    const region = values.region === undefined ? {} : { region: values.region };
    if (values.table !== undefined) {
      table = values.table;
      source = `table ${table}`;
    } else {
      const stackName = values.stack ?? STACK_ID;
      const cloudFormation = new CloudFormationClient(region);
      table = await coordinationTableOfStack(cloudFormation, stackName);
      cloudFormation.destroy();
      source = `table ${table} (stack ${stackName})`;
    }
    client = new DynamoDBClient(region);
  }
  // Each source's job: its own lease and run records (docs/sources.md, "One job per source").
  for (const job of SOURCE_JOBS) {
    const view = await readStatus(client, table, `${job.label} sync, ${source}`, limit, statusJobOf(job));
    process.stdout.write(formatStatus(view, Date.now()));
  }
  client.destroy();
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`status: ${message}`);
  process.exitCode = 1;
} finally {
  await local?.stop();
}
