/**
 * Once per test run: one DynamoDB Local, and one synthesis of the CDK app with bundling, so that
 * every integration test creates its tables from the deployed template and every multi-process
 * test runs the deployed artifact. Test files reach them through `inject(...)`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import type { DynamoDbLocal } from '../../local/dynamodb-local.js';

interface Shared {
  local: DynamoDbLocal;
  templatePath: string;
  bundleEntry: string;
}

// Each vitest project calls setup(); they share one DynamoDB Local and one synthesis.
let shared: Promise<Shared> | undefined;
let users = 0;

async function start(): Promise<Shared> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.env.CDK_DISABLE_CLI_TELEMETRY = 'true';
  // Loaded here, not at the top: `npm run test:unit` loads this file too, and the CDK app (aws-cdk-lib) is seconds of it.
  const [{ startDynamoDbLocal }, { synthTemplate }] = await Promise.all([
    import('../../local/dynamodb-local.js'),
    import('../../local/template.js'),
  ]);
  const [local, synth] = await Promise.all([startDynamoDbLocal(), synthTemplate({ bundle: true })]);
  const templatePath = join(synth.outdir, 'contest-sync.template.json');
  writeFileSync(templatePath, JSON.stringify(synth.template));
  if (synth.bundleDir === undefined) throw new Error('synthesis produced no function bundle');
  return { local, templatePath, bundleEntry: join(synth.bundleDir, 'index.mjs') };
}

/**
 * The projects whose tests use DynamoDB Local and the synthesis. Every other project, `unit` and the
 * root project vitest also calls this for (`npm run test:unit` runs it too), starts nothing: unit
 * tests run on a machine without Java.
 */
const WITH_WORLD = new Set(['fast', 'processes']);

export async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!WITH_WORLD.has(project.name)) return undefined;
  shared ??= start();
  users += 1;
  const { local, templatePath, bundleEntry } = await shared;
  project.provide('dynamoEndpoint', local.endpoint);
  project.provide('templatePath', templatePath);
  project.provide('bundleEntry', bundleEntry);
  // The last project using the world stops DynamoDB Local.
  return async () => {
    users -= 1;
    if (users === 0 && shared !== undefined) await (await shared).local.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    templatePath: string;
    bundleEntry: string;
  }
}
