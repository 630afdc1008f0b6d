/** AtCoder's job (lambda/sources/job.ts): its settings, and the variable naming its origin. */
import type { SourceJob } from '../job.js';
import { ATCODER_SETTINGS } from './settings.js';

export const ATCODER_JOB = {
  platform: 'atcoder',
  label: 'AtCoder',
  settings: ATCODER_SETTINGS,
  baseUrlVariable: 'ATCODER_BASE_URL',
} as const satisfies SourceJob;
