/**
 * The handler wrapper: a scheduled job in one call.
 *
 *   export const handler = scheduledSingleton(async ({ interval, fence, signal, commit }) => { ... });
 *
 * Each invocation goes through three steps, as client-go's leader election `Run` does:
 *   parse  — the environment ScheduledSingletonJob sets (once) and the event (Scheduled Event, the
 *            deploy-time `{}`, a console payload with `interval`, `force`, `dryRun`);
 *   run    — the work, exclusively under the lease (runExclusively), or unfenced for a dry run;
 *   report — one summary line, the five metrics the construct's alarms read (EMF on stdout, so
 *            Lambda's JSON log format keeps them extractable), and a throw when a scheduled run
 *            failed, so that Lambda retries it.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { JOB_ENV, type JobEnvNames } from '../contract.js';
import { describe } from './aws-errors.js';
import { DYNAMO_CLIENT_SETTINGS } from './client-budget.js';
import { dynamoCoordination, type CoordinationStore } from './coordination.js';
import { LeaseConfigError, RunDeadlineError } from './errors.js';
import { EventValidationError, parseInvocation, type Invocation } from './invocation.js';
import { DEFAULT_OUTBOX_RETENTION_DAYS, validateSource, type OutboxSettings } from './outbox.js';
import type { WorkContext } from './ports.js';
import { ledgerRetentionMs } from './record.js';
import { emfLine, jsonLogger, logLevelFrom, writeStdout, type JobLogger, type Write } from './report.js';
import { runExclusively, runUnfenced, type ExclusiveDeps, type ExclusiveOutcome, type Settled } from './run.js';
import { bound } from './text.js';
import { leaseTiming, validateTiming } from './timing.js';

/** The part of Lambda's context the wrapper uses (the real one has more). */
export interface LambdaContextLike {
  getRemainingTimeInMillis(): number;
  invokedFunctionArn?: string;
  awsRequestId?: string;
}

/** What the work receives: the module's WorkContext, and what this run is. */
export interface JobContext<P = undefined> extends WorkContext {
  readonly source: Invocation['source'];
  /** The interval this run stands for (a Scheduled Event's, or a console `interval`). */
  readonly interval?: string;
  /** A console `{"dryRun": true}`: no lease, and `commit` refuses. */
  readonly dryRun: boolean;
  readonly force: boolean;
  /** The job's own console options (see `consoleOptions`). */
  readonly options: Readonly<Record<string, unknown>>;
  /** JSON log lines on stdout, carrying runId, source and interval. */
  readonly log: JobLogger;
  readonly lambda: LambdaContextLike;
  /** What the `precheck` option found before the lease (absent without one). */
  readonly precheck?: P;
}

/** What a `precheck` receives: what this run is, a signal bounded by the run's deadline, the log. */
export interface PrecheckContext {
  readonly runId: string;
  readonly source: Invocation['source'];
  readonly interval?: string;
  readonly dryRun: boolean;
  readonly force: boolean;
  readonly options: Readonly<Record<string, unknown>>;
  readonly signal: AbortSignal;
  readonly log: JobLogger;
}

/**
 * A precheck's answer: `idle` ends the invocation as `succeeded` with `idle: true` (and `summary`'s
 * fields) before any lease; otherwise the run goes on as usual and the work receives `value`.
 */
export type Precheck<P> = { idle: true; summary?: Record<string, unknown> } | { idle: false; value: P };

export interface ScheduledSingletonOptions<T, P = undefined> {
  /**
   * A read-only look before the lease, for a job that often has nothing to do (a frequent
   * schedule): e.g. one query for due work. When it answers `idle`, the invocation takes no lease,
   * writes nothing, marks no interval done (a retry or the next tick looks again) and succeeds
   * with `idle: true`, so an idle tick costs only the look. It cannot write (it gets no `commit`),
   * so it cannot weaken the guarantees: everything the run writes is still fenced by the lease,
   * and the work must treat what the look found as possibly stale (the lease was not held when it
   * was read). A look that throws fails the run with reason `precheck`.
   */
  precheck?: (context: PrecheckContext) => Promise<Precheck<P>>;
  /** Extra fields of the summary line and the returned result, from the work's value. */
  summary?: (value: T) => Record<string, unknown>;
  /** Extra attributes of the run record in the coordination table. */
  record?: (settled: Settled<T>) => Record<string, unknown>;
  /** Names of the job's own console options (passed to the work in `options`; others are refused). */
  consoleOptions?: readonly string[];
  /** The DynamoDB client of the lease and the fenced writes (default: one with the module's time budget). */
  dynamo?: DynamoDBClient;
  /**
   * Where the lease and the fenced writes live (default: DynamoDB through `dynamo`). A unit test
   * passes `new MemoryCoordination()` from `@contest-sync/scheduled-singleton/testing`.
   */
  coordination?: CoordinationStore;
  /** Default process.env, and the names ScheduledSingletonJob uses (override only if the stack did). */
  env?: Record<string, string | undefined>;
  envNames?: Partial<JobEnvNames>;
  now?: () => number;
  newRunId?: () => string;
  /** Where log and metric lines go (default: stdout, bypassing `console`). */
  write?: Write;
}

