/**
 * The sync's invocations (docs/design.md, "Invocations"): the package's parser, which refuses
 * anything but a Scheduled Event or a console payload with a message naming the problem, with the
 * sync's own console option `acceptHeld`.
 */
import { booleanOption, parseInvocation, type ConsoleOptions } from '@contest-sync/scheduled-singleton';

export { EventValidationError, intervalOf } from '@contest-sync/scheduled-singleton';

/** The sync's console options beside the package's (`dryRun`, `interval`, `force`). */
export const SYNC_CONSOLE_OPTIONS: ConsoleOptions = { acceptHeld: booleanOption };

export interface Invocation {
  source: 'schedule' | 'console' | 'deploy';
  interval?: string;
  dryRun: boolean;
  force: boolean;
  /** Act on every held change now, as if consecutive replies had confirmed it (console only). */
  acceptHeld?: boolean;
}

/** One event as the sync reads it (the handler parses through the wrapper with the same options). */
export function parseEvent(event: unknown, options: { periodMinutes?: number; nowMs?: number } = {}): Invocation {
  const parsed = parseInvocation(event, {
    periodMinutes: options.periodMinutes ?? 60,
    nowMs: options.nowMs ?? Date.now(),
    consoleOptions: SYNC_CONSOLE_OPTIONS,
  });
  const { options: own, interval, ...invocation } = parsed;
  return { ...invocation, ...(interval !== undefined ? { interval } : {}), ...(own.acceptHeld === true ? { acceptHeld: true } : {}) };
}
