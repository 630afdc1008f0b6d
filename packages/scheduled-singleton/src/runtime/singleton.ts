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
import { DYNAMO_CLIENT_SETTINGS } from './client-budget.js';
import { dynamoCoordination, type CoordinationStore } from './coordination.js';
import { JobConfigError, LeaseConfigError, ScheduledRunFailedError } from './errors.js';
import { EventValidationError } from './errors.js';
import { parseInvocation, type ConsoleOptions, type Invocation } from './invocation.js';
import { DEFAULT_OUTBOX_RETENTION_DAYS, validateSource, type OutboxSettings } from './outbox.js';
import type { WorkContext } from './ports.js';
import { DEFAULT_MAX_EVENT_AGE_MS, ledgerRetentionMs } from './ledger.js';
import { emfLine, jsonLogger, logLevelFrom, writeStdout, type JobLogger, type Write } from './report.js';
import { guarded, resultOf, type PrecheckSettlement, type Settlement } from './result.js';
import type { ResultHooks, RunResult } from './run-result.js';
import { runExclusively, runUnfenced, type ExclusiveDeps, type Settled } from './run.js';
import { leaseTiming, validateTiming } from './timing.js';

export type { FailedRun, FailureNaming, InvocationSource, ResultHooks, RunOutcome, RunResult } from './run-result.js';

/** The part of Lambda's context the wrapper uses (the real one has more). */
export interface LambdaContextLike {
  getRemainingTimeInMillis(): number;
  invokedFunctionArn?: string;
  awsRequestId?: string;
}

/** What the work receives: the module's WorkContext, and what this run is. */
export interface JobContext<P = undefined, C = undefined> extends WorkContext {
  readonly source: Invocation['source'];
  /** The interval this run stands for (a Scheduled Event's, or a console `interval`). */
  readonly interval?: string;
  /** A console `{"dryRun": true}`: no lease, and `commit` refuses. */
  readonly dryRun: boolean;
  readonly force: boolean;
  /** The job's own console options (see `consoleOptions`). */
  readonly options: Readonly<Record<string, unknown>>;
  /** JSON log lines on stdout, carrying runId, source, interval and (once the lease is held) fence. */
  readonly log: JobLogger;
  readonly lambda: LambdaContextLike;
  /** What the `precheck` option found before the lease (absent without one). */
  readonly precheck?: P;
  /** What the `configure` option returned (read once per container); undefined without one. */
  readonly config: C;
}

/** What a `precheck` receives: what this run is, a signal bounded by the run's deadline, the log. */
export interface PrecheckContext<C = undefined> {
  readonly runId: string;
  readonly source: Invocation['source'];
  readonly interval?: string;
  readonly dryRun: boolean;
  readonly force: boolean;
  readonly options: Readonly<Record<string, unknown>>;
  readonly signal: AbortSignal;
  readonly log: JobLogger;
  /** What the `configure` option returned; undefined without one. */
  readonly config: C;
}

/**
 * A precheck's answer: `idle` ends the invocation as `succeeded` with `idle: true` (and `summary`'s
 * fields) before any lease; otherwise the run goes on as usual and the work receives `value`.
 */
export type Precheck<P> = { idle: true; summary?: Record<string, unknown> } | { idle: false; value: P };

/** What `configure` receives beside the environment: the wrapper's own parts, to build the job's on. */
export interface ConfigureParts {
  /** The wrapper's DynamoDB client (the `dynamo` option, or one with DYNAMO_CLIENT_SETTINGS' time budget). */
  readonly dynamo: DynamoDBClient;
}

