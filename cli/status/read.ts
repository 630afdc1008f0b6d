/**
 * `npm run status`, the I/O part: the Coordination table's name from a deployed stack's outputs
 * (CloudFormation DescribeStacks), and its lease item and run records (DynamoDB).
 */
import { type CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { jobNames, type SourceJob } from '../../lambda/sources/job.js';
import { CODEFORCES_JOB } from '../../lambda/sources/codeforces/job.js';
import { SOURCE_JOBS } from '../../lambda/sources/jobs.js';
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

/** Whose status is read: a source's job's lease item and run records, less the records of jobs whose prefix lies inside its own. */
export interface StatusJob {
  leaseKey: string;
  runRecordPrefix: string;
  /** Run-record prefixes of other sources' jobs that begin with this one's (Codeforces' `run#` holds `run#atcoder#`). */
  exclude: readonly string[];
}

/** The status of a source's job (docs/sources.md, "One job per source"). */
export function statusJobOf(job: SourceJob, jobs: readonly SourceJob[] = SOURCE_JOBS): StatusJob {
  const { leaseKey, runRecordPrefix } = jobNames(job);
  const exclude = jobs
    .filter((other) => other !== job)
    .map((other) => jobNames(other).runRecordPrefix)
    .filter((prefix) => prefix.startsWith(runRecordPrefix));
  return { leaseKey, runRecordPrefix, exclude };
}

/** Reads a job's lease item (consistent) and run records, newest first, `limit` of them. @default job Codeforces' */
export async function readStatus(
  client: DynamoDBClient,
  table: string,
  source: string,
  limit: number,
  job: StatusJob = statusJobOf(CODEFORCES_JOB),
): Promise<StatusView> {
  const doc = DynamoDBDocumentClient.from(client);
  const { Item: lease } = await doc.send(new GetCommand({ TableName: table, Key: { pk: job.leaseKey }, ConsistentRead: true }));
  const excluded = Object.fromEntries(job.exclude.map((prefix, i) => [`:other${i}`, prefix]));
  // The table holds the lease and 30 days of run records (hourly: ~720 small items): a scan is cheap.
  const runs: RunView[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: ['begins_with(pk, :run)', ...Object.keys(excluded).map((name) => `NOT begins_with(pk, ${name})`)].join(' AND '),
        ExpressionAttributeValues: { ':run': job.runRecordPrefix, ...excluded },
        ExclusiveStartKey,
      }),
    );
    runs.push(...((page.Items ?? []) as RunView[]));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey !== undefined);
  runs.sort((a, b) => (b.finishedAtMs ?? 0) - (a.finishedAtMs ?? 0));
  return { source, lease: lease as LeaseView | undefined, runs: runs.slice(0, limit), totalRuns: runs.length };
}
