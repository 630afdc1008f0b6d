/** The Lambda entry of Codeforces' job: the shared sync (lambda/sync/handler.ts) on Codeforces' source only. */
import { createSyncHandler, type HandlerOptions } from '../../sync/handler.js';
import { UPGRADE } from '../../sync/migrating.js';
import { codeforcesSource } from './index.js';
import { CODEFORCES_JOB } from './job.js';

export const createHandler = (options: HandlerOptions = {}) =>
  createSyncHandler({ job: CODEFORCES_JOB, source: codeforcesSource, upgrade: UPGRADE }, options);

export const handler = createHandler();