export interface ScheduledSingletonOptions<T, P = undefined, C = undefined> extends ResultHooks<T> {
  /**
   * The job's own configuration, read once per container (after the wrapper's own environment,
   * before the event is parsed), with the wrapper's DynamoDB client so the job builds its stores
   * on it. A throw fails the invocation with reason `config` before any lease or work (it is read
   * again by the next invocation). The value reaches the work as `config` (and the precheck).
   * @default none: `config` is undefined
   */
  configure?: (env: Record<string, string | undefined>, parts: ConfigureParts) => C;
  /**
   * A read-only look before the lease, for a job that often has nothing to do (a frequent
   * schedule): e.g. one query for due work. When it answers `idle`, the invocation takes no lease,
   * writes nothing, marks no interval done (a retry or the next tick looks again) and succeeds
   * with `idle: true`, so an idle tick costs only the look. It cannot write (it gets no `commit`),
   * so it cannot weaken the guarantees: everything the run writes is still fenced by the lease,
   * and the work must treat what the look found as possibly stale (the lease was not held when it
   * was read). A look that throws fails the run with reason `precheck`.
   * @default none: every run goes to the lease
   */
  precheck?: (context: PrecheckContext<C>) => Promise<Precheck<P>>;
  /**
   * Writes the one summary line in the job's own words instead of the default (message = the
   * outcome, `"summary": true`, the result's fields; `error` level for a failure).
   * @default the default line
   */
  summaryLine?: (result: RunResult, log: JobLogger) => void;
  /**
   * The error thrown for a failed scheduled run (so that Lambda retries it) and for a bad event or
   * configuration: e.g. a subclass of ScheduledRunFailedError, to keep the job's own error name
   * (Lambda's `errorType`). `error` is what failed the run (the bad event's, the configuration's
   * or the work's error), for a job that throws it as it is.
   * @default (result) => new ScheduledRunFailedError(result)
   */
  failedError?: (result: RunResult, error: unknown) => Error;
  /**
   * Extra attributes of the run record in the coordination table.
   * @default none
   */
  record?: (settled: Settled<T>) => Record<string, unknown>;
  /**
   * The job's own console options, passed to the work in `options`: their names, or a check per
   * name (`{ acceptHeld: booleanOption }`) whose problem refuses the event (reason `event`) as the
   * wrapper's own are. Other fields are refused.
   * @default none
   */
  consoleOptions?: ConsoleOptions;
  /**
   * The DynamoDB client of the lease, the fenced writes and `configure`'s parts.
   * @default a client with DYNAMO_CLIENT_SETTINGS (the time budget the stop margin is derived from)
   */
  dynamo?: DynamoDBClient;
  /**
   * Where the lease and the fenced writes live. A unit test passes `new MemoryCoordination()` from
   * `@contest-sync/scheduled-singleton/testing`.
   * @default dynamoCoordination(dynamo): DynamoDB
   */
  coordination?: CoordinationStore;
  /**
   * The environment the wrapper (and `configure`) reads.
   * @default process.env
   */
  env?: Record<string, string | undefined>;
  /**
   * The variable names, if the stack renamed them with ScheduledSingletonJob's `environmentNames`.
   * @default JOB_ENV
   */
  envNames?: Partial<JobEnvNames>;
  /** @default Date.now */
  now?: () => number;
  /** @default randomUUID */
  newRunId?: () => string;
  /**
   * Where log and metric lines go.
   * @default stdout, bypassing `console`
   */
  write?: Write;
}

export interface ScheduledSingletonHandler<T = unknown> {
  (event: unknown, context: LambdaContextLike): Promise<RunResult>;
  /**
   * The same work with these options merged over the handler's own (a test's `coordination`,
   * `env`, `now`, `write`): a new handler with its own container state.
   */
  with(overrides: ScheduledSingletonOptions<T>): ScheduledSingletonHandler<T>;
}

/** Built once per container from the environment the construct sets. */
interface Setup {
  deps: ExclusiveDeps;
  periodMinutes: number;
}

/** What a container keeps between invocations: built on the first that needs it, kept once it worked. */
interface Container<C> {
  setup?: Setup;
  configured?: { value: C };
  dynamo?: DynamoDBClient;
  /** The current invocation's log: contention warnings of the lease go to it. */
  log?: JobLogger;
}

