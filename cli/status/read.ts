/**
 * `npm run status`, the I/O part: the Coordination table's name from a deployed stack's outputs
 * (CloudFormation DescribeStacks), and its lease item and run records (DynamoDB).
 */
import { type CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { LEASE_PK, RUN_PK_PREFIX } from '../../lambda/contract.js';
import type { LeaseView, RunView, StatusView } from './format.js';

/** The stack output that names the Coordination table (lib/contest-sync-stack.ts). */
export const COORDINATION_OUTPUT = 'CoordinationTableName';

export class StatusError extends Error {
  override readonly name = 'StatusError';
}

export async function coordinationTableOfStack(cloudFormation: CloudFormationClient, stackName: string): Promise<string> {
  let stacks;
  try {
    ({ Stacks: stacks } = await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName })));
  } catch (error) {
    throw new StatusError(`could not describe stack ${stackName}: ${(error as Error).message}`);
  }
  const stack = stacks?.[0];
  if (stack === undefined) throw new StatusError(`stack ${stackName} not found`);
  const output = stack.Outputs?.find((o) => o.OutputKey === COORDINATION_OUTPUT);
  if (output?.OutputValue === undefined) {
    throw new StatusError(
      `stack ${stackName} (${stack.StackStatus ?? 'unknown status'}) has no ${COORDINATION_OUTPUT} output; is it a contest-sync stack?`,
    );
  }
  return output.OutputValue;
}

/** Reads the lease item (consistent) and the run records, newest first, `limit` of them. */
export async function readStatus(client: DynamoDBClient, table: string, source: string, limit: number): Promise<StatusView> {
  const doc = DynamoDBDocumentClient.from(client);
  const { Item: lease } = await doc.send(new GetCommand({ TableName: table, Key: { pk: LEASE_PK }, ConsistentRead: true }));
  // The table holds the lease and 30 days of run records (hourly: ~720 small items): a scan is cheap.
  const runs: RunView[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: 'begins_with(pk, :run)',
        ExpressionAttributeValues: { ':run': RUN_PK_PREFIX },
        ExclusiveStartKey,
      }),
    );
    runs.push(...((page.Items ?? []) as RunView[]));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey !== undefined);
  runs.sort((a, b) => (b.finishedAtMs ?? 0) - (a.finishedAtMs ?? 0));
  return { source, lease: lease as LeaseView | undefined, runs: runs.slice(0, limit), totalRuns: runs.length };
}