export type RunOutcome = 'succeeded' | 'skipped' | 'failed';

/** The run's outcome: returned, logged as the summary line, and carried by ScheduledRunFailedError. */
export interface RunResult {
  runId: string;
  source: Invocation['source'] | 'unknown';
  interval?: string;
  outcome: RunOutcome;
  /** skipped: `lease-held`, `already-done`; failed: `event`, `config`, `precheck`, `lease`, `lease-lost`, `work`. */
  reason?: string;
  fence?: number;
  holder?: string;
  holderExpiresAt?: string;
  detail?: string;
  error?: string;
  /** The work was stopped by the run's deadline. */
  deadline?: boolean;
  dryRun?: true;
  /** The precheck found nothing to do: no lease was taken. */
  idle?: true;
  durationMs: number;
  [field: string]: unknown;
}

/** Thrown by a scheduled run that failed (so that Lambda retries it), and by a bad event or configuration. */
export class ScheduledRunFailedError extends Error {
  override readonly name = 'ScheduledRunFailedError';
  constructor(readonly summary: RunResult) {
    super(bound(`run ${summary.runId} failed (${summary.reason ?? 'unknown'}): ${summary.error ?? 'no detail'}`));
  }
}

export class JobConfigError extends Error {
  override readonly name = 'JobConfigError';
}

export interface ScheduledSingletonHandler<T = unknown> {
  (event: unknown, context: LambdaContextLike): Promise<RunResult>;
  /**
   * The same work with these options merged over the handler's own (a test's `coordination`,
   * `env`, `now`, `write`): a new handler with its own container state.
   */
  with(overrides: ScheduledSingletonOptions<T>): ScheduledSingletonHandler<T>;
}

/** The precheck's settlement when it ended the run before the lease. */
type PrecheckSettlement =
  { outcome: 'succeeded'; idle: true; summary: Record<string, unknown> } | { outcome: 'failed'; reason: 'precheck'; error: unknown };

/** Built once per container from the environment the construct sets. */
interface Setup {
  deps: ExclusiveDeps;
  periodMinutes: number;
}

type Settlement<T> =
  ExclusiveOutcome<T> | { outcome: 'failed'; reason: 'event' | 'config'; error: unknown; dryRun?: undefined } | PrecheckSettlement;

export function scheduledSingleton<T, P = undefined>(
  work: (job: JobContext<P>) => Promise<T>,
  options: ScheduledSingletonOptions<T, P> = {},
): ScheduledSingletonHandler<T> {
  const handler = invocationHandler(work, options);
  return Object.assign(handler, {
    with: (overrides: ScheduledSingletonOptions<T>) =>
      scheduledSingleton(work, { ...options, ...(overrides as ScheduledSingletonOptions<T, P>) }),
  });
}

