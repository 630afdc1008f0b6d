/** The Lambda entry of AtCoder's job: the shared sync (lambda/sync/handler.ts) on AtCoder's source only. */
import { createSyncHandler, type HandlerOptions } from '../../sync/handler.js';
import { atcoderSource } from './index.js';
import { ATCODER_JOB } from './job.js';

export const createHandler = (options: HandlerOptions = {}) => createSyncHandler({ job: ATCODER_JOB, source: atcoderSource }, options);

export const handler = createHandler();
