/**
 * What every benchmark runs against: one DynamoDB Local started here, the counting proxy in front
 * of it, and the synthesized template (tables) and function bundle, as `cdk deploy` would ship them.
 */
import { randomBytes } from 'node:crypto';
import { createTablesFromTemplate, type TableNames } from '../local/tables.js';
import { startDynamoDbLocal, type DynamoDbLocal } from '../local/dynamodb-local.js';
import { startDynamoProxy, type DynamoProxy } from '../local/dynamo-proxy.js';
import { findSyncFunction, synthTemplate, type CfnTemplate } from '../local/template.js';
import { ENV } from '../lambda/contract.js';

export interface BenchEnvironment {
  dynamo: DynamoDbLocal;
  proxy: DynamoProxy;
  template: CfnTemplate;
  /** The cloud assembly (every function's bundle). */
  outdir: string;
  bundleDir: string;
  /** NODE_OPTIONS of the sync function in the template ('' if none). */
  nodeOptions: string;
  /** Fresh Contests/Reminders/Coordination tables from the template, created directly (not through the proxy). */
  createTables(label: string): Promise<TableNames>;
  close(): Promise<void>;
}

export async function startBenchEnvironment(): Promise<BenchEnvironment> {
  const [dynamo, synth] = await Promise.all([startDynamoDbLocal(), synthTemplate({ bundle: true })]);
  if (synth.bundleDir === undefined) {
    await dynamo.stop();
    throw new Error('synthesis produced no function bundle');
  }
  const proxy = await startDynamoProxy(dynamo.endpoint);
  const admin = dynamo.client();
  const variables = (
    findSyncFunction(synth.template).resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined
  )?.Variables;
  const nodeOptions = variables?.NODE_OPTIONS;
  return {
    dynamo,
    proxy,
    template: synth.template,
    outdir: synth.outdir,
    bundleDir: synth.bundleDir,
    nodeOptions: typeof nodeOptions === 'string' ? nodeOptions : '',
    createTables: (label) => createTablesFromTemplate(admin, synth.template, `bench-${label}-${randomBytes(3).toString('hex')}`),
    close: async () => {
      admin.destroy();
      await proxy.close();
      await dynamo.stop();
    },
  };
}

/** Environment of the function for these tables (the handler reads it through readConfig). */
export function functionEnv(tables: TableNames, codeforcesUrl: string, leaseSeconds: number): Record<string, string> {
  return {
    [ENV.contestsTable]: tables.contests,
    [ENV.remindersTable]: tables.reminders,
    [ENV.coordinationTable]: tables.coordination,
    [ENV.codeforcesApiUrl]: codeforcesUrl,
    [ENV.leaseDurationSeconds]: String(leaseSeconds),
  };
}
