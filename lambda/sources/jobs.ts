/**
 * Every source's job (docs/sources.md, "One job per source"): the stack deploys one scheduled
 * singleton job per entry, the local run syncs each, the calendar listens to each one's events.
 * A fifth platform is its folder and one more line here. No runtime imports but the jobs' settings:
 * the CDK app loads it.
 */
import { ATCODER_JOB } from './atcoder/job.js';
import { CODECHEF_JOB } from './codechef/job.js';
import { CODEFORCES_JOB } from './codeforces/job.js';
import { jobNames, type SourceJob } from './job.js';
import { LEETCODE_JOB } from './leetcode/job.js';

export const SOURCE_JOBS: readonly SourceJob[] = [CODEFORCES_JOB, ATCODER_JOB, CODECHEF_JOB, LEETCODE_JOB];

/** The EventBridge sources of every source's contest events. */
export const CONTEST_EVENT_SOURCES: readonly string[] = SOURCE_JOBS.map((job) => jobNames(job).eventSource);
