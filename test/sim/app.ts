/**
 * The simulated app's reminder writes (docs/simulation.md, "The app"): every set and cancel of
 * every user goes through one function, `write`, and that function is the product's write path as
 * an app reaches it: a request to the HTTP API's handler (lambda/api/app.ts, `createApiHandler`,
 * in this process) with the claims API Gateway's JWT authorizer puts there for the user —
 * `PUT /me/reminders/codeforces:<id>` `{"minutesBefore": n}` or `DELETE` of it — which calls the
 * reminder write path (lambda/reminders/, docs/tables.md "The reminder write path") on the
 * simulation's tables and clock. The answer is read back as the app would: `changed`, the
 * reminder's state (`scheduled`: due), or the error's code.
 */
import { randomBytes } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, Context } from 'aws-lambda';
import { createApiHandler } from '../../lambda/api/app.js';
import { dynamoContestReader } from '../../lambda/api/contests.js';
import type { Feeds } from '../../lambda/api/ports.js';
import { createReminderClient } from '../../lambda/reminders/index.js';

export type AppRequest =
  { kind: 'set'; contestId: number; userId: string; minutesBefore: number } | { kind: 'cancel'; contestId: number; userId: string };

export type AppOutcome =
  /** `changed`: a new intent (a new reminder, a changed lead, a set after a cancel); `due`: written with `dueAt`. */
  | { kind: 'set'; changed: boolean; due: boolean }
  | { kind: 'cancel'; cancelled: boolean }
  | { kind: 'refused'; reason: 'not-found' | 'started' | 'conflict' };

export interface WritePathDeps {
  doc: DynamoDBDocumentClient;
  contests: string;
  reminders: string;
  /** The app's clock (epoch ms). */
  now: () => number;
  dueShards: number;
  /** A new intent id (CONTRACT: 128 random bits, base64url). */
  newIntent?: () => string;
  /** Called when the contest or the row changed between the write path's read and its write (it reads again and retries). */
  onConflict?: () => void;
  /** The qualified id of a contest the simulation numbers (`atcoder:abc400`). @default `codeforces:<number>` */
  qualify?: (contestId: number) => string;
}

export function newIntentId(): string {
  return randomBytes(16).toString('base64url');
}

/** The simulation shows no calendar: its feeds port answers nothing and rebuilds nothing. */
const NO_FEEDS: Feeds = {
  read: () => Promise.resolve({ status: 'missing' }),
  issue: () => Promise.reject(new Error('the simulation has no calendar feeds')),
  revoke: () => Promise.resolve(false),
  status: () => Promise.resolve(undefined),
  rebuild: () => Promise.resolve(),
};