function invocationHandler<T, P>(
  work: (job: JobContext<P>) => Promise<T>,
  options: ScheduledSingletonOptions<T, P>,
): (event: unknown, context: LambdaContextLike) => Promise<RunResult> {
  const env = options.env ?? process.env;
  const names: JobEnvNames = { ...JOB_ENV, ...options.envNames };
  const now = options.now ?? Date.now;
  const write = options.write ?? writeStdout;
  const metrics = { namespace: env[names.metricsNamespace], service: env[names.serviceName] };
  const container: { setup?: Setup; log?: JobLogger } = {};

  return async (event, context) => {
    const startedAt = now();
    const runId = (options.newRunId ?? randomUUID)();
    const keys: Record<string, unknown> = { runId };
    const log = jsonLogger({ write, service: metrics.service, level: logLevelFrom(env), now, keys: () => keys });
    container.log = log;
    const reporting: Reporting<T> = { runId, startedAt, now, log, write, names, metrics, summary: options.summary };

    const parsed = parse(event, context, { env, names, now, options, container });
    if ('failure' in parsed) return report(parsed.failure, undefined, reporting);
    const { invocation, setup: ready } = parsed;
    Object.assign(keys, { source: invocation.source }, invocation.interval !== undefined ? { interval: invocation.interval } : {});

    let looked: { value: P } | undefined;
    if (options.precheck !== undefined) {
      const pre = await precheckStep(options.precheck, invocation, { runId, context, deps: ready.deps, log });
      if ('settled' in pre) return report(pre.settled, invocation, reporting);
      looked = pre;
    }
    const settled = await runStep(invocation, work, {
      runId,
      context,
      deps: ready.deps,
      log,
      ...(options.record ? { record: options.record } : {}),
      ...(looked !== undefined ? { looked } : {}),
    }).catch(
      // runExclusively reports every expected failure in its outcome: this is a bug. Still report it.
      (error: unknown): Settlement<T> => ({ outcome: 'failed', reason: 'work', error, deadline: false, fence: 0, heartbeats: 0 }),
    );
    return report(settled, invocation, reporting);
  };
}

interface ParseInput<T, P> {
  env: Record<string, string | undefined>;
  names: JobEnvNames;
  now: () => number;
  options: ScheduledSingletonOptions<T, P>;
  /** Built once per container; contention warnings go to the current invocation's log. */
  container: { setup?: Setup; log?: JobLogger };
}

/** The environment (once per container) and the event: what this invocation is, or why it cannot run. */
function parse<T, P>(
  event: unknown,
  context: LambdaContextLike,
  input: ParseInput<T, P>,
): { invocation: Invocation; setup: Setup } | { failure: Settlement<T> } {
  const { container, options } = input;
  try {
    container.setup ??= setup(input.env, input.names, options, input.now, (message, fields) => container.log?.warn(message, fields));
    refuseShortTimeout(container.setup, context.getRemainingTimeInMillis());
    const invocation = parseInvocation(event, {
      periodMinutes: container.setup.periodMinutes,
      nowMs: input.now(),
      ...(options.consoleOptions !== undefined ? { consoleOptions: options.consoleOptions } : {}),
      ...(context.invokedFunctionArn !== undefined ? { invokedFunctionArn: context.invokedFunctionArn } : {}),
    });
    return { invocation, setup: container.setup };
  } catch (error) {
    return { failure: { outcome: 'failed', reason: error instanceof EventValidationError ? 'event' : 'config', error } };
  }
}

interface Reporting<T> {
  runId: string;
  startedAt: number;
  now: () => number;
  log: JobLogger;
  write: Write;
  names: JobEnvNames;
  metrics: { namespace: string | undefined; service: string | undefined };
  summary: ((value: T) => Record<string, unknown>) | undefined;
}

/** One summary line, one EMF line; throws when a scheduled run failed (Lambda retries it) or none could start. */
function report<T>(settled: Settlement<T> | DrySettlement<T>, invocation: Invocation | undefined, reporting: Reporting<T>): RunResult {
  const { log, now, metrics } = reporting;
  const result = resultOf(settled, invocation, {
    runId: reporting.runId,
    durationMs: now() - reporting.startedAt,
    summary: reporting.summary,
  });
  const { runId: _runId, source: _source, interval: _interval, ...fields } = result;
  if (result.outcome === 'failed') log.error(result.outcome, { summary: true, ...fields });
  else log.info(result.outcome, { summary: true, ...fields });
  if (metrics.namespace !== undefined && metrics.service !== undefined) {
    reporting.write(emfLine(result, { namespace: metrics.namespace, service: metrics.service, timestampMs: now() }));
  } else {
    log.warn(`metrics not emitted: ${reporting.names.metricsNamespace} or ${reporting.names.serviceName} is not set`);
  }
  if (result.outcome === 'failed' && (invocation === undefined || invocation.source === 'schedule'))
    throw new ScheduledRunFailedError(result);
  return result;
}