export function scheduledSingleton<T, P = undefined, C = undefined>(
  work: (job: JobContext<P, C>) => Promise<T>,
  options: ScheduledSingletonOptions<T, P, C> = {},
): ScheduledSingletonHandler<T> {
  const handler = invocationHandler(work, options);
  return Object.assign(handler, {
    with: (overrides: ScheduledSingletonOptions<T>) =>
      scheduledSingleton(work, { ...options, ...(overrides as unknown as ScheduledSingletonOptions<T, P, C>) }),
  });
}

function invocationHandler<T, P, C>(
  work: (job: JobContext<P, C>) => Promise<T>,
  options: ScheduledSingletonOptions<T, P, C>,
): (event: unknown, context: LambdaContextLike) => Promise<RunResult> {
  const env = options.env ?? process.env;
  const names: JobEnvNames = { ...JOB_ENV, ...options.envNames };
  const now = options.now ?? Date.now;
  const write = options.write ?? writeStdout;
  const metrics = { namespace: env[names.metricsNamespace], service: env[names.serviceName] };
  const container: Container<C> = {};

  return async (event, context) => {
    const startedAt = now();
    const runId = (options.newRunId ?? randomUUID)();
    const keys: Record<string, unknown> = { runId };
    const log = jsonLogger({ write, service: metrics.service, level: logLevelFrom(env), now, keys: () => keys });
    container.log = log;
    const reporting: Reporting<T> = { runId, startedAt, now, log, write, names, metrics, hooks: options };

    const parsed = parse(event, context, { env, names, now, options, container });
    if ('failure' in parsed) return report(parsed.failure, undefined, reporting);
    const { invocation, setup: ready, config } = parsed;
    Object.assign(keys, { source: invocation.source }, invocation.interval !== undefined ? { interval: invocation.interval } : {});
    const settled = await runInvocation(invocation, work, {
      runId,
      context,
      deps: ready.deps,
      log,
      config,
      options,
      // Every line of the run from here on carries the fence it holds.
      onFence: (fence) => void (keys.fence = fence),
    });
    return report(settled, invocation, reporting);
  };
}

interface ParseInput<T, P, C> {
  env: Record<string, string | undefined>;
  names: JobEnvNames;
  now: () => number;
  options: ScheduledSingletonOptions<T, P, C>;
  container: Container<C>;
}

/**
 * The environment and the job's configuration (once per container), and the event: what this
 * invocation is, or why it cannot run.
 */
function parse<T, P, C>(
  event: unknown,
  context: LambdaContextLike,
  input: ParseInput<T, P, C>,
): { invocation: Invocation; setup: Setup; config: C } | { failure: Settlement<T> } {
  const { container, options } = input;
  try {
    const dynamo = () => (container.dynamo ??= options.dynamo ?? budgetedDynamoClient());
    container.setup ??= setup(input.env, input.names, { coordination: options.coordination, dynamo }, input.now, () => container.log);
    container.configured ??= { value: options.configure ? options.configure(input.env, { dynamo: dynamo() }) : (undefined as C) };
    refuseShortTimeout(container.setup, context.getRemainingTimeInMillis(), input.names);
    const invocation = parseInvocation(event, {
      periodMinutes: container.setup.periodMinutes,
      nowMs: input.now(),
      ...(options.consoleOptions !== undefined ? { consoleOptions: options.consoleOptions } : {}),
      ...(context.invokedFunctionArn !== undefined ? { invokedFunctionArn: context.invokedFunctionArn } : {}),
    });
    return { invocation, setup: container.setup, config: container.configured.value };
  } catch (error) {
    return { failure: { outcome: 'failed', reason: error instanceof EventValidationError ? 'event' : 'config', error } };
  }
}

/**
 * A DynamoDB client with the package's time budget (DYNAMO_CLIENT_SETTINGS: what the stop margin
 * is derived from). The wrapper's default; a function of the same stack that is not a job (an API)
 * builds its client with it too, so every client of the product has one budget.
 */
export function budgetedDynamoClient(): DynamoDBClient {
  return new DynamoDBClient({
    maxAttempts: DYNAMO_CLIENT_SETTINGS.maxAttempts,
    requestHandler: {
      connectionTimeout: DYNAMO_CLIENT_SETTINGS.connectionTimeoutMs,
      requestTimeout: DYNAMO_CLIENT_SETTINGS.requestTimeoutMs,
    },
  });
}

