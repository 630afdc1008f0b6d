/** The Lambda entry of CodeChef's job: the shared sync (lambda/sync/handler.ts) on CodeChef's source only. */
import { createSyncHandler, type HandlerOptions } from '../../sync/handler.js';
import { codechefSource } from './index.js';
import { CODECHEF_JOB } from './job.js';

export const createHandler = (options: HandlerOptions = {}) => createSyncHandler({ job: CODECHEF_JOB, source: codechefSource }, options);

export const handler = createHandler();
