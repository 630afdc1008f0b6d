/**
 * Deploy-time settings of the stack, read from CDK context (cdk.json or `cdk synth -c key=value`)
 * and validated at synth time so that a bad value fails `cdk synth` with a message naming the key,
 * instead of producing a stack whose lease, timeout and alarms disagree with each other.
 */
import type { Node } from 'constructs';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DEFAULTS, MAX_DUE_SHARDS } from '../lambda/contract.js';
import { leaseTiming, minimumFunctionTimeoutMs } from '@contest-sync/scheduled-singleton/cdk';
import { JOB_LIMITS, rateMinutes } from '@contest-sync/scheduled-singleton/cdk';

/** Context keys deployers may set (all optional; defaults below). */
export const CONTEXT_KEYS = {
  scheduleExpression: 'contestSync:scheduleExpression',
  scheduleRateMinutes: 'contestSync:scheduleRateMinutes',
  leaseDurationSeconds: 'contestSync:leaseDurationSeconds',
  functionTimeoutSeconds: 'contestSync:functionTimeoutSeconds',
  logRetentionDays: 'contestSync:logRetentionDays',
  finishedRetentionDays: 'contestSync:finishedRetentionDays',
  codeforcesApiUrl: 'contestSync:codeforcesApiUrl',
  alarmEmail: 'contestSync:alarmEmail',
  missingSyncsBeforeDelete: 'contestSync:missingSyncsBeforeDelete',
  acceptHeldAfterReplies: 'contestSync:acceptHeldAfterReplies',
  dueShards: 'contestSync:dueShards',
  schedulePaused: 'contestSync:schedulePaused',
  logLevel: 'contestSync:logLevel',
  stage: 'contestSync:stage',
  jwtIssuer: 'contestSync:jwtIssuer',
  jwtAudience: 'contestSync:jwtAudience',
  corsOrigins: 'contestSync:corsOrigins',
  apiThrottleRate: 'contestSync:apiThrottleRate',
  apiThrottleBurst: 'contestSync:apiThrottleBurst',
  webhookUrl: 'contestSync:webhookUrl',
  webhookRatePerSecond: 'contestSync:webhookRatePerSecond',
} as const;

/** Levels the function's logs can be set to (Powertools and Lambda's log-level filter agree on these). */
export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface ContestSyncConfig {
  /** EventBridge schedule expression, e.g. `cron(0 * * * ? *)`. */
  readonly scheduleExpression: string;
  /** Minutes between two scheduled runs; the function's SCHEDULE_RATE_MINUTES and the alarm period. */
  readonly scheduleRateMinutes: number;
  readonly leaseDurationSeconds: number;
  readonly functionTimeoutSeconds: number;
  readonly logRetentionDays: RetentionDays;
  readonly finishedRetentionDays: number;
  readonly codeforcesApiUrl: string;
  /** Empty: no e-mail subscription on the alarm topic. */
  readonly alarmEmail: string;
  /** Consecutive successful syncs a contest must be missing from before it is deleted with its reminders. */
  readonly missingSyncsBeforeDelete: number;
  /** Consecutive replies that must repeat a held change (implausible, or a mass change) before it is acted on. */
  readonly acceptHeldAfterReplies: number;
  /**
   * Partitions of the Reminders `byDue` index (1 to MAX_DUE_SHARDS): one reminder delivery job
   * each, and `dueShard = bucket mod dueShards` (the row's bucket of its user: lambda/reminders/table.ts)
   * for every row the sync and the write path make due (env DUE_SHARDS, the same for all of them).
   * Each job reads only its own partition; lowering the setting is safe for rows already due: the
   * sync moves the rows left in retired partitions into their current one (docs/delivery.md).
   */
  readonly dueShards: number;
  /**
   * A deliberate pause: the schedule rule stays but is disabled, and the "no successful sync"
   * alarm keeps its state but sends no notification (its actions are disabled).
   */
  readonly schedulePaused: boolean;
  /** The function's log level: DEBUG adds the lease acquired/renewed and commit lines. */
  readonly logLevel: LogLevel;
  /**
   * Deployment stage: "" is the stack `ContestSync` (tag and SSM path `default`); `dev` is the
   * stack `ContestSync-dev`, so stages deploy side by side in one account.
   */
  readonly stage: string;
  /** The OIDC issuer of the API's JWT authorizer; "" creates a Cognito user pool as the issuer (docs/api.md). */
  readonly jwtIssuer: string;
  /** The audiences (`aud` or `client_id`) the authorizer accepts; required with an issuer. */
  readonly jwtAudience: readonly string[];
  /** Browser origins the API answers CORS for; empty: none. */
  readonly corsOrigins: readonly string[];
  /** The API stage's steady request rate (per second) and burst. */
  readonly apiThrottleRate: number;
  readonly apiThrottleBurst: number;
  /** The app's HTTPS endpoint that receives the events as signed webhooks; "": no webhooks. */
  readonly webhookUrl: string;
  /** Most webhook requests a second sent to it. */
  readonly webhookRatePerSecond: number;
}

