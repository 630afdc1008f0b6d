/**
 * Where a failed invocation failed, decided in one place by the type of the error (a store read
 * error is a `store` failure wherever it happens). The summary line, the result, the run record
 * and the runbook (docs/runbook.md) use these names.
 */
import { CodeforcesError } from '../sources/codeforces/errors.js';
import { ConfigError } from './config.js';
import { EventValidationError } from './invocation.js';
import { FencedWriteError, LeaseLostError, LeaseUnavailableError, RunDeadlineError } from '@contest-sync/scheduled-singleton';
import { StoreError } from './store.js';

export type FailurePhase = 'event' | 'config' | 'lease' | 'codeforces' | 'store' | 'lease-lost' | 'internal';

export function failurePhase(error: unknown): FailurePhase {
  if (error instanceof EventValidationError) return 'event';
  if (error instanceof ConfigError) return 'config';
  if (error instanceof LeaseLostError) return 'lease-lost';
  if (error instanceof LeaseUnavailableError) return 'lease';
  if (error instanceof CodeforcesError) return 'codeforces';
  // The deadline between two steps: what was left to do was reading and writing the tables.
  if (error instanceof StoreError || error instanceof FencedWriteError || error instanceof RunDeadlineError) return 'store';
  return 'internal';
}
