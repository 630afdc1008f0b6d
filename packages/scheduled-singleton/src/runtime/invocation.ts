/**
 * What started a run: an EventBridge Scheduled Event, or `{}` from the deploy-time trigger or the
 * console (which may add `dryRun`, `interval`, `force`, and the job's own options). Anything else is
 * refused with an error that names what is wrong, before the lease is touched.
 */
import { EventValidationError } from './errors.js';
import type { InvocationSource } from './run-result.js';

export interface Invocation {
  /**
   * `schedule`: an EventBridge tick. `console` and `deploy` both send `{}`: the event says
   * `console`, and a deploy-time trigger is told apart by the version it invoked.
   */
  source: InvocationSource;
  /** The scheduled interval this run stands for (deduplicated unless `force`), if any. */
  interval?: string;
  dryRun: boolean;
  /** Run `interval` again even if it already succeeded (console only). */
  force: boolean;
  /** The job's own console options (only the names it declared). */
  options: Record<string, unknown>;
}

/** How far in the future a Scheduled Event's `time` may be (clock skew); EventBridge never sends one later. */
export const MAX_SCHEDULE_SKEW_MS = 5 * 60_000;

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
const TIME_HINT = 'must be an ISO-8601 date-time such as 2026-11-29T14:00:00Z';
const SCHEDULED_KEYS = new Set(['version', 'id', 'detail-type', 'source', 'account', 'time', 'region', 'resources', 'detail']);
const CONSOLE_KEYS = ['dryRun', 'interval', 'force'];

/** The scheduled interval a time falls in: the start of its period, as `YYYY-MM-DDTHH:MM:00Z`. */
export function intervalOf(time: string | number, periodMinutes: number): string {
  const at = typeof time === 'number' ? time : Date.parse(time);
  if (!Number.isFinite(at)) throw new EventValidationError(`not a time: ${String(time)}`);
  const period = periodMinutes * 60_000;
  return new Date(Math.floor(at / period) * period).toISOString().replace('.000Z', 'Z');
}

/**
 * Checks one console option's value (present in the event): a problem text, reported as the
 * wrapper's own are (`invalid console event: <name>: <problem>`), or undefined when it is fine.
 */
export type ConsoleOptionCheck = (value: unknown) => string | undefined;

/** A job's console options: their names (any JSON value passes), or a check per name. */
export type ConsoleOptions = readonly string[] | Readonly<Record<string, ConsoleOptionCheck>>;

/** The check of an option that must be a boolean: `must be true or false`. */
export const booleanOption: ConsoleOptionCheck = (value) => (typeof value === 'boolean' ? undefined : 'must be true or false');

/** The names of a job's console options, and the check of each (none for a bare name). */
function consoleOptionChecks(options: ConsoleOptions | undefined): [string, ConsoleOptionCheck | undefined][] {
  if (options === undefined) return [];
  if (isNameList(options)) return options.map((name) => [name, undefined]);
  return Object.entries(options);
}

function isNameList(options: ConsoleOptions): options is readonly string[] {
  return Array.isArray(options);
}

export interface ParseOptions {
  /** The schedule's period: intervals are its multiples. */
  periodMinutes: number;
  /** The time now (epoch ms): a future tick or interval is refused. */
  nowMs: number;
  /**
   * The job's own console options, passed through in `options`: their names, or a check per name.
   * @default none: a console event with any other field is refused
   */
  consoleOptions?: ConsoleOptions;
  /**
   * Lambda's `invokedFunctionArn`: a published version means the deploy-time trigger.
   * @default none: `{}` is a console run
   */
  invokedFunctionArn?: string;
}

export function parseInvocation(event: unknown, options: ParseOptions): Invocation {
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    const got = event === null ? 'null' : Array.isArray(event) ? 'an array' : `a ${typeof event}`;
    throw new EventValidationError(
      `invalid event: expected a JSON object ({}, {"dryRun": true}) or an EventBridge Scheduled Event, got ${got}`,
    );
  }
  const fields = event as Record<string, unknown>;
  const scheduled = 'source' in fields || 'detail-type' in fields || 'time' in fields;
  return scheduled ? parseScheduled(fields, options) : parseConsole(fields, options);
}

