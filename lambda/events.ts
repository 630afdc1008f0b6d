/**
 * The three kinds of invocation (docs/design.md, "Invocations"): an EventBridge Scheduled Event, and `{}` from the
 * deploy-time trigger or the console (which may add options). Anything else is refused with an
 * error naming what is wrong, before any Codeforces call.
 */
import * as z from 'zod';
import { bound } from './single-execution/index.js';

export interface Invocation {
  /**
   * `schedule`: an EventBridge tick. `console` and `deploy` both send `{}`: the event says
   * `console`, and the handler tells a deploy-time trigger apart by the version it invoked.
   */
  source: 'schedule' | 'console' | 'deploy';
  /** The scheduled interval this run stands for (deduplicated), if any. */
  interval?: string;
  dryRun: boolean;
  /** Re-run `interval` even if it already succeeded (console only). */
  force: boolean;
  /** Act on every held change now, as if consecutive replies had confirmed it (console only). */
  acceptHeld?: boolean;
}

export class EventValidationError extends Error {
  override readonly name = 'EventValidationError';
  constructor(message: string) {
    // Bounded: it may quote the event (an unknown key, a bad time), and it becomes the result.
    super(bound(message));
  }
}

const scheduledEvent = z
  .object({
    version: z.string().optional(),
    id: z.string().optional(),
    'detail-type': z.literal('Scheduled Event'),
    source: z.literal('aws.events'),
    account: z.string().optional(),
    time: z.iso.datetime({ offset: true, error: 'must be an ISO-8601 date-time such as 2026-11-29T14:00:00Z' }),
    region: z.string().optional(),
    resources: z.array(z.string()).optional(),
    detail: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

const intervalText = z.iso.datetime({ offset: true, error: 'must be an ISO-8601 date-time such as 2026-11-29T14:00:00Z' });

const manualEvent = z
  .object({
    dryRun: z.boolean({ error: 'must be true or false' }).optional(),
    interval: intervalText.optional(),
    force: z.boolean({ error: 'must be true or false' }).optional(),
    acceptHeld: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .strict()
  .refine((event) => !event.force || event.interval !== undefined, {
    message: '"force" re-runs a scheduled interval, so it needs "interval"',
    path: ['force'],
  });

/** The scheduled interval a time falls in: the start of its period, as `YYYY-MM-DDTHH:MM:00Z`. */
export function intervalOf(time: string | number, periodMinutes = 60): string {
  const at = typeof time === 'number' ? time : Date.parse(time);
  if (!Number.isFinite(at)) throw new EventValidationError(`not a time: ${String(time)}`);
  const period = periodMinutes * 60_000;
  return new Date(Math.floor(at / period) * period).toISOString().replace('.000Z', 'Z');
}

/** How far in the future a Scheduled Event's `time` may be (clock skew); EventBridge never sends one later. */
export const MAX_SCHEDULE_SKEW_MS = 5 * 60_000;

export interface ParseOptions {
  /** The schedule's period: intervals are its multiples. Default 60. */
  periodMinutes?: number;
  /** The time now (epoch ms): a future tick or interval is refused. Default Date.now(). */
  nowMs?: number;
}

export function parseEvent(event: unknown, options: ParseOptions = {}): Invocation {
  const periodMinutes = options.periodMinutes ?? 60;
  const nowMs = options.nowMs ?? Date.now();
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    const got = event === null ? 'null' : Array.isArray(event) ? 'an array' : `a ${typeof event}`;
    throw new EventValidationError(
      `invalid event: expected a JSON object ({}, {"dryRun": true}) or an EventBridge Scheduled Event, got ${got}`,
    );
  }
  const looksScheduled = 'source' in event || 'detail-type' in event || 'time' in event;
  const result = looksScheduled ? scheduledEvent.safeParse(event) : manualEvent.safeParse(event);
  if (!result.success) {
    const kind = looksScheduled ? 'Scheduled Event' : 'console event';
    const problems = result.error.issues.map((issue) => {
      const path = issue.path.length > 0 ? issue.path.join('.') : 'event';
      if (issue.code === 'unrecognized_keys') return `unknown field(s) ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
      return `${path}: ${issue.message}`;
    });
    throw new EventValidationError(`invalid ${kind}: ${problems.join('; ')}`);
  }
  // Marking a future interval done would silently suppress that tick when it comes.
  if (looksScheduled) {
    const scheduled = result.data as z.infer<typeof scheduledEvent>;
    const aheadMs = Date.parse(scheduled.time) - nowMs;
    if (aheadMs > MAX_SCHEDULE_SKEW_MS) {
      throw new EventValidationError(
        `invalid Scheduled Event: time: ${scheduled.time} is ${Math.round(aheadMs / 60_000)} minutes in the future ` +
          `(at most ${MAX_SCHEDULE_SKEW_MS / 60_000} allowed); EventBridge never sends a future tick`,
      );
    }
    return { source: 'schedule', interval: intervalOf(scheduled.time, periodMinutes), dryRun: false, force: false };
  }
  const manual = result.data as z.infer<typeof manualEvent>;
  if (manual.interval !== undefined && Date.parse(intervalOf(manual.interval, periodMinutes)) > nowMs) {
    throw new EventValidationError(
      `invalid console event: interval: ${manual.interval} has not started yet; name a past or the current interval`,
    );
  }
  return {
    source: 'console',
    interval: manual.interval === undefined ? undefined : intervalOf(manual.interval, periodMinutes),
    dryRun: manual.dryRun ?? false,
    force: manual.force ?? false,
    ...(manual.acceptHeld === true ? { acceptHeld: true } : {}),
  };
}
