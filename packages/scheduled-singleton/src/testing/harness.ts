/**
 * A job's handler under test, without harness code of the job's own:
 *
 * - `testJob(handler)`: the handler with the lease and the fenced writes in memory
 *   (MemoryCoordination) and the environment the construct would set (`jobEnv`);
 * - `localJob(handler, { template })`: the handler on DynamoDB Local, with the tables and the
 *   function environment of the synthesized template (`cdk synth`), as Lambda would run it.
 *
 * Both return the run's result whether the handler returned it or threw it for Lambda's retry,
 * with the lines the wrapper wrote (its summary and EMF lines).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import {
  CreateTableCommand,
  DynamoDBClient,
  UpdateTimeToLiveCommand,
  type AttributeDefinition,
  type CreateTableCommandInput,
  type KeySchemaElement,
} from '@aws-sdk/client-dynamodb';
import { JOB_ENV } from '../contract.js';
import { writeStdout } from '../runtime/report.js';
import { ScheduledRunFailedError } from '../runtime/errors.js';
import type { RunResult, ScheduledSingletonHandler } from '../runtime/singleton.js';
import { jobEnv, type JobEnvOptions, type TestInvocation } from './fixtures.js';
import { MemoryCoordination } from './memory.js';

/** One invocation's outcome, as Lambda would see it, and what the wrapper wrote. */
export interface TestRun {
  /** The run's result: returned, or carried by the ScheduledRunFailedError the handler threw. */
  readonly result: RunResult;
  /** The handler threw (a scheduled run that failed, so Lambda retries it; a bad event or configuration). */
  readonly threw: boolean;
  /** The wrapper's lines of this invocation (log lines, the summary, the EMF line), parsed. */
  readonly lines: readonly Record<string, unknown>[];
  /** The summary line (`"summary": true`). */
  readonly summary: Record<string, unknown> | undefined;
  /** The values of the wrapper's EMF line: RunSucceeded, RunFailed, RunSkipped, LeaseLost, Duration. */
  readonly metrics: Readonly<Record<string, number>>;
}

export interface JobUnderTest<T> {
  /** The handler with the test's options (coordination, environment, clock, where lines go). */
  readonly handler: ScheduledSingletonHandler<T>;
  /** Every line the wrapper wrote so far, parsed. */
  readonly lines: readonly Record<string, unknown>[];
  invoke(invocation: TestInvocation): Promise<TestRun>;
}

export interface TestJobOptions extends JobEnvOptions {
  /**
   * The job's own variables (e.g. `TABLE_NAME`): set in process.env, as Lambda does.
   * @default none
   */
  env?: Record<string, string>;
  /**
   * The clock of the wrapper and the in-memory lease.
   * @default Date.now
   */
  now?: () => number;
  /**
   * Where the lease and the writes live (read what the runs left there).
   * @default a new MemoryCoordination
   */
  coordination?: MemoryCoordination;
  /**
   * Also print the wrapper's lines on stdout.
   * @default false
   */
  print?: boolean;
}

/** The handler with the lease and the fenced writes in memory: a unit test of a job. */
export function testJob<T>(
  handler: ScheduledSingletonHandler<T>,
  options: TestJobOptions = {},
): JobUnderTest<T> & { readonly coordination: MemoryCoordination } {
  const coordination = options.coordination ?? new MemoryCoordination();
  const env = { ...jobEnv(options), ...options.env };
  Object.assign(process.env, env);
  const harness = underTest(handler, { env, coordination, print: options.print ?? false, ...(options.now ? { now: options.now } : {}) });
  return { ...harness, coordination };
}

export interface LocalJobOptions {
  /** The synthesized template: a path (`cdk.out/<Stack>.template.json`) or the parsed JSON. */
  template: string | Record<string, unknown>;
  /**
   * DynamoDB Local.
   * @default AWS_ENDPOINT_URL_DYNAMODB, else http://localhost:8000
   */
  endpoint?: string;
  /**
   * Which job, when the template has several: its lease key.
   * @default the template's one job
   */
  leaseKey?: string;
  /**
   * Variables to set or override (e.g. a shorter LEASE_DURATION_SECONDS, a value that is no table Ref).
   * @default none
   */
  env?: Record<string, string>;
  /**
   * Print the wrapper's lines on stdout, as Lambda would.
   * @default true
   */
  print?: boolean;
}

