/**
 * A source's job: what the stack deploys for one platform and what its entry runs (docs/sources.md,
 * "One job per source"). Every source runs as its own scheduled singleton job — its own lease, run
 * records, schedule, failure queue, alarms, metrics service and event source — on the one shared
 * sync, which knows no platform. What differs is the source's settings object and these names.
 * No runtime imports but the names contract: the CDK app loads it.
 */
import { EVENT_SOURCES, LEASE_PK, SERVICE_NAME } from '../contract.js';
import type { SourceSettings } from './settings.js';

/** The names of one source's job: every one is distinct per platform, so that no job waits on another. */
export interface JobNames {
  /** The construct id in the stack (and so the prefix of its logical ids). */
  constructId: string;
  /** Its lease item in the Coordination table. */
  leaseKey: string;
  /** Prefix of its run records (the interval ledger) in the Coordination table. */
  runRecordPrefix: string;
  /** The `service` of its logs and metrics: its alarms read only its own runs. */
  service: string;
  /** The EventBridge `source` of its contest events (its outbox grant is scoped to it). */
  eventSource: string;
}

export interface SourceJob {
  /** The platform (lambda/sources/platforms.ts): the source folder `lambda/sources/<platform>/`, whose `handler.ts` is the entry. */
  platform: string;
  /** As people write it: `AtCoder`. */
  label: string;
  settings: SourceSettings;
  /** The environment variable naming the platform's origin (a stand-in's, offline and in tests); unset, the real one. */
  baseUrlVariable: string;
  /** @default jobNames(platform, label) */
  names?: JobNames;
}

/**
 * The names of a platform's job: `lease#contest-sync#<platform>`, `run#<platform>#`,
 * `contest-sync-<platform>`, `contest-sync.contests.<platform>`. A source whose job existed before
 * there were several keeps its names (`SourceJob.names`).
 */
export function jobNames(job: Pick<SourceJob, 'platform' | 'label' | 'names'>): JobNames {
  if (job.names !== undefined) return job.names;
  const { platform } = job;
  return {
    constructId: `Sync${job.label.replace(/[^A-Za-z0-9]/g, '')}`,
    leaseKey: `${LEASE_PK}#${platform}`,
    runRecordPrefix: `run#${platform}#`,
    service: `${SERVICE_NAME}-${platform}`,
    eventSource: `${EVENT_SOURCES.contests}.${platform}`,
  };
}

/** Minutes between two scheduled runs of the source's job (its settings' poll period, whole minutes). */
export function pollMinutes(job: Pick<SourceJob, 'settings'>): number {
  return Math.max(1, Math.round(job.settings.pollPeriodSeconds / 60));
}