const CONTEXT = { awsRequestId: 'sim', functionName: 'ContestSync-Api-sim', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

/** The request API Gateway sends the function once its JWT authorizer verified the user's token. */
export function apiRequest(
  request: AppRequest,
  qualify: (contestId: number) => string = (contestId) => `codeforces:${contestId}`,
): APIGatewayProxyEventV2WithJWTAuthorizer {
  const method = request.kind === 'set' ? 'PUT' : 'DELETE';
  const path = `/me/reminders/${qualify(request.contestId)}`;
  return {
    version: '2.0',
    routeKey: `${method} /me/reminders/{contestId}`,
    rawPath: path,
    rawQueryString: '',
    headers: { host: 'api.sim', 'x-forwarded-proto': 'https', ...(request.kind === 'set' ? { 'content-type': 'application/json' } : {}) },
    pathParameters: { contestId: qualify(request.contestId) },
    requestContext: {
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'sim' },
      domainName: 'api.sim',
      stage: '$default',
      routeKey: `${method} /me/reminders/{contestId}`,
      authorizer: { jwt: { claims: { sub: request.userId }, scopes: [] } },
    },
    ...(request.kind === 'set' ? { body: JSON.stringify({ minutesBefore: request.minutesBefore }) } : {}),
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEventV2WithJWTAuthorizer;
}

const REFUSALS: Record<string, 'not-found' | 'started' | 'conflict'> = {
  'contest-not-found': 'not-found',
  'contest-started': 'started',
  conflict: 'conflict',
};

/** The API's answer as the app reads it. */
export function outcomeOf(request: AppRequest, status: number, body: string | undefined): AppOutcome {
  const json = body === undefined || body === '' ? {} : (JSON.parse(body) as Record<string, any>);
  if (request.kind === 'set' && status === 200)
    return { kind: 'set', changed: json.changed === true, due: json.reminder?.state === 'scheduled' };
  if (request.kind === 'cancel' && (status === 204 || json.error?.code === 'reminder-not-found'))
    return { kind: 'cancel', cancelled: status === 204 };
  const reason = REFUSALS[String(json.error?.code)];
  if (reason === undefined) throw new Error(`the API answered ${status} ${body ?? ''} to ${JSON.stringify(request)}`);
  return { kind: 'refused', reason };
}

/** The product's write path through the HTTP API's handler: one function, `write`, for every set and cancel. */
export function apiWritePath(deps: WritePathDeps): (request: AppRequest) => Promise<AppOutcome> {
  const reminders = createReminderClient({
    dynamo: deps.doc,
    tables: { contests: deps.contests, reminders: deps.reminders },
    now: deps.now,
    dueShards: deps.dueShards,
    ...(deps.newIntent === undefined ? {} : { newIntent: deps.newIntent }),
    // A refused condition is read again at once (the simulated clock does not wait); each retry is counted.
    sleep: () => {
      deps.onConflict?.();
      return Promise.resolve();
    },
  });
  const api = createApiHandler({
    contests: dynamoContestReader(deps.doc, deps.contests),
    reminders,
    feeds: NO_FEEDS,
    now: deps.now,
    log: { warn: () => undefined, error: () => undefined },
  });
  return async (request) => {
    const answer = await api(apiRequest(request, deps.qualify), CONTEXT);
    return outcomeOf(request, answer.statusCode ?? 200, answer.body);
  };
}

/** Lead times users choose (minutes). */
export const LEAD_MINUTES = [5, 10, 15, 30, 60, 120, 180, 1440] as const;

/** A contest the app shows: its id and start as the app read them. */
export interface Shown {
  contestId: number;
  startTimeSeconds: number;
}

/**
 * Users who set, change, cancel and set again their reminders at any moment (docs/simulation.md,
 * "The app"): each action picks a contest the app shows (near its start more often than not) and a
 * user, and does what that user would do next — set a reminder if they have none, otherwise change
 * its lead, cancel it, set the same lead again (which changes nothing), or cancel and set it again
 * at once (a new intent for the same lead, also after it was sent).
 */
export class FickleUsers {
  /** What each user asked last (`contestId/userId` → minutes), as the app's own answers said. */
  private readonly asked = new Map<string, number>();
  readonly actions: Record<string, number> = {};

  constructor(
    private readonly random: () => number,
    private readonly write: (request: AppRequest) => Promise<AppOutcome>,
    private readonly users: readonly string[] = ['fickle-0', 'fickle-1', 'fickle-2'],
  ) {}

  private count(what: string): void {
    this.actions[what] = (this.actions[what] ?? 0) + 1;
  }

  /** One action on one of `shown` (those starting after `nowSeconds`), if any. */
  async act(shown: readonly Shown[], nowSeconds: number): Promise<void> {
    const ahead = shown.filter((s) => s.startTimeSeconds > nowSeconds);
    if (ahead.length === 0) return;
    const near = ahead.filter((s) => s.startTimeSeconds - nowSeconds <= 6 * 3600);
    const pool = near.length > 0 && this.random() < 0.6 ? near : ahead;
    const target = pool[Math.floor(this.random() * pool.length)]!;
    await this.actOn(target, nowSeconds);
  }

  /** One action on `target`. */
  async actOn(target: Shown, nowSeconds: number): Promise<void> {
    const userId = this.users[Math.floor(this.random() * this.users.length)]!;
    const key = `${target.contestId}/${userId}`;
    const current = this.asked.get(key);
    const draw = this.random();
    if (current === undefined) {
      await this.set(target, userId, this.lead(target, nowSeconds), 'set');
    } else if (draw < 0.35) {
      let lead = this.lead(target, nowSeconds);
      if (lead === current) lead = current === 60 ? 10 : 60;
      await this.set(target, userId, lead, 'change');
    } else if (draw < 0.65) {
      await this.cancel(target, userId, 'cancel');
    } else if (draw < 0.8) {
      await this.set(target, userId, current, 'set-same');
    } else {
      await this.cancel(target, userId, 'cancel-and-set');
      await this.set(target, userId, current, 'set-again');
    }
  }

  /** A lead: one users choose (it may have passed: due at once), or, within 3 hours of the start, one due within minutes. */
  private lead(target: Shown, nowSeconds: number): number {
    const minutesAhead = Math.floor((target.startTimeSeconds - nowSeconds) / 60);
    if (minutesAhead > 2 && minutesAhead <= 180 && this.random() < 0.5)
      return Math.max(1, minutesAhead - 1 - Math.floor(this.random() * 20));
    return LEAD_MINUTES[Math.floor(this.random() * LEAD_MINUTES.length)]!;
  }

  private async set(target: Shown, userId: string, minutesBefore: number, what: string): Promise<void> {
    this.count(what);
    const outcome = await this.write({ kind: 'set', contestId: target.contestId, userId, minutesBefore });
    if (outcome.kind === 'set') this.asked.set(`${target.contestId}/${userId}`, minutesBefore);
    else if (outcome.kind === 'refused') this.count(`refused-${outcome.reason}`);
  }

  private async cancel(target: Shown, userId: string, what: string): Promise<void> {
    this.count(what);
    const outcome = await this.write({ kind: 'cancel', contestId: target.contestId, userId });
    if (outcome.kind === 'cancel') this.asked.delete(`${target.contestId}/${userId}`);
    else if (outcome.kind === 'refused') this.count(`refused-${outcome.reason}`);
  }
}
