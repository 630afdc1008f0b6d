/**
 * The feed builder's entry (docs/api.md, "Calendar"): the FIFO feed queue's consumer of
 * ./builder.ts with the real stores, built once per container from the environment.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { doorClients } from './clients.js';
import { createBuilder } from './builder.js';

let builder: ((event: SQSEvent) => Promise<SQSBatchResponse>) | undefined;

export const handler = (event: SQSEvent): Promise<SQSBatchResponse> => {
  if (builder === undefined) {
    const logger = new Logger({ serviceName: 'contest-sync-calendar' });
    builder = createBuilder(doorClients(process.env).calendar, {
      info: (message, extra = {}) => logger.info(message, extra),
      warn: (message, extra = {}) => logger.warn(message, extra),
      error: (message, extra = {}) => logger.error(message, extra),
    });
  }
  return builder(event);
};