export const DEFAULT_CONFIG: ContestSyncConfig = {
  scheduleExpression: 'cron(0 * * * ? *)',
  scheduleRateMinutes: DEFAULTS.scheduleRateMinutes,
  leaseDurationSeconds: DEFAULTS.leaseDurationSeconds,
  functionTimeoutSeconds: 120,
  logRetentionDays: RetentionDays.ONE_MONTH,
  finishedRetentionDays: DEFAULTS.finishedRetentionDays,
  codeforcesApiUrl: DEFAULTS.codeforcesApiUrl,
  alarmEmail: '',
  missingSyncsBeforeDelete: DEFAULTS.missingSyncsBeforeDelete,
  acceptHeldAfterReplies: DEFAULTS.acceptHeldAfterReplies,
  dueShards: DEFAULTS.dueShards,
  schedulePaused: false,
  logLevel: 'INFO',
  stage: '',
  jwtIssuer: '',
  jwtAudience: [],
  corsOrigins: [],
  apiThrottleRate: 50,
  apiThrottleBurst: 100,
  webhookUrl: '',
  webhookRatePerSecond: 10,
};

/** Lowercase letters, digits and dashes (a stack name suffix and an SSM path segment); not `default`. */
const STAGE_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,18}[a-z0-9])?$/;

/** The function timeout must leave this many lease durations of room (heartbeat every lease/3). */
export const MIN_TIMEOUT_TO_LEASE_RATIO = JOB_LIMITS.minTimeoutToLeaseRatio;
/**
 * A crashed run's lease must lapse before Lambda's first async retry (about a minute later), or
 * the retry is skipped as lease-held and the interval may never be synced.
 */
export const MAX_LEASE_DURATION_SECONDS = JOB_LIMITS.maxLeaseSeconds;
/**
 * Upper bound of the function timeout: the deploy-time trigger waits for the function plus a
 * margin, inside a provider function that itself stops at 15 minutes.
 */
export const MAX_FUNCTION_TIMEOUT_SECONDS = JOB_LIMITS.maxTimeoutSeconds;
/** Extra time the deploy-time trigger waits beyond the function timeout. */
export const TRIGGER_TIMEOUT_MARGIN_SECONDS = JOB_LIMITS.triggerTimeoutMarginSeconds;

export class ContestSyncConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContestSyncConfigError';
  }
}

const VALID_RETENTION_DAYS = new Set<number>(
  Object.values(RetentionDays).filter((v): v is number => typeof v === 'number' && v !== RetentionDays.INFINITE),
);

function fail(key: string, value: unknown, why: string): never {
  throw new ContestSyncConfigError(`Invalid context ${key}=${JSON.stringify(value)}: ${why}`);
}

function integer(key: string, value: unknown, min: number, max: number): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n)) fail(key, value, 'expected an integer');
  if (n < min || n > max) fail(key, value, `expected an integer from ${min} to ${max}`);
  return n;
}

/** true/false, also as the strings `-c key=true` passes. */
function flag(key: string, value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  fail(key, value, 'expected true or false');
}

