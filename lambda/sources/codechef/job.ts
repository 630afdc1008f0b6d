/** CodeChef's job (lambda/sources/job.ts): its settings, and the variable naming its origin. */
import type { SourceJob } from '../job.js';
import { CODECHEF_SETTINGS } from './settings.js';

export const CODECHEF_JOB = {
  platform: 'codechef',
  label: 'CodeChef',
  settings: CODECHEF_SETTINGS,
  baseUrlVariable: 'CODECHEF_BASE_URL',
} as const satisfies SourceJob;
