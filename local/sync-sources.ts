/**
 * Every source's sync job, run locally as deployed (docs/sources.md, "One job per source"): each
 * source's own entry (`lambda/sources/<platform>/handler.ts`) with its function's environment from
 * the synthesized template, pointed at the local tables and, offline, at the local stand-ins
 * (Codeforces' recorded contest.list, the AtCoder, CodeChef and LeetCode fixtures). One source's
 * failure is its own run's: the others run all the same. Used by `npm start` and the tests.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { JOB_ENV } from '@contest-sync/scheduled-singleton/contract';
import { jobNames, type SourceJob } from '../lambda/sources/job.js';
import { SOURCE_JOBS } from '../lambda/sources/jobs.js';
import type { Handler, HandlerOptions } from '../lambda/sync/handler.js';
import type { RunSummary } from '../lambda/sync/summary.js';
import { recordedContestList, startCodeforcesStandin } from './codeforces-standin.js';
import { functionEnv } from './local-events.js';
import { startSourceStandins, type SourceStandin } from './source-standins.js';
import type { CfnTemplate } from './template.js';
import type { TableNames } from './tables.js';

/** The logical id of a source's job function in the template: the one whose lease key is the job's. */
export function sourceFunctionId(template: CfnTemplate, job: SourceJob): string {
  const resources = (template?.Resources ?? {}) as Record<string, { Type: string; Properties?: any }>;
  const found = Object.entries(resources).filter(
    ([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties?.Environment?.Variables?.[JOB_ENV.leaseKey] === jobNames(job).leaseKey,
  );
  if (found.length !== 1) throw new Error(`expected one function of ${job.platform}'s job in the template, found ${found.length}`);
  return found[0]![0];
}

/** Each source's entry, as its bundle's: `createHandler` of `lambda/sources/<platform>/handler.ts`. */
async function entryOf(job: SourceJob): Promise<(options: HandlerOptions) => Handler> {
  const module = (await import(`../lambda/sources/${job.platform}/handler.ts`)) as { createHandler: (options: HandlerOptions) => Handler };
  return module.createHandler;
}

export interface OfflineSources {
  /** Each platform's origin, by the variable its job reads it from. */
  env: Record<string, string>;
  /** The AtCoder, CodeChef and LeetCode stand-in (tests make a platform misbehave through it). */
  standins: SourceStandin;
  close(): Promise<void>;
}

/** Local stand-ins of every platform, their recorded replies shifted to `anchorMs`. */
export async function startOfflineSources(anchorMs: number = Date.now()): Promise<OfflineSources> {
  const codeforces = await startCodeforcesStandin({ contests: recordedContestList(anchorMs) });
  const standins = await startSourceStandins({ anchorMs });
  const env: Record<string, string> = {};
  for (const job of SOURCE_JOBS) {
    env[job.baseUrlVariable] =
      job.platform === 'codeforces' ? codeforces.baseUrl : standins.baseUrls[job.platform as keyof SourceStandin['baseUrls']];
  }
  return {
    env,
    standins,
    close: async () => {
      await Promise.all([codeforces.close(), standins.close()]);
    },
  };
}

export interface SourceRun {
  job: SourceJob;
  summary: RunSummary;
}

export interface SyncSourcesOptions {
  template: CfnTemplate;
  names: TableNames;
  client: DynamoDBClient;
  event: unknown;
  /** Variables over each function's own (the platforms' origins, a log level). */
  env?: Record<string, string>;
  write?: HandlerOptions['write'];
  /** Each run's Lambda-like time budget. @default 25 s */
  budgetMs?: number;
  /** @default SOURCE_JOBS */
  jobs?: readonly SourceJob[];
}

/** Runs every source's job once, one after the other: a failed run is reported, never thrown. */
export async function syncSources(options: SyncSourcesOptions): Promise<SourceRun[]> {
  const runs: SourceRun[] = [];
  for (const job of options.jobs ?? SOURCE_JOBS) {
    const createHandler = await entryOf(job);
    const handler = createHandler({
      env: { ...functionEnv(options.template, sourceFunctionId(options.template, job), options.names), ...options.env },
      dynamo: options.client,
      ...(options.write !== undefined ? { write: options.write } : {}),
    });
    const deadline = Date.now() + (options.budgetMs ?? 25_000);
    try {
      runs.push({ job, summary: await handler(options.event, { getRemainingTimeInMillis: () => deadline - Date.now() }) });
    } catch (error) {
      const carried = (error as { summary?: RunSummary }).summary;
      if (carried === undefined) throw error;
      runs.push({ job, summary: carried });
    }
  }
  return runs;
}

/** A platform's upcoming contests, as the app reads them (the byPlatformStart index). */
export async function upcomingContests(client: DynamoDBClient, names: TableNames, platform: string, nowSeconds: number) {
  const upcoming = await DynamoDBDocumentClient.from(client).send(
    new QueryCommand({
      TableName: names.contests,
      IndexName: 'byPlatformStart',
      KeyConditionExpression: 'platform = :p AND startTimeSeconds >= :now',
      ExpressionAttributeValues: { ':p': platform, ':now': nowSeconds },
    }),
  );
  return upcoming.Items ?? [];
}
