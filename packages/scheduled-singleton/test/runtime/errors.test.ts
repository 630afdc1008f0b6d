/**
 * The package's errors: one file (src/runtime/errors.ts), one base class an adopter can catch
 * (ScheduledSingletonError), each class exported from the entry points that throw it, under its
 * own name (what logs and Lambda's `errorType` show).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as runtime from '@contest-sync/scheduled-singleton';
import * as cdk from '@contest-sync/scheduled-singleton/cdk';
import * as relay from '@contest-sync/scheduled-singleton/relay';
import * as testing from '@contest-sync/scheduled-singleton/testing';

const src = fileURLToPath(new URL('../../src/', import.meta.url));
const entryPoints = { runtime, cdk, relay, testing } as Record<string, Record<string, unknown>>;

/** The error classes an entry point exports, by name. */
function errorClasses(entry: Record<string, unknown>): [string, new (...args: never[]) => Error][] {
  return Object.entries(entry).filter(
    (pair): pair is [string, new (...args: never[]) => Error] => typeof pair[1] === 'function' && pair[1].prototype instanceof Error,
  );
}

describe('the package errors', () => {
  it('are all defined in src/runtime/errors.ts', () => {
    const files = (readdirSync(src, { recursive: true }) as string[]).filter((file) => file.endsWith('.ts'));
    const defined = files.flatMap((file) =>
      [...readFileSync(join(src, file), 'utf8').matchAll(/^export class (\w+) extends (\w+)/gm)]
        .filter((match) => match[1]!.endsWith('Error'))
        .map((match) => `${file}: ${match[1]}`),
    );
    expect(defined.length).toBeGreaterThanOrEqual(16);
    expect(defined.filter((entry) => !entry.startsWith('runtime/errors.ts: '))).toEqual([]);
  });

  it('extend ScheduledSingletonError, one class exported by every entry point, each named as exported', () => {
    const base = runtime.ScheduledSingletonError;
    for (const [entry, exports] of Object.entries(entryPoints)) {
      expect(exports.ScheduledSingletonError, entry).toBe(base);
      for (const [name, ErrorClass] of errorClasses(exports)) {
        const error = new (ErrorClass as unknown as new (message: string) => Error)('x');
        expect(error, `${entry}: ${name}`).toBeInstanceOf(base);
        if (name !== 'ScheduledSingletonError') expect(error.name, `${entry}: ${name}`).toBe(name);
      }
    }
    const names = Object.values(entryPoints).flatMap((exports) => errorClasses(exports).map(([name]) => name));
    expect(new Set(names)).toEqual(
      new Set([
        'ScheduledSingletonError',
        'ContentionError',
        'EventValidationError',
        'FencedWriteError',
        'JobConfigError',
        'LeaseConfigError',
        'LeaseLostError',
        'LeaseUnavailableError',
        'OutboxEventError',
        'RunDeadlineError',
        'ScheduledRunFailedError',
        'UnfencedWriteError',
        'ConsoleTestEventsError',
        'OutboxDeliveryError',
        'ScheduledSingletonJobError',
        'OutboxRecordError',
        'RelayConfigError',
      ]),
    );
  });

  it('a failed run, a refused event and a lost lease are caught as one class', async () => {
    const handler = runtime.scheduledSingleton(async () => undefined);
    const job = testing.testJob(handler);
    const thrown = await job.handler('not an event', testing.lambdaContext()).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(runtime.ScheduledSingletonError);
    expect(thrown).toBeInstanceOf(runtime.ScheduledRunFailedError);
    expect(new runtime.LeaseLostError('lost', 'run', 1)).toBeInstanceOf(runtime.ScheduledSingletonError);
    const dry = await runtime.runUnfenced({ runId: 'r', remainingMs: () => 60_000 }, (ctx) => ctx.commit([]), {
      timing: runtime.leaseTiming(10),
      now: Date.now,
    });
    expect((dry as { error: unknown }).error).toBeInstanceOf(runtime.UnfencedWriteError);
  });
});
