/**
 * The wrapper's hooks, as an adopter uses them through `/testing`: the job's own configuration
 * (`configure`, once per container, a throw is reason `config` before any lease), console options
 * with checks (`booleanOption`), naming a failed run (`failure`), one result shape
 * (`resultDefaults`), the work's summary with its heartbeats, the job's own summary line
 * (`summaryLine`) and thrown error (`failedError`), and `fence` on every line once the lease is held.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  booleanOption,
  LeaseUnavailableError,
  ScheduledRunFailedError,
  scheduledSingleton,
  type CoordinationConfig,
  type CoordinationPorts,
  type JobContext,
  type RunResult,
  type ScheduledSingletonOptions,
} from '@contest-sync/scheduled-singleton';
import { consoleRun, dryRun, MemoryCoordination, scheduledTick, testJob } from '@contest-sync/scheduled-singleton/testing';

const at = Date.parse('2026-11-30T12:07:00Z');
const clock = () => at;

class StoreError extends Error {
  override readonly name = 'StoreError';
}

/** A job's own failed-run error, as a job keeps its name for Lambda's `errorType`. */
class ReportFailedError extends ScheduledRunFailedError {
  override readonly name = 'ReportFailedError';
  constructor(summary: RunResult) {
    super(summary, `report ${summary.runId} failed in phase ${summary.reason ?? 'unknown'}`);
  }
}

afterEach(() => vi.useRealTimers());

describe('configure: the job configuration, once per container', () => {
  it('is read once, before the event, and reaches the work and the precheck', async () => {
    const configure = vi.fn((env: Record<string, string | undefined>) => ({ table: env.REPORT_TABLE ?? 'none' }));
    const seen: unknown[] = [];
    const handler = scheduledSingleton(
      async ({ config }: JobContext<string, { table: string }>) => {
        seen.push(['work', config.table]);
      },
      {
        configure,
        precheck: async ({ config }) => {
          seen.push(['precheck', config.table]);
          return { idle: false, value: 'rows' };
        },
      },
    );
    const job = testJob(handler, { now: clock, env: { REPORT_TABLE: 'reports' } });
    expect((await job.invoke(consoleRun({ bogus: 1 }))).result).toMatchObject({ outcome: 'failed', reason: 'event' });
    expect(configure).toHaveBeenCalledTimes(1); // read before the event was refused
    await job.invoke(scheduledTick(at));
    await job.invoke(consoleRun());
    expect(configure).toHaveBeenCalledTimes(1);
    expect(seen).toEqual([
      ['precheck', 'reports'],
      ['work', 'reports'],
      ['precheck', 'reports'],
      ['work', 'reports'],
    ]);
  });

  it('a throw fails the invocation with reason config before any lease or work, thrown even from the console; read again next time', async () => {
    let broken = true;
    const work = vi.fn(async () => 'ran');
    const handler = scheduledSingleton(work, {
      configure: () => {
        if (broken) throw new Error('REPORT_TABLE is not set');
        return { ok: true };
      },
    });
    const job = testJob(handler, { now: clock });
    const failed = await job.invoke(consoleRun());
    expect(failed).toMatchObject({ threw: true, result: { outcome: 'failed', reason: 'config', error: 'Error: REPORT_TABLE is not set' } });
    expect(failed.metrics).toMatchObject({ RunFailed: 1 });
    expect(work).not.toHaveBeenCalled();
    expect(job.coordination.leases.size).toBe(0);
    broken = false;
    expect((await job.invoke(consoleRun())).result).toMatchObject({ outcome: 'succeeded', fence: 1 });
  });

  it('receives the wrapper’s DynamoDB client (the `dynamo` option when given)', async () => {
    const dynamo = new DynamoDBClient({ region: 'us-east-1' });
    const received: DynamoDBClient[] = [];
    const handler = scheduledSingleton(async () => undefined, {
      dynamo,
      configure: (_env, parts) => void received.push(parts.dynamo),
    });
    await testJob(handler, { now: clock }).invoke(dryRun());
    expect(received).toHaveLength(1);
    expect(received[0]).toBe(dynamo);
  });
});

