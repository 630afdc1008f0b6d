/**
 * Codeforces' job (lambda/sources/job.ts). It ran alone before there were several sources: it keeps
 * its lease key, run records, service, event source and construct id, so that an upgrade neither
 * runs a second Codeforces sync beside the old one nor replaces its alarms.
 */
import { ENV, EVENT_SOURCES, LEASE_PK, RUN_PK_PREFIX, SERVICE_NAME } from '../../contract.js';
import type { SourceJob } from '../job.js';
import { CODEFORCES_SETTINGS } from './settings.js';

export const CODEFORCES_JOB = {
  platform: 'codeforces',
  label: 'Codeforces',
  settings: CODEFORCES_SETTINGS,
  baseUrlVariable: ENV.codeforcesApiUrl,
  names: {
    constructId: 'Sync',
    leaseKey: LEASE_PK,
    runRecordPrefix: RUN_PK_PREFIX,
    service: SERVICE_NAME,
    eventSource: EVENT_SOURCES.contests,
  },
} as const satisfies SourceJob;