function text(key: string, value: unknown): string {
  if (typeof value !== 'string') fail(key, value, 'expected a string');
  return value.trim();
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** An https URL (plain http only on this machine: local runs), or "" when `optional`. */
function httpsUrl(key: string, value: unknown, optional: boolean): string {
  const raw = text(key, value);
  if (raw === '' && optional) return '';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    fail(key, value, 'expected an https URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) fail(key, value, 'expected an https URL');
  return raw;
}

/** A list: a JSON array in cdk.json, or a comma-separated string from `-c key=a,b`. */
function list(key: string, value: unknown): string[] {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : fail(key, value, 'expected a list');
  return items.map((item) => text(key, item)).filter((item) => item !== '');
}

/** The door's settings (docs/api.md): the API's issuer, origins and throttling, the webhook endpoint. */
function doorConfig(pick: (name: keyof ContestSyncConfig) => unknown) {
  const K = CONTEXT_KEYS;
  const jwtIssuer = httpsUrl(K.jwtIssuer, pick('jwtIssuer'), true);
  const jwtAudience = list(K.jwtAudience, pick('jwtAudience'));
  if (jwtIssuer !== '' && jwtAudience.length === 0)
    fail(K.jwtAudience, pick('jwtAudience'), `name the audience (aud or client_id) of the tokens ${K.jwtIssuer} issues`);
  const corsOrigins = list(K.corsOrigins, pick('corsOrigins'));
  for (const origin of corsOrigins) {
    if (httpsUrl(K.corsOrigins, origin, false) !== new URL(origin).origin)
      fail(K.corsOrigins, origin, 'expected an origin such as "https://app.example.com" (no path)');
  }
  const apiThrottleRate = integer(K.apiThrottleRate, pick('apiThrottleRate'), 1, 10_000);
  const apiThrottleBurst = integer(K.apiThrottleBurst, pick('apiThrottleBurst'), 1, 5_000);
  const webhookUrl = httpsUrl(K.webhookUrl, pick('webhookUrl'), true);
  const webhookRatePerSecond = integer(K.webhookRatePerSecond, pick('webhookRatePerSecond'), 1, 100);
  return { jwtIssuer, jwtAudience, corsOrigins, apiThrottleRate, apiThrottleBurst, webhookUrl, webhookRatePerSecond };
}

/** Parses and cross-checks raw context values (missing keys take their defaults). */
export function parseConfig(raw: Partial<Record<keyof ContestSyncConfig, unknown>>): ContestSyncConfig {
  const K = CONTEXT_KEYS;
  const pick = <T extends keyof ContestSyncConfig>(name: T): unknown => raw[name] ?? DEFAULT_CONFIG[name];

  const scheduleExpression = text(K.scheduleExpression, pick('scheduleExpression'));
  if (!/^(cron|rate)\(.+\)$/.test(scheduleExpression)) {
    fail(K.scheduleExpression, scheduleExpression, 'expected an EventBridge expression such as "cron(0 * * * ? *)" or "rate(1 hour)"');
  }
  const scheduleRateMinutes = integer(K.scheduleRateMinutes, pick('scheduleRateMinutes'), 1, 1440);
  const impliedRate = rateMinutes(scheduleExpression);
  if (impliedRate !== undefined && impliedRate !== scheduleRateMinutes) {
    fail(
      K.scheduleRateMinutes,
      scheduleRateMinutes,
      `${K.scheduleExpression} "${scheduleExpression}" runs every ${impliedRate} minutes; set ${K.scheduleRateMinutes} to ${impliedRate} so the interval and the "no successful sync" alarm agree`,
    );
  }

  const leaseDurationSeconds = integer(K.leaseDurationSeconds, pick('leaseDurationSeconds'), 2, 3600);
  if (leaseDurationSeconds > MAX_LEASE_DURATION_SECONDS) {
    fail(
      K.leaseDurationSeconds,
      leaseDurationSeconds,
      `must be at most ${MAX_LEASE_DURATION_SECONDS}s so that a crashed run's lease lapses before Lambda's first retry (about 1 minute later)`,
    );
  }
  const functionTimeoutSeconds = integer(K.functionTimeoutSeconds, pick('functionTimeoutSeconds'), 3, MAX_FUNCTION_TIMEOUT_SECONDS);
  if (functionTimeoutSeconds < MIN_TIMEOUT_TO_LEASE_RATIO * leaseDurationSeconds) {
    fail(
      K.functionTimeoutSeconds,
      functionTimeoutSeconds,
      `must be at least ${MIN_TIMEOUT_TO_LEASE_RATIO} x ${K.leaseDurationSeconds} (${leaseDurationSeconds}s), i.e. >= ${MIN_TIMEOUT_TO_LEASE_RATIO * leaseDurationSeconds}s: the lease is renewed every lease/3 and a run must be able to stop and release it before the function times out`,
    );
  }
  const minimumMs = minimumFunctionTimeoutMs(leaseTiming(leaseDurationSeconds));
  if (functionTimeoutSeconds * 1000 <= minimumMs) {
    fail(
      K.functionTimeoutSeconds,
      functionTimeoutSeconds,
      `must exceed ${Math.ceil(minimumMs / 1000)}s: a run keeps ${leaseTiming(leaseDurationSeconds).stopMarginMs} ms for the release (one DynamoDB call with every SDK retry) plus one renewal period`,
    );
  }

  const retentionRaw = pick('logRetentionDays');
  const logRetentionDays = integer(K.logRetentionDays, retentionRaw, 1, 3653);
  if (!VALID_RETENTION_DAYS.has(logRetentionDays)) {
    fail(K.logRetentionDays, retentionRaw, `CloudWatch Logs accepts only ${[...VALID_RETENTION_DAYS].sort((a, b) => a - b).join(', ')}`);
  }

  const finishedRetentionDays = integer(K.finishedRetentionDays, pick('finishedRetentionDays'), 0, 3650);
  // A contest missing from this many consecutive successful syncs is deleted with its reminders.
  const missingSyncsBeforeDelete = integer(K.missingSyncsBeforeDelete, pick('missingSyncsBeforeDelete'), 1, 48);
  // A held change repeated by this many consecutive replies is acted on (docs/design.md, "A reply is evidence").
  const acceptHeldAfterReplies = integer(K.acceptHeldAfterReplies, pick('acceptHeldAfterReplies'), 1, 48);
  // One delivery job per byDue partition (docs/delivery.md, "Scaling past one function").
  const dueShards = integer(K.dueShards, pick('dueShards'), 1, MAX_DUE_SHARDS);

  const codeforcesApiUrl = text(K.codeforcesApiUrl, pick('codeforcesApiUrl'));
  let url: URL;
  try {
    url = new URL(codeforcesApiUrl);
  } catch {
    fail(K.codeforcesApiUrl, codeforcesApiUrl, 'expected an absolute URL such as "https://codeforces.com/api"');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(K.codeforcesApiUrl, codeforcesApiUrl, 'expected an http(s) URL');

  const alarmEmail = text(K.alarmEmail, pick('alarmEmail'));
  if (alarmEmail !== '' && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(alarmEmail)) {
    fail(K.alarmEmail, alarmEmail, 'expected an e-mail address, or "" for no subscription');
  }

  const schedulePaused = flag(K.schedulePaused, pick('schedulePaused'));

  const logLevelRaw = text(K.logLevel, pick('logLevel')).toUpperCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevelRaw))
    fail(K.logLevel, pick('logLevel'), `expected one of ${LOG_LEVELS.join(', ')}`);
  const logLevel = logLevelRaw as LogLevel;

  const stage = text(K.stage, pick('stage'));
  if (stage !== '' && (!STAGE_PATTERN.test(stage) || stage === 'default')) {
    fail(K.stage, stage, 'expected "" or up to 20 lowercase letters, digits and inner dashes (not "default"), e.g. "dev"');
  }

  return {
    scheduleExpression,
    scheduleRateMinutes,
    leaseDurationSeconds,
    functionTimeoutSeconds,
    logRetentionDays: logRetentionDays,
    finishedRetentionDays,
    codeforcesApiUrl,
    alarmEmail,
    missingSyncsBeforeDelete,
    acceptHeldAfterReplies,
    dueShards,
    schedulePaused,
    logLevel,
    stage,
    ...doorConfig(pick),
  };
}

/** Reads the `contestSync:*` context visible at `node` and validates it. */
export function configFromContext(node: Node): ContestSyncConfig {
  const raw: Partial<Record<keyof ContestSyncConfig, unknown>> = {};
  for (const [name, key] of Object.entries(CONTEXT_KEYS) as [keyof ContestSyncConfig, string][]) {
    const value: unknown = node.tryGetContext(key);
    if (value !== undefined) raw[name] = value;
  }
  return parseConfig(raw);
}