describe('consoleOptions with checks', () => {
  const handler = scheduledSingleton(async ({ options }) => ({ seen: options }), {
    consoleOptions: { acceptHeld: booleanOption, limit: (value) => (Number.isInteger(value) ? undefined : 'must be a whole number') },
    summary: (value) => value,
  });

  it('refuses a bad value as the wrapper refuses its own, naming each problem', async () => {
    const job = testJob(handler, { now: clock });
    const run = await job.invoke(consoleRun({ acceptHeld: 'yes', limit: 2.5, dryRun: 'no' }));
    expect(run).toMatchObject({ threw: true, result: { outcome: 'failed', reason: 'event' } });
    expect(run.result.error).toBe(
      'EventValidationError: invalid console event: dryRun: must be true or false; acceptHeld: must be true or false; limit: must be a whole number',
    );
    expect((await job.invoke(consoleRun({ acceptHeld: true, other: 1 }))).result.error).toContain('unknown field(s) "other"');
  });

  it('passes good values (and leaves absent ones unchecked) to the work', async () => {
    const job = testJob(handler, { now: clock });
    expect((await job.invoke(consoleRun({ acceptHeld: true }))).result).toMatchObject({ outcome: 'succeeded', seen: { acceptHeld: true } });
    expect((await job.invoke(consoleRun({ limit: 3 }))).result).toMatchObject({ outcome: 'succeeded', seen: { limit: 3 } });
  });
});

describe('failure: naming a failed run', () => {
  const phaseOf = (error: unknown, reason: string) => (error instanceof StoreError ? 'store' : reason);

  it('replaces the reason of a failed work and adds its fields to the result and the summary line', async () => {
    const failure = vi.fn((error: unknown, run: { reason: string; heartbeats: number }) => ({
      reason: phaseOf(error, run.reason),
      summary: { counts: { written: 2 } },
    }));
    const handler = scheduledSingleton(
      async () => {
        throw new StoreError('table gone');
      },
      { failure },
    );
    const run = await testJob(handler, { now: clock }).invoke(scheduledTick(at));
    expect(run).toMatchObject({
      threw: true,
      result: { outcome: 'failed', reason: 'store', counts: { written: 2 }, error: 'StoreError: table gone' },
    });
    expect(run.summary).toMatchObject({ summary: true, message: 'failed', reason: 'store', counts: { written: 2 } });
    expect(failure).toHaveBeenCalledWith(expect.any(StoreError), { reason: 'work', heartbeats: 0 });
  });

  it('is called for every failed outcome with an error: work, event, config, precheck, lease, lease-lost', async () => {
    const calls: string[] = [];
    const failure = (_error: unknown, run: { reason: string }) => {
      calls.push(run.reason);
      return { reason: `named-${run.reason}` };
    };
    const run = async (
      options: ScheduledSingletonOptions<void, undefined, unknown>,
      { payload = {}, work = async () => undefined, coordination = new MemoryCoordination() }: RunParts = {},
    ) => await testJob(scheduledSingleton(work, { failure, ...options }), { now: clock, coordination }).invoke(consoleRun(payload));
    const fail = () => {
      throw new Error('fails');
    };
    expect((await run({}, { work: async () => fail() })).result.reason).toBe('named-work');
    expect((await run({}, { payload: { unknown: 1 } })).result.reason).toBe('named-event');
    expect((await run({ configure: fail })).result.reason).toBe('named-config');
    expect((await run({ precheck: async () => fail() })).result.reason).toBe('named-precheck');
    expect((await run({}, { coordination: new UnusableCoordination() })).result.reason).toBe('named-lease');
    const coordination = new MemoryCoordination();
    const work = async ({ commit }: JobContext<undefined, unknown>) => {
      coordination.lease.takeOver();
      await commit([{ Put: { TableName: 'reports', Item: { pk: 'x' } } }]);
    };
    const lost = await run({}, { work, coordination });
    expect(lost.result.reason).toBe('named-lease-lost');
    expect(calls).toEqual(['work', 'event', 'config', 'precheck', 'lease', 'lease-lost']);
    // The LeaseLost metric counts the wrapper's own reason, whatever the run is named.
    expect(lost.metrics).toMatchObject({ RunFailed: 1, LeaseLost: 1 });
  });

  it('is told the renewals confirmed before the failure; summary is told them on success', async () => {
    vi.useFakeTimers({ now: at });
    const failure = vi.fn(() => ({}));
    const summary = vi.fn((_value: string, run: { heartbeats: number }) => ({ heartbeats: run.heartbeats }));
    let fail = true;
    const handler = scheduledSingleton(
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 25_000)); // renewals every 10 s
        if (fail) throw new Error('late failure');
        return 'done';
      },
      { failure, summary },
    );
    const job = testJob(handler);
    const failed = job.invoke(consoleRun());
    await vi.advanceTimersByTimeAsync(25_000);
    await failed;
    expect(failure).toHaveBeenCalledWith(expect.any(Error), { reason: 'work', heartbeats: 2 });
    fail = false;
    const succeeded = job.invoke(consoleRun());
    await vi.advanceTimersByTimeAsync(25_000);
    expect((await succeeded).result).toMatchObject({ outcome: 'succeeded', heartbeats: 2 });
    expect(summary).toHaveBeenCalledWith('done', { heartbeats: 2 });
  });
});