/** The deps of runExclusively, from the environment ScheduledSingletonJob sets. */
function setup<T>(
  env: Record<string, string | undefined>,
  names: JobEnvNames,
  options: Pick<ScheduledSingletonOptions<T>, 'dynamo' | 'coordination'>,
  now: () => number,
  warn: (message: string, fields: Record<string, unknown>) => void,
): Setup {
  const read = (key: keyof JobEnvNames): string => {
    const value = env[names[key]];
    if (value === undefined || value === '') throw new JobConfigError(`${names[key]} is not set (ScheduledSingletonJob sets it)`);
    return value;
  };
  const positive = (key: keyof JobEnvNames): number => {
    const value = Number(read(key));
    if (!Number.isFinite(value) || value <= 0) throw new JobConfigError(`${names[key]} must be a positive number, got ${read(key)}`);
    return value;
  };
  let timing;
  try {
    timing = leaseTiming(positive('leaseDurationSeconds'));
  } catch (error) {
    throw error instanceof JobConfigError ? error : new JobConfigError(`${names.leaseDurationSeconds}: ${(error as Error).message}`);
  }
  const periodMinutes = positive('scheduleRateMinutes');
  const store =
    options.coordination ??
    dynamoCoordination(
      options.dynamo ??
        new DynamoDBClient({
          maxAttempts: DYNAMO_CLIENT_SETTINGS.maxAttempts,
          requestHandler: {
            connectionTimeout: DYNAMO_CLIENT_SETTINGS.connectionTimeoutMs,
            requestTimeout: DYNAMO_CLIENT_SETTINGS.requestTimeoutMs,
          },
        }),
    );
  const contention = (operation: string, reason: string, attempt: number) =>
    warn('DynamoDB contention; retrying', { operation, reason, attempt });
  const { lease, writer } = store.open({
    table: read('coordinationTable'),
    key: read('leaseKey'),
    timing,
    now,
    ledgerRetentionMs: ledgerRetentionMs(periodMinutes),
    onContention: contention,
  });
  const outbox = outboxSettings(env, names);
  return {
    deps: { lease, writer, timing, now, runRecordPrefix: read('runRecordPrefix'), ...(outbox !== undefined ? { outbox } : {}) },
    periodMinutes,
  };
}

/**
 * The job's outbox, when the construct gave it one (table, event source, retention), read from the
 * environment ScheduledSingletonJob's `outbox` sets; a job on `runExclusively` reads it with this.
 * Undefined without an outbox table; a JobConfigError names a bad source or retention.
 */
export function outboxSettings(env: Record<string, string | undefined>, names: JobEnvNames = JOB_ENV): OutboxSettings | undefined {
  const table = env[names.outboxTable];
  if (table === undefined || table === '') return undefined;
  const source = env[names.eventSource] ?? '';
  try {
    validateSource(source);
  } catch (error) {
    throw new JobConfigError(`${names.eventSource}: ${(error as Error).message}`);
  }
  const days = Number(env[names.outboxRetentionDays] ?? DEFAULT_OUTBOX_RETENTION_DAYS);
  if (!Number.isFinite(days) || days < 1)
    throw new JobConfigError(`${names.outboxRetentionDays} must be at least 1 (days), got ${env[names.outboxRetentionDays]}`);
  return { table, source, retentionDays: days };
}

/** A function timeout the lease timing cannot honour is refused at the start of the invocation. */
function refuseShortTimeout(ready: Setup, remainingMs: number): void {
  try {
    validateTiming(ready.deps.timing, remainingMs);
  } catch (error) {
    if (error instanceof LeaseConfigError) throw new JobConfigError(`the function timeout cannot honour the lease: ${error.message}`);
    throw error;
  }
}

/** The precheck, before the lease: idle ends the run; otherwise what it found goes to the work. */
async function precheckStep<P>(
  precheck: (context: PrecheckContext) => Promise<Precheck<P>>,
  invocation: Invocation,
  step: { runId: string; context: LambdaContextLike; deps: ExclusiveDeps; log: JobLogger },
): Promise<{ value: P } | { settled: PrecheckSettlement }> {
  const { source, interval, dryRun, force, options } = invocation;
  const budgetMs = Math.max(1, step.context.getRemainingTimeInMillis() - step.deps.timing.stopMarginMs);
  try {
    const look = await precheck({
      runId: step.runId,
      source,
      ...(interval !== undefined ? { interval } : {}),
      dryRun,
      force,
      options,
      signal: AbortSignal.timeout(budgetMs),
      log: step.log,
    });
    if (look.idle) return { settled: { outcome: 'succeeded', idle: true, summary: look.summary ?? {} } };
    return { value: look.value };
  } catch (error) {
    return { settled: { outcome: 'failed', reason: 'precheck', error } };
  }
}