/** The hooks of reporting, as the wrapper calls them. */
type Hooks<T> = ResultHooks<T> & Pick<ScheduledSingletonOptions<T>, 'summaryLine' | 'failedError'>;

interface Reporting<T> {
  runId: string;
  startedAt: number;
  now: () => number;
  log: JobLogger;
  write: Write;
  names: JobEnvNames;
  metrics: { namespace: string | undefined; service: string | undefined };
  hooks: Hooks<T>;
}

/** One summary line, one EMF line; throws when a scheduled run failed (Lambda retries it) or none could start. */
function report<T>(settled: Settlement<T>, invocation: Invocation | undefined, reporting: Reporting<T>): RunResult {
  const { log, now, metrics, hooks } = reporting;
  const durationMs = now() - reporting.startedAt;
  const { result, wrapperReason } = resultOf(settled, invocation, { runId: reporting.runId, durationMs, hooks, log });
  summaryLine(result, reporting);
  if (metrics.namespace !== undefined && metrics.service !== undefined) {
    // The metrics count the wrapper's own reason (LeaseLost), whatever `failure` named the run.
    const counted = { outcome: result.outcome, ...(wrapperReason !== undefined ? { reason: wrapperReason } : {}), durationMs };
    reporting.write(emfLine(counted, { namespace: metrics.namespace, service: metrics.service, timestampMs: now() }));
  } else {
    log.warn(`metrics not emitted: ${reporting.names.metricsNamespace} or ${reporting.names.serviceName} is not set`);
  }
  if (result.outcome === 'failed' && (invocation === undefined || invocation.source === 'schedule')) {
    const fallback = new ScheduledRunFailedError(result);
    const error = 'error' in settled ? settled.error : undefined;
    throw hooks.failedError === undefined ? fallback : guarded(log, 'failedError', () => hooks.failedError!(result, error), fallback);
  }
  return result;
}

/** The one summary line: the job's own (`summaryLine`), or message = outcome, `"summary": true`, the fields. */
function summaryLine<T>(result: RunResult, { log, hooks }: Reporting<T>): void {
  const { summaryLine: own } = hooks;
  if (own !== undefined && guarded(log, 'summaryLine', () => (own(result, log), true), false)) return;
  const { runId: _runId, source: _source, interval: _interval, ...fields } = result;
  if (result.outcome === 'failed') log.error(result.outcome, { summary: true, ...fields });
  else log.info(result.outcome, { summary: true, ...fields });
}