export interface LocalJob<T> extends JobUnderTest<T> {
  /** Local table name of each table in the template, by logical id. */
  readonly tables: Readonly<Record<string, string>>;
  /** The function's environment as set in process.env (table Refs resolved to the local names). */
  readonly env: Readonly<Record<string, string>>;
  /** A client for DynamoDB Local. */
  readonly client: DynamoDBClient;
}

const TABLE_TYPES = new Set(['AWS::DynamoDB::Table', 'AWS::DynamoDB::GlobalTable']);

/**
 * The handler on DynamoDB Local: creates every DynamoDB table of the template under a fresh name
 * (keys, indexes, TTL as deployed), sets the job function's environment in process.env with its
 * table Refs resolved (and AWS_ENDPOINT_URL_DYNAMODB, plus a region and dummy credentials if none
 * are set), and returns the handler that runs against them.
 */
export async function localJob<T>(handler: ScheduledSingletonHandler<T>, options: LocalJobOptions): Promise<LocalJob<T>> {
  const template = (typeof options.template === 'string' ? JSON.parse(readFileSync(options.template, 'utf8')) : options.template) as {
    Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  };
  const resources = template.Resources ?? {};
  const endpoint = options.endpoint ?? process.env.AWS_ENDPOINT_URL_DYNAMODB ?? 'http://localhost:8000';
  process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoint;
  process.env.AWS_REGION ??= process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  // DynamoDB Local accepts any credentials, but only alphanumeric ones.
  if (process.env.AWS_ACCESS_KEY_ID === undefined && process.env.AWS_PROFILE === undefined) {
    process.env.AWS_ACCESS_KEY_ID = 'local';
    process.env.AWS_SECRET_ACCESS_KEY = 'local';
  }
  const variables = jobFunctionVariables(resources, options.leaseKey);
  const client = new DynamoDBClient({ endpoint });
  const suffix = randomBytes(3).toString('hex');
  const tables: Record<string, string> = {};
  for (const [logicalId, resource] of Object.entries(resources)) {
    if (!TABLE_TYPES.has(resource.Type)) continue;
    tables[logicalId] = `${logicalId}-${suffix}`;
    await createTable(client, tables[logicalId], resource.Properties ?? {});
  }
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(variables)) {
    if (options.env?.[name] !== undefined) continue;
    const ref = (value as { Ref?: unknown } | null)?.Ref;
    if (typeof value === 'string' || typeof value === 'number') env[name] = String(value);
    else if (typeof ref === 'string' && tables[ref] !== undefined) env[name] = tables[ref];
    else
      throw new Error(
        `localJob: the function's variable ${name} is ${JSON.stringify(value)}, not a value or a table Ref: pass it in options.env`,
      );
  }
  Object.assign(env, options.env);
  Object.assign(process.env, env);
  const harness = underTest(handler, { env: process.env, print: options.print ?? true });
  return { ...harness, tables, env, client };
}