function parseScheduled(event: Record<string, unknown>, options: ParseOptions): Invocation {
  const problems = unknownKeys(event, SCHEDULED_KEYS);
  if (event['detail-type'] !== 'Scheduled Event') problems.push('detail-type: must be "Scheduled Event"');
  if (event.source !== 'aws.events') problems.push('source: must be "aws.events"');
  if (!isTime(event.time)) problems.push(`time: ${TIME_HINT}`);
  if (problems.length > 0) throw new EventValidationError(`invalid Scheduled Event: ${problems.join('; ')}`);
  const time = event.time as string;
  // Marking a future interval done would silently suppress that tick when it comes.
  const aheadMs = Date.parse(time) - options.nowMs;
  if (aheadMs > MAX_SCHEDULE_SKEW_MS) {
    throw new EventValidationError(
      `invalid Scheduled Event: time: ${time} is ${Math.round(aheadMs / 60_000)} minutes in the future ` +
        `(at most ${MAX_SCHEDULE_SKEW_MS / 60_000} allowed); EventBridge never sends a future tick`,
    );
  }
  return { source: 'schedule', interval: intervalOf(time, options.periodMinutes), dryRun: false, force: false, options: {} };
}

function parseConsole(event: Record<string, unknown>, options: ParseOptions): Invocation {
  const checks = consoleOptionChecks(options.consoleOptions);
  const own = checks.map(([name]) => name);
  const problems = unknownKeys(event, new Set([...CONSOLE_KEYS, ...own]));
  for (const flag of ['dryRun', 'force']) {
    const problem = event[flag] === undefined ? undefined : booleanOption(event[flag]);
    if (problem !== undefined) problems.push(`${flag}: ${problem}`);
  }
  for (const [name, check] of checks) {
    const problem = event[name] === undefined || check === undefined ? undefined : check(event[name]);
    if (problem !== undefined) problems.push(`${name}: ${problem}`);
  }
  if (event.interval !== undefined && !isTime(event.interval)) problems.push(`interval: ${TIME_HINT}`);
  if (event.force === true && event.interval === undefined)
    problems.push('force: "force" re-runs a scheduled interval, so it needs "interval"');
  if (problems.length > 0) throw new EventValidationError(`invalid console event: ${problems.join('; ')}`);
  const interval = event.interval === undefined ? undefined : intervalOf(event.interval as string, options.periodMinutes);
  if (interval !== undefined && Date.parse(interval) > options.nowMs) {
    throw new EventValidationError(
      `invalid console event: interval: ${String(event.interval)} has not started yet; name a past or the current interval`,
    );
  }
  return {
    source: invokedThroughVersion(options.invokedFunctionArn) ? 'deploy' : 'console',
    ...(interval !== undefined ? { interval } : {}),
    dryRun: event.dryRun === true,
    force: event.force === true,
    options: Object.fromEntries(own.filter((name) => event[name] !== undefined).map((name) => [name, event[name]])),
  };
}

function unknownKeys(event: Record<string, unknown>, allowed: ReadonlySet<string>): string[] {
  const unknown = Object.keys(event).filter((key) => !allowed.has(key));
  return unknown.length > 0 ? [`unknown field(s) ${unknown.map((key) => `"${key}"`).join(', ')}`] : [];
}

function isTime(value: unknown): value is string {
  return typeof value === 'string' && ISO_TIME.test(value) && Number.isFinite(Date.parse(value));
}

/**
 * The deploy-time `triggers.Trigger` invokes the function's published version (a qualified ARN
 * ending in `:<number>`); the console and EventBridge invoke `$LATEST` through the unqualified ARN.
 */
export function invokedThroughVersion(invokedFunctionArn: string | undefined): boolean {
  return invokedFunctionArn !== undefined && /:function:[^:]+:\d+$/.test(invokedFunctionArn);
}