describe('resultDefaults: one shape for every result', () => {
  it('every outcome carries the defaults, under the wrapper’s fields, the work’s and the failure’s', async () => {
    let mode: 'ok' | 'fail' = 'ok';
    const handler = scheduledSingleton(
      async () => {
        if (mode === 'fail') throw new StoreError('down');
        return { written: 3 };
      },
      {
        resultDefaults: () => ({ counts: { written: 0, unchanged: 0 }, outcome: 'overridden?', phase: 'none' }),
        summary: (value) => ({ counts: { written: value.written, unchanged: 1 } }),
        failure: () => ({ summary: { phase: 'store' } }),
      },
    );
    const job = testJob(handler, { now: clock });
    const ok = (await job.invoke(scheduledTick(at))).result;
    expect(ok).toMatchObject({ outcome: 'succeeded', counts: { written: 3, unchanged: 1 }, phase: 'none' });
    const skipped = (await job.invoke(scheduledTick(at))).result;
    expect(skipped).toMatchObject({ outcome: 'skipped', reason: 'already-done', counts: { written: 0, unchanged: 0 }, phase: 'none' });
    mode = 'fail';
    const failed = (await job.invoke(consoleRun())).result;
    expect(failed).toMatchObject({ outcome: 'failed', reason: 'work', counts: { written: 0, unchanged: 0 }, phase: 'store' });
    const badEvent = (await job.invoke(consoleRun({ nope: true }))).result;
    expect(badEvent).toMatchObject({ outcome: 'failed', reason: 'event', counts: { written: 0, unchanged: 0 } });
    // The line's order: the wrapper's fields first, the defaults after.
    expect(Object.keys(ok).slice(0, 4)).toEqual(['runId', 'source', 'interval', 'outcome']);
  });

  it('an idle precheck’s result carries them too', async () => {
    const handler = scheduledSingleton(async () => undefined, {
      resultDefaults: () => ({ due: 0, sent: 0 }),
      precheck: async () => ({ idle: true, summary: { due: 0 } }),
    });
    expect((await testJob(handler, { now: clock }).invoke(scheduledTick(at))).result).toMatchObject({ idle: true, due: 0, sent: 0 });
  });
});