/** The environment of the template's job function (the one whose variables include LEASE_KEY). */
function jobFunctionVariables(
  resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>,
  leaseKey: string | undefined,
): Record<string, unknown> {
  const jobs = Object.entries(resources).flatMap(([id, resource]) => {
    const variables = (resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables;
    if (resource.Type !== 'AWS::Lambda::Function' || variables?.[JOB_ENV.leaseKey] === undefined) return [];
    return leaseKey === undefined || variables[JOB_ENV.leaseKey] === leaseKey ? [{ id, variables }] : [];
  });
  if (jobs.length === 1) return jobs[0]!.variables;
  if (jobs.length === 0)
    throw new Error(
      `localJob: no function in the template has ${JOB_ENV.leaseKey}${leaseKey === undefined ? '' : ` = ${leaseKey}`} (is it a ScheduledSingletonJob's template?)`,
    );
  throw new Error(`localJob: the template has several jobs (${jobs.map((j) => j.id).join(', ')}): pass leaseKey`);
}

interface CfnKey {
  AttributeName: string;
  KeyType: string;
}
interface CfnIndex {
  IndexName: string;
  KeySchema: CfnKey[];
  Projection?: { ProjectionType?: string; NonKeyAttributes?: string[] };
}

/** The table of a template resource, as deployed: keys, indexes, streams, TTL (billing on demand). */
async function createTable(client: DynamoDBClient, name: string, properties: Record<string, unknown>): Promise<void> {
  const keys = (schema: CfnKey[] | undefined): KeySchemaElement[] =>
    (schema ?? []).map((k) => ({ AttributeName: k.AttributeName, KeyType: k.KeyType as KeySchemaElement['KeyType'] }));
  const index = (i: CfnIndex) => ({
    IndexName: i.IndexName,
    KeySchema: keys(i.KeySchema),
    Projection: {
      ProjectionType: (i.Projection?.ProjectionType ?? 'ALL') as 'ALL' | 'KEYS_ONLY' | 'INCLUDE',
      ...(i.Projection?.NonKeyAttributes ? { NonKeyAttributes: i.Projection.NonKeyAttributes } : {}),
    },
  });
  const global = (properties.GlobalSecondaryIndexes as CfnIndex[] | undefined) ?? [];
  const local = (properties.LocalSecondaryIndexes as CfnIndex[] | undefined) ?? [];
  const stream = properties.StreamSpecification as { StreamViewType?: string } | undefined;
  const input: CreateTableCommandInput = {
    TableName: name,
    KeySchema: keys(properties.KeySchema as CfnKey[] | undefined),
    AttributeDefinitions: (properties.AttributeDefinitions as AttributeDefinition[] | undefined) ?? [],
    BillingMode: 'PAY_PER_REQUEST',
    ...(global.length > 0 ? { GlobalSecondaryIndexes: global.map(index) } : {}),
    ...(local.length > 0 ? { LocalSecondaryIndexes: local.map(index) } : {}),
    ...(stream?.StreamViewType
      ? { StreamSpecification: { StreamEnabled: true, StreamViewType: stream.StreamViewType as 'NEW_AND_OLD_IMAGES' } }
      : {}),
  };
  try {
    await client.send(new CreateTableCommand(input));
  } catch (error) {
    const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new Error(
      `localJob: could not create table ${name} on ${String(process.env.AWS_ENDPOINT_URL_DYNAMODB)} (is DynamoDB Local running there?): ${why}`,
      { cause: error },
    );
  }
  const ttl = properties.TimeToLiveSpecification as { AttributeName?: string; Enabled?: boolean } | undefined;
  if (ttl?.Enabled === true && ttl.AttributeName !== undefined) {
    await client.send(
      new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: true } }),
    );
  }
}

function underTest<T>(
  handler: ScheduledSingletonHandler<T>,
  options: { env: Record<string, string | undefined>; coordination?: MemoryCoordination; now?: () => number; print: boolean },
): JobUnderTest<T> {
  if (typeof handler.with !== 'function') throw new TypeError('expected the handler scheduledSingleton(work) returned');
  const lines: Record<string, unknown>[] = [];
  // Each invocation's own lines, also when several run at once.
  const invocation = new AsyncLocalStorage<Record<string, unknown>[]>();
  const write = (line: string) => {
    if (options.print) writeStdout(line);
    const parsed = JSON.parse(line) as Record<string, unknown>;
    lines.push(parsed);
    invocation.getStore()?.push(parsed);
  };
  const tested = handler.with({
    env: options.env,
    write,
    ...(options.coordination ? { coordination: options.coordination } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  return {
    handler: tested,
    lines,
    async invoke({ event, context }) {
      const mine: Record<string, unknown>[] = [];
      let result: RunResult;
      let threw = false;
      try {
        result = await invocation.run(mine, () => tested(event, context));
      } catch (error) {
        const carried = failedRunResult(error);
        if (carried === undefined) throw error;
        result = carried;
        threw = true;
      }
      const emf = mine.find((line) => line._aws !== undefined);
      const metrics = Object.fromEntries(
        Object.entries(emf ?? {}).filter((entry): entry is [string, number] => typeof entry[1] === 'number'),
      );
      return { result, threw, lines: mine, summary: mine.find((line) => line.summary === true), metrics };
    },
  };
}

/**
 * The result a failed run's error carries: a ScheduledRunFailedError's (or a subclass's, from the
 * `failedError` option), or any error with a `summary` that is a run result.
 */
function failedRunResult(error: unknown): RunResult | undefined {
  if (error instanceof ScheduledRunFailedError) return error.summary;
  const summary = (error as { summary?: Partial<RunResult> } | null)?.summary;
  return typeof summary?.outcome === 'string' && typeof summary.runId === 'string' ? (summary as RunResult) : undefined;
}