/** The deps of runExclusively, from the environment ScheduledSingletonJob sets. */
function setup(
  env: Record<string, string | undefined>,
  names: JobEnvNames,
  parts: { coordination: CoordinationStore | undefined; dynamo: () => DynamoDBClient },
  now: () => number,
  log: () => JobLogger | undefined,
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
  // Set by the construct; a function configured by hand without it has the construct's default.
  const maxEventAgeMs = env[names.maxEventAgeSeconds] === undefined ? DEFAULT_MAX_EVENT_AGE_MS : positive('maxEventAgeSeconds') * 1000;
  const store = parts.coordination ?? dynamoCoordination(parts.dynamo());
  const contention = (operation: string, reason: string, attempt: number) =>
    log()?.warn('DynamoDB contention; retrying', { operation, reason, attempt });
  const { lease, writer } = store.open({
    table: read('coordinationTable'),
    key: read('leaseKey'),
    timing,
    now,
    ledgerRetentionMs: ledgerRetentionMs(periodMinutes, maxEventAgeMs),
    onContention: contention,
    // Each fenced transaction at DEBUG: when it was sent and answered, and its data actions.
    onCommit: ({ sentAtMs, committedAtMs, actions }) => log()?.debug('committed', { sentAtMs, committedAtMs, actions: actions.length }),
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
function refuseShortTimeout(ready: Setup, remainingMs: number, names: JobEnvNames): void {
  try {
    validateTiming(ready.deps.timing, remainingMs);
  } catch (error) {
    if (error instanceof LeaseConfigError)
      throw new JobConfigError(`${names.leaseDurationSeconds} with this function timeout: ${error.message}`);
    throw error;
  }
}

/** What running one parsed invocation takes. */
interface Step<T, P, C> {
  runId: string;
  context: LambdaContextLike;
  deps: ExclusiveDeps;
  log: JobLogger;
  config: C;
  options: ScheduledSingletonOptions<T, P, C>;
  /** Told the fence once the lease is held. */
  onFence: (fence: number) => void;
}

/** The precheck (if any), then the work: under the lease, or unfenced for a dry run. */
async function runInvocation<T, P, C>(
  invocation: Invocation,
  work: (job: JobContext<P, C>) => Promise<T>,
  step: Step<T, P, C>,
): Promise<Settlement<T>> {
  let looked: { value: P } | undefined;
  if (step.options.precheck !== undefined) {
    const pre = await precheckStep(step.options.precheck, invocation, step);
    if ('settled' in pre) return pre.settled;
    looked = pre;
  }
  return runStep(invocation, work, step, looked).catch(
    // runExclusively reports every expected failure in its outcome: this is a bug. Still report it.
    (error: unknown): Settlement<T> => ({ outcome: 'failed', reason: 'work', error, deadline: false, fence: 0, heartbeats: 0 }),
  );
}

/** The precheck, before the lease: idle ends the run; otherwise what it found goes to the work. */
async function precheckStep<P, C>(
  precheck: (context: PrecheckContext<C>) => Promise<Precheck<P>>,
  invocation: Invocation,
  step: { runId: string; context: LambdaContextLike; deps: ExclusiveDeps; log: JobLogger; config: C },
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
      config: step.config,
    });
    if (look.idle) return { settled: { outcome: 'succeeded', idle: true, summary: look.summary ?? {} } };
    return { value: look.value };
  } catch (error) {
    return { settled: { outcome: 'failed', reason: 'precheck', error } };
  }
}

/** The work, exclusively under the lease; a dry run without it (nothing can be written). */
async function runStep<T, P, C>(
  invocation: Invocation,
  work: (job: JobContext<P, C>) => Promise<T>,
  step: Step<T, P, C>,
  looked: { value: P } | undefined,
): Promise<Settlement<T>> {
  const { runId, context, log } = step;
  const remainingMs = () => context.getRemainingTimeInMillis();
  const { source, interval, dryRun, force, options } = invocation;
  const job = (base: WorkContext): JobContext<P, C> => ({
    ...base,
    source,
    ...(interval !== undefined ? { interval } : {}),
    dryRun,
    force,
    options,
    log,
    lambda: context,
    config: step.config,
    ...(looked !== undefined ? { precheck: looked.value } : {}),
  });
  if (dryRun) {
    const dry = await runUnfenced({ runId, remainingMs }, (base) => work(job(base)), step.deps);
    return dry.outcome === 'succeeded'
      ? { outcome: 'succeeded', value: dry.value, dryRun: true }
      : { outcome: 'failed', reason: 'work', error: dry.error, deadline: dry.deadline, dryRun: true };
  }
  const deps: ExclusiveDeps = {
    ...step.deps,
    onAcquired: (held) => {
      step.onFence(held.fence);
      log.debug('lease acquired', {
        fence: held.fence,
        acquiredAtMs: step.deps.now(),
        expiresAt: new Date(held.expiresAtMs).toISOString(),
      });
    },
    onHeartbeat: (held) => log.debug('lease renewed', { expiresAt: new Date(held.expiresAtMs).toISOString() }),
    log: { warn: (message, extra) => log.warn(message, extra) },
  };
  const run = { runId, source, ...(interval !== undefined ? { interval } : {}), force, remainingMs };
  const record = step.options.record;
  return runExclusively(run, (base) => work(job(base)), deps, record ? { record } : {});
}
