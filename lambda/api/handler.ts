/**
 * The HTTP API function's entry (docs/api.md): the router of ./routes.ts with the real ports —
 * the contests from the Contests table, the reminder write path, the feeds — built once per
 * container from the environment the stack sets.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { createFeeds } from '../calendar/feeds.js';
import { CALENDAR_ENV } from '../calendar/contract.js';
import { doorClients } from '../calendar/clients.js';
import { createApiHandler, type ApiHandler } from './app.js';
import { environmentGate } from '../migration/store.js';
import { dynamoContestReader } from './contests.js';

function fromEnvironment(env: NodeJS.ProcessEnv): ApiHandler {
  const logger = new Logger({ serviceName: 'contest-sync-api' });
  const clients = doorClients(env);
  return createApiHandler({
    contests: dynamoContestReader(clients.doc, clients.env[CALENDAR_ENV.contestsTable]),
    reminders: clients.reminders,
    feeds: createFeeds(clients.calendar),
    now: Date.now,
    migration: environmentGate(env, clients.doc),
    log: { warn: (message, extra = {}) => logger.warn(message, extra), error: (message, extra = {}) => logger.error(message, extra) },
  });
}

let api: ApiHandler | undefined;
export const handler = (event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyStructuredResultV2> =>
  (api ??= fromEnvironment(process.env))(event, context);
