/** The Lambda entry of LeetCode's job: the shared sync (lambda/sync/handler.ts) on LeetCode's source only. */
import { createSyncHandler, type HandlerOptions } from '../../sync/handler.js';
import { leetcodeSource } from './index.js';
import { LEETCODE_JOB } from './job.js';

export const createHandler = (options: HandlerOptions = {}) => createSyncHandler({ job: LEETCODE_JOB, source: leetcodeSource }, options);

export const handler = createHandler();
