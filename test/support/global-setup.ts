/**
 * One DynamoDB Local for the whole run. Test files reach it through `inject('dynamoEndpoint')`
 * and create their own tables (unique names) from the synthesized template.
 */
import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../lib/local/dynamodb-local.js';

let local: DynamoDbLocal | undefined;

export async function setup(project: TestProject): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  local = await startDynamoDbLocal();
  project.provide('dynamoEndpoint', local.endpoint);
}

export async function teardown(): Promise<void> {
  await local?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}
