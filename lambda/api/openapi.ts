/**
 * The OpenAPI 3.1 description of the HTTP API (`GET /openapi.json`), generated from the route
 * table (./contract.ts) and the zod schemas that validate the requests (./schemas.ts), so the
 * description cannot say what the checks do not. docs/api.md, "OpenAPI".
 */
import * as z from 'zod';
import { API_ROUTES, PUBLIC_FEEDS, type PublicFeed } from './contract.js';
import { ERROR_STATUS, type ApiErrorCode } from './errors.js';
import * as S from './schemas.js';

type Success = { status: number; schema: z.ZodType } | { status: number; calendar: true } | { status: number; empty: true };

export interface RouteDoc {
  query?: z.ZodObject;
  path?: z.ZodObject;
  body?: z.ZodType;
  success: Success;
  /** Every code the route may answer with, the gateway's 401 apart. */
  errors: readonly ApiErrorCode[];
}

const COMMON: readonly ApiErrorCode[] = ['internal', 'unavailable'];
const AUTHED: readonly ApiErrorCode[] = ['unauthorized', ...COMMON];

/** What each route takes and answers; a test checks that it covers API_ROUTES exactly and that every code is reachable. */
type RouteKeyOf<R> = R extends { method: infer M extends string; path: infer P extends string } ? `${M} ${P}` : never;
export type RouteKey = RouteKeyOf<(typeof API_ROUTES)[number]>;

/** Every public feed's route takes and answers the same. */
const PUBLIC_FEED_DOC: RouteDoc = { success: { status: 200, calendar: true }, errors: ['feed-not-found', ...COMMON] };

export const ROUTE_DOCS: Record<RouteKey, RouteDoc> = {
  'GET /contests': {
    query: S.contestsQuerySchema,
    success: { status: 200, schema: S.contestsPageSchema },
    errors: ['invalid-input', ...AUTHED],
  },
  'GET /me/reminders': {
    query: S.remindersQuerySchema,
    success: { status: 200, schema: S.remindersPageSchema },
    errors: ['invalid-input', ...AUTHED],
  },
  'PUT /me/reminders/{contestId}': {
    path: S.reminderPathSchema,
    body: S.reminderBodySchema,
    success: { status: 200, schema: S.reminderSetSchema },
    errors: [
      'invalid-input',
      'malformed-body',
      'body-too-large',
      'unsupported-media-type',
      'contest-not-found',
      'contest-started',
      'conflict',
      'migrating',
      ...AUTHED,
    ],
  },
  'DELETE /me/reminders/{contestId}': {
    path: S.reminderPathSchema,
    success: { status: 204, empty: true },
    errors: ['invalid-input', 'reminder-not-found', 'migrating', ...AUTHED],
  },
  'GET /me/calendar': { success: { status: 200, schema: S.calendarStatusSchema }, errors: AUTHED },
  'POST /me/calendar': { success: { status: 201, schema: S.calendarIssuedSchema }, errors: AUTHED },
  'DELETE /me/calendar': { success: { status: 204, empty: true }, errors: ['feed-not-found', ...AUTHED] },
  ...(Object.fromEntries(PUBLIC_FEEDS.map((feed) => [`GET /calendar/${feed}.ics`, PUBLIC_FEED_DOC])) as Record<
    `GET /calendar/${PublicFeed}.ics`,
    RouteDoc
  >),
  'GET /calendar/u/{file}': {
    path: z.object({ file: z.string().meta({ description: 'The secret token and `.ics`' }) }),
    success: { status: 200, calendar: true },
    errors: ['feed-not-found', ...COMMON],
  },
  'GET /openapi.json': { success: { status: 200, schema: z.object({ openapi: z.string() }).loose() }, errors: [] },
};

/** Named schemas (zod `.meta({ id })`), shared by every route: `components.schemas`. */
const components: Record<string, unknown> = {};

/** A zod schema as OpenAPI 3.1 JSON Schema: its named parts lifted into `components.schemas`. */
function json(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const generated = JSON.parse(
    JSON.stringify(z.toJSONSchema(schema, { io, unrepresentable: 'any' })).replaceAll('"#/$defs/', '"#/components/schemas/'),
  ) as Record<string, unknown>;
  const { $schema: _dialect, $defs, ...rest } = generated as { $schema?: string; $defs?: Record<string, unknown> };
  Object.assign(components, $defs);
  return rest;
}

function parameters(doc: RouteDoc): object[] {
  const of = (where: 'query' | 'path', object: z.ZodObject | undefined) =>
    Object.entries(object?.shape ?? {}).map(([name, schema]) => ({
      name,
      in: where,
      required: where === 'path' || !(schema as z.ZodType).safeParse(undefined).success,
      schema: json(schema as z.ZodType, 'input'),
    }));
  return [...of('path', doc.path), ...of('query', doc.query)];
}

function responses(doc: RouteDoc): Record<string, object> {
  const { success } = doc;
  const ok =
    'schema' in success
      ? { description: 'OK', content: { 'application/json': { schema: json(success.schema, 'output') } } }
      : 'calendar' in success
        ? { description: 'The calendar (RFC 5545); 304 when If-None-Match names the current ETag', content: { 'text/calendar': {} } }
        : { description: 'Done' };
  const byStatus = new Map<number, ApiErrorCode[]>();
  for (const code of doc.errors) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const errorSchema = json(S.errorSchema, 'output');
  const errors = Object.fromEntries(
    [...byStatus].map(([status, codes]) => [
      String(status),
      { description: `code: ${codes.join(', ')}`, content: { 'application/json': { schema: errorSchema } } },
    ]),
  );
  return { [String(success.status)]: ok, ...errors };
}

export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of API_ROUTES) {
    const doc = ROUTE_DOCS[`${route.method} ${route.path}` as RouteKey];
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = {
      summary: route.summary,
      ...(route.auth === 'jwt' ? { security: [{ jwt: [] }] } : { security: [] }),
      parameters: parameters(doc),
      ...(doc.body === undefined
        ? {}
        : { requestBody: { required: true, content: { 'application/json': { schema: json(doc.body, 'input') } } } }),
      responses: responses(doc),
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'contest-sync', version: '1', description: 'Contests, reminders and calendar feeds (docs/api.md)' },
    components: { schemas: components, securitySchemes: { jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    paths,
  };
}