describe('summaryLine and failedError: the job’s own words', () => {
  it('summaryLine writes the one summary line instead of the default; the EMF line still goes out', async () => {
    const handler = scheduledSingleton(async () => ({ written: 1 }), {
      summary: (value) => value,
      summaryLine: (result, log) =>
        log.info(result.outcome === 'succeeded' ? 'ran' : result.outcome, { summary: true, counts: result.written }),
    });
    const run = await testJob(handler, { now: clock }).invoke(scheduledTick(at));
    expect(run.lines.filter((line) => line.summary === true)).toEqual([expect.objectContaining({ message: 'ran', counts: 1, fence: 1 })]);
    expect(run.metrics).toMatchObject({ RunSucceeded: 1 });
  });

  it('failedError is what a failed scheduled run and a bad event throw; a failed console run still returns', async () => {
    const handler = scheduledSingleton(
      async () => {
        throw new StoreError('down');
      },
      { failedError: (result) => new ReportFailedError(result) },
    );
    const tested = handler.with({ coordination: new MemoryCoordination(), now: clock, write: () => undefined, env: testEnv() });
    const thrown = await tested(scheduledTick(at).event, scheduledTick(at).context).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(ReportFailedError);
    expect(thrown).toMatchObject({ name: 'ReportFailedError', summary: { outcome: 'failed', reason: 'work' } });
    expect((thrown as Error).message).toMatch(/^report .+ failed in phase work$/);
    await expect(tested('not an event', consoleRun().context)).rejects.toBeInstanceOf(ReportFailedError);
    await expect(tested({}, consoleRun().context)).resolves.toMatchObject({ outcome: 'failed', reason: 'work' });
  });

  it('the default stays ScheduledRunFailedError; testJob reads the result from either', async () => {
    const fails = scheduledSingleton(async () => {
      throw new Error('x');
    });
    const run = await testJob(fails, { now: clock }).invoke(scheduledTick(at));
    expect(run).toMatchObject({ threw: true, result: { outcome: 'failed', reason: 'work' } });
    const own = await testJob(fails.with({ failedError: (result) => new ReportFailedError(result) }), { now: clock }).invoke(
      scheduledTick(at),
    );
    expect(own).toMatchObject({ threw: true, result: { outcome: 'failed', reason: 'work' } });
  });

  it('a hook that throws is logged and left out: the run is still reported', async () => {
    const handler = scheduledSingleton(async () => 'ok', {
      summary: () => {
        throw new Error('summary bug');
      },
      summaryLine: () => {
        throw new Error('line bug');
      },
    });
    const run = await testJob(handler, { now: clock }).invoke(scheduledTick(at));
    expect(run.result).toMatchObject({ outcome: 'succeeded' });
    expect(run.summary).toMatchObject({ message: 'succeeded', summary: true });
    expect(run.lines.filter((line) => line.level === 'WARN').map((line) => line.message)).toEqual([
      'the summary option threw; its part is left out',
      'the summaryLine option threw; its part is left out',
    ]);
  });
});

describe('fence on every line once the lease is held', () => {
  it('the work’s lines and the summary carry the fence; the precheck’s (before the lease) do not', async () => {
    const handler = scheduledSingleton(
      async ({ log }) => {
        log.info('working');
      },
      {
        precheck: async ({ log }) => {
          log.info('looking');
          return { idle: false, value: undefined };
        },
      },
    );
    const job = testJob(handler, { now: clock });
    await job.invoke(scheduledTick(at));
    const run = await job.invoke(consoleRun());
    const byMessage = Object.fromEntries(run.lines.filter((line) => typeof line.message === 'string').map((line) => [line.message, line]));
    expect(byMessage.looking).not.toHaveProperty('fence');
    expect(byMessage.working).toMatchObject({ fence: 2 });
    expect(byMessage.succeeded).toMatchObject({ fence: 2, summary: true });
  });
});

interface RunParts {
  payload?: Record<string, unknown>;
  work?: (job: JobContext<undefined, unknown>) => Promise<void>;
  coordination?: MemoryCoordination;
}

/** A coordination store whose lease cannot be acquired (DynamoDB unusable: a missing table, no permission). */
class UnusableCoordination extends MemoryCoordination {
  override open(config: CoordinationConfig): CoordinationPorts {
    const ports = super.open(config);
    ports.lease.acquire = () => Promise.reject(new LeaseUnavailableError('could not acquire the lease: no such table'));
    return ports;
  }
}

/** The variables ScheduledSingletonJob sets, for a handler invoked without testJob. */
function testEnv(): Record<string, string> {
  return {
    COORDINATION_TABLE_NAME: 'coordination',
    LEASE_DURATION_SECONDS: '30',
    SCHEDULE_RATE_MINUTES: '5',
    LEASE_KEY: 'lease#job',
    RUN_RECORD_PREFIX: 'run#job#',
    POWERTOOLS_METRICS_NAMESPACE: 'Jobs',
    POWERTOOLS_SERVICE_NAME: 'job',
  };
}
