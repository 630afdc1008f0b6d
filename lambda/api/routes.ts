/**
 * The HTTP API's routes on Powertools' router (docs/api.md): each validates what it is given with
 * the zod schemas of ./schemas.ts, acts through the ports of ./ports.ts and answers JSON (or a
 * calendar). The user is the JWT's `sub`, put there by API Gateway's authorizer; a route under
 * `/me/` never takes a user id from the request.
 */
import { Router } from '@aws-lambda-powertools/event-handler/http';
import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { API_LIMITS } from './contract.js';
import { ApiError } from './errors.js';
import type { ContestReader, Feeds, ReminderWritePath, RouterEnv } from './ports.js';
import { contestsQuerySchema, parseQualifiedId, reminderBodySchema, reminderPathSchema, remindersQuerySchema } from './schemas.js';
import { contestView, feedUrls, reminderView } from './views.js';
import { installErrorHandlers, type ApiLog } from './answers.js';
import { feedRoutes } from './feed-routes.js';
import { openApiDocument } from './openapi.js';
import { isUserId, USER_ID_RULE } from '../reminders/user-id.js';
import { NO_GATE, type MigrationGate } from '../migration/gate.js';

export interface ApiDeps {
  contests: ContestReader;
  reminders: ReminderWritePath;
  feeds: Feeds;
  /** Epoch milliseconds. */
  now: () => number;
  log: ApiLog;
  /**
   * The upgrade's gate on the reminder writes (docs/runbook.md, "Upgrading to qualified keys"): while
   * the copy is not done, a set or cancel answers 503 `migrating`. @default NO_GATE (always open)
   */
  migration?: MigrationGate;
}

type Env = RouterEnv;
type Ctx = Parameters<Parameters<Router<Env>['use']>[0]>[0]['reqCtx'];

/**
 * The user: the verified token's `sub`, a user id as the whole product defines it
 * (lambda/reminders/user-id.ts). A request that reached a user's route without one is refused
 * before anything is read or written.
 */
export function userOf(event: unknown): string {
  const sub = (event as Partial<APIGatewayProxyEventV2WithJWTAuthorizer>).requestContext?.authorizer?.jwt?.claims?.sub;
  if (typeof sub !== 'string' || sub === '') throw new ApiError('unauthorized', 'a bearer token with a subject (sub) is required');
  if (!isUserId(sub)) throw new ApiError('unauthorized', `the token's sub must be ${USER_ID_RULE}`);
  return sub;
}

/** The body's size in bytes as the function received it (API Gateway may base64-encode it). */
export function bodyBytes(event: { body?: string; isBase64Encoded?: boolean }): number {
  if (event.body === undefined) return 0;
  return event.isBase64Encoded === true ? Buffer.from(event.body, 'base64').length : Buffer.byteLength(event.body, 'utf8');
}

const withUser = async ({ reqCtx, next }: { reqCtx: Ctx; next: () => Promise<unknown> }) => {
  reqCtx.set('userId', userOf(reqCtx.event));
  await next();
};

/** A JSON body, bounded, refused before it is parsed. */
const jsonBody = async ({ reqCtx, next }: { reqCtx: Ctx; next: () => Promise<unknown> }) => {
  const size = bodyBytes(reqCtx.event as { body?: string; isBase64Encoded?: boolean });
  if (size > API_LIMITS.maxBodyBytes) {
    throw new ApiError('body-too-large', `the body is ${size} bytes; at most ${API_LIMITS.maxBodyBytes} are accepted`);
  }
  const type = reqCtx.req.headers.get('content-type') ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) throw new ApiError('unsupported-media-type', 'the body must be application/json');
  await next();
};

/** Reminder writes wait for the upgrade's copy: one marker read per container until it is done, none after (lambda/migration/gate.ts). */
const writesOpenAfter =
  (gate: MigrationGate) =>
  async ({ next }: { next: () => Promise<unknown> }) => {
    if (!(await gate.done())) throw new ApiError('migrating', 'reminders are being copied to their new table; try again shortly');
    await next();
  };