interface RunStepOptions<T, P> {
  runId: string;
  context: LambdaContextLike;
  deps: ExclusiveDeps;
  log: JobLogger;
  record?: (settled: Settled<T>) => Record<string, unknown>;
  looked?: { value: P };
}

/** The work, exclusively under the lease; a dry run without it (nothing can be written). */
async function runStep<T, P>(
  invocation: Invocation,
  work: (job: JobContext<P>) => Promise<T>,
  step: RunStepOptions<T, P>,
): Promise<Settlement<T> | DrySettlement<T>> {
  const { runId, context, log } = step;
  const remainingMs = () => context.getRemainingTimeInMillis();
  const { source, interval, dryRun, force, options } = invocation;
  const job = (base: WorkContext): JobContext<P> => ({
    ...base,
    source,
    ...(interval !== undefined ? { interval } : {}),
    dryRun,
    force,
    options,
    log,
    lambda: context,
    ...(step.looked !== undefined ? { precheck: step.looked.value } : {}),
  });
  if (dryRun) {
    const dry = await runUnfenced({ runId, remainingMs }, (base) => work(job(base)), step.deps);
    return dry.outcome === 'succeeded'
      ? { outcome: 'succeeded', value: dry.value, dryRun: true }
      : { outcome: 'failed', reason: 'work', error: dry.error, deadline: dry.deadline, dryRun: true };
  }
  const deps: ExclusiveDeps = {
    ...step.deps,
    onAcquired: (held) => log.debug('lease acquired', { fence: held.fence, expiresAt: new Date(held.expiresAtMs).toISOString() }),
    onHeartbeat: (held) => log.debug('lease renewed', { expiresAt: new Date(held.expiresAtMs).toISOString() }),
    log: { warn: (message, extra) => log.warn(message, extra) },
  };
  const run = { runId, source, ...(interval !== undefined ? { interval } : {}), force, remainingMs };
  return runExclusively(run, (base) => work(job(base)), deps, step.record ? { record: step.record } : {});
}

type DrySettlement<T> =
  { outcome: 'succeeded'; value: T; dryRun: true } | { outcome: 'failed'; reason: 'work'; error: unknown; deadline: boolean; dryRun: true };

/** The result of a run: what the outcome says, as plain JSON, with the job's summary fields. */
function resultOf<T>(
  settled: Settlement<T> | DrySettlement<T>,
  invocation: Invocation | undefined,
  extra: { runId: string; durationMs: number; summary: ((value: T) => Record<string, unknown>) | undefined },
): RunResult {
  const s = settled as Partial<Record<string, unknown>> & { outcome: RunOutcome };
  const value = settled.outcome === 'succeeded' && 'value' in settled ? settled.value : undefined;
  return {
    runId: extra.runId,
    source: invocation?.source ?? 'unknown',
    ...(invocation?.interval !== undefined ? { interval: invocation.interval } : {}),
    outcome: settled.outcome,
    ...(typeof s.reason === 'string' ? { reason: s.reason } : {}),
    ...(typeof s.fence === 'number' && s.fence > 0 ? { fence: s.fence } : {}),
    ...(typeof s.holder === 'string' ? { holder: s.holder } : {}),
    ...(typeof s.holderExpiresAt === 'string' ? { holderExpiresAt: s.holderExpiresAt } : {}),
    ...(typeof s.detail === 'string' ? { detail: s.detail } : {}),
    ...('error' in s ? { error: bound(describe(s.deadline === true ? asDeadlineError(s.error) : s.error)) } : {}),
    ...(s.deadline === true ? { deadline: true } : {}),
    ...(s.dryRun === true ? { dryRun: true as const } : {}),
    ...(s.idle === true ? { idle: true } : {}),
    durationMs: extra.durationMs,
    ...('idle' in settled
      ? settled.summary
      : settled.outcome === 'succeeded' && extra.summary !== undefined
        ? extra.summary(value as T)
        : {}),
  };
}

/**
 * What a run stopped by its deadline reports: the RunDeadlineError its signal carried, whatever the
 * work threw on seeing it (an AbortError of the call it passed the signal to, usually).
 */
function asDeadlineError(error: unknown): unknown {
  if (error instanceof RunDeadlineError) return error;
  return new RunDeadlineError('the run reached its deadline before Lambda timeout', { cause: error });
}
