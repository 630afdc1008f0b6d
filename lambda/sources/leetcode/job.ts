/** LeetCode's job (lambda/sources/job.ts): its settings, and the variable naming its origin. */
import type { SourceJob } from '../job.js';
import { LEETCODE_SETTINGS } from './settings.js';

export const LEETCODE_JOB = {
  platform: 'leetcode',
  label: 'LeetCode',
  settings: LEETCODE_SETTINGS,
  baseUrlVariable: 'LEETCODE_BASE_URL',
} as const satisfies SourceJob;
