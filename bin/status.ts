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
 *   npm run status -- --help                    the usage
 */
import { existsSync, readdirSync } from 'node:fs';
import { relative } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDbLocal } from '../local/dynamodb-local.js';
import { parseCommandLine, refuse } from '../cli/args.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const COMMAND = {
  command: 'npm run status',
  npmScript: 'status',
  synopsis: '[-- --stack NAME | --table NAME | --local] [--runs N] [--region REGION]',
  help: [
    '--stack NAME     a deployed stack: its CoordinationTableName output (default ContestSync)',
    '--table NAME     a Coordination table by name',
    '--local          the persisted DynamoDB Local of npm start -- --offline --persist',
    '--runs N         how many run records to show (default 5)',
    "--region REGION  the AWS region (default: the SDK's, from the environment or the profile)",
  ],
  options: {
    stack: { type: 'string' },
    table: { type: 'string' },
    local: { type: 'boolean', default: false },
    runs: { type: 'string', default: '5' },
    region: { type: 'string' },
  },
} as const;

const values = parseCommandLine(COMMAND);
const limit = Number(values.runs);
if (!/^\d+$/.test(values.runs)) refuse(COMMAND, `--runs takes a whole number, got ${values.runs}`);
if ([values.stack !== undefined, values.table !== undefined, values.local].filter(Boolean).length > 1)
  refuse(COMMAND, 'give one of --stack, --table and --local');

// The AWS SDK, DynamoDB Local and the stack's names load once the command line is known to be good.
const { CloudFormationClient } = await import('@aws-sdk/client-cloudformation');
const { DynamoDBClient: Client } = await import('@aws-sdk/client-dynamodb');
const { STACK_ID } = await import('../lib/contest-sync-stack.js');
const { PERSIST_DIR, startDynamoDbLocal } = await import('../local/dynamodb-local.js');
const { localTableNames } = await import('../local/tables.js');
const { formatStatus } = await import('../cli/status/format.js');
const { StatusError, coordinationTableOfStack, readStatus, statusJobOf } = await import('../cli/status/read.js');
const { SOURCE_JOBS } = await import('../lambda/sources/jobs.js');

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
    client = new Client(region);
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