function reminderRoutes(app: Router<Env>, deps: ApiDeps): void {
  const writesOpen = writesOpenAfter(deps.migration ?? NO_GATE);
  app.get(
    '/me/reminders',
    [withUser],
    async (reqCtx) => {
      const { limit, cursor } = reqCtx.valid.req.query;
      const page = await deps.reminders.listReminders({
        userId: reqCtx.get('userId')!,
        limit,
        ...(cursor === undefined ? {} : { cursor }),
      });
      return { reminders: page.reminders.map((r) => reminderView(r)), ...(page.cursor === undefined ? {} : { cursor: page.cursor }) };
    },
    { validation: { req: { query: remindersQuerySchema } } },
  );

  app.put(
    '/me/reminders/:contestId',
    [withUser, jsonBody, writesOpen],
    async (reqCtx) => {
      const userId = reqCtx.get('userId')!;
      const { contestId } = parseQualifiedId(reqCtx.valid.req.path.contestId)!;
      const result = await deps.reminders.setReminder({ contestId, userId, minutesBefore: reqCtx.valid.req.body.minutesBefore });
      // Also when nothing changed: the retry of a request whose write landed but whose rebuild was
      // lost (a timeout, a crash between the two) is what brings the user's feed up to date.
      await deps.feeds.rebuild(userId);
      return { reminder: reminderView(result.reminder), changed: result.changed };
    },
    { validation: { req: { path: reminderPathSchema, body: reminderBodySchema } } },
  );

  app.delete(
    '/me/reminders/:contestId',
    [withUser, writesOpen],
    async (reqCtx) => {
      const userId = reqCtx.get('userId')!;
      const { contestId } = parseQualifiedId(reqCtx.valid.req.path.contestId)!;
      const { cancelled } = await deps.reminders.cancelReminder({ contestId, userId });
      await deps.feeds.rebuild(userId);
      if (!cancelled) throw new ApiError('reminder-not-found', `no reminder on ${contestId}`);
      return new Response(null, { status: 204 });
    },
    { validation: { req: { path: reminderPathSchema } } },
  );
}

function contestRoutes(app: Router<Env>, deps: ApiDeps): void {
  app.get(
    '/contests',
    [withUser],
    async (reqCtx) => {
      const query = reqCtx.valid.req.query;
      const now = Math.floor(deps.now() / 1000);
      const page = await deps.contests.page({
        ...(query.platform === undefined ? {} : { platform: query.platform }),
        status: query.status,
        limit: query.limit,
        now,
        ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
      });
      return {
        contests: page.contests.map((c) => contestView(c)),
        ...(page.cursor === undefined ? {} : { cursor: page.cursor }),
      };
    },
    { validation: { req: { query: contestsQuerySchema } } },
  );
}

/** The request's own origin (API Gateway sets x-forwarded-proto), for the URLs it hands out. */
export function originOf(reqCtx: { req: Request }): { scheme: 'https' | 'http'; host: string } {
  const url = new URL(reqCtx.req.url);
  const scheme = reqCtx.req.headers.get('x-forwarded-proto') === 'http' ? 'http' : 'https';
  return { scheme, host: url.host };
}

function calendarTokenRoutes(app: Router<Env>, deps: ApiDeps): void {
  const iso = (ms: number) => new Date(ms).toISOString();
  app.get('/me/calendar', [withUser], async (reqCtx) => {
    const status = await deps.feeds.status(reqCtx.get('userId')!);
    return status === undefined ? { active: false } : { active: true, createdAt: iso(status.createdAt) };
  });
  app.post('/me/calendar', [withUser], async (reqCtx) => {
    const { token, createdAt } = await deps.feeds.issue(reqCtx.get('userId')!);
    return new Response(JSON.stringify({ ...feedUrls(originOf(reqCtx), token), createdAt: iso(createdAt) }), {
      status: 201,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
    });
  });
  app.delete('/me/calendar', [withUser], async (reqCtx) => {
    if (!(await deps.feeds.revoke(reqCtx.get('userId')!))) throw new ApiError('feed-not-found', 'no calendar feed to revoke');
    return new Response(null, { status: 204 });
  });
}

export function createApi(deps: ApiDeps): Router<Env> {
  const app = new Router<Env>();
  // Answers are per user (or per request): no cache keeps them unless a route says otherwise.
  app.use(async ({ reqCtx, next }) => {
    await next();
    if (!reqCtx.res.headers.has('cache-control')) reqCtx.res.headers.set('cache-control', 'no-store');
  });
  contestRoutes(app, deps);
  reminderRoutes(app, deps);
  calendarTokenRoutes(app, deps);
  feedRoutes(app, deps.feeds);
  const description = JSON.stringify(openApiDocument());
  app.get('/openapi.json', () => new Response(description, { headers: { 'content-type': 'application/json' } }));
  installErrorHandlers(app, deps.log);
  return app;
}
