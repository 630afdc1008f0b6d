/**
 * One contest sync (docs/design.md, "One sync: gather, judge, act"): the work the sync job runs
 * under the lease. Gather the reply and what is stored (sync/gather.ts), judge it (pure:
 * contests/judge.ts), act on the judgement in a written-down order (sync/act.ts). When the
 * source fails there is no evidence: the run pauses what may fire soon (when in doubt, delay),
 * then fails. Everything it touches comes in as a parameter (clock, store, source, the lease's
 * work context), so tests drive it with real or fake parts.
 */
import { CodeforcesError } from '../sources/codeforces/errors.js';
import { judge, judgeStale, type Evidence, type Judgement } from '../contests/judge.js';
import type { PlanSettings } from '../contests/plan.js';
import type { SourceReply } from '../contests/model.js';
import { act, emptyActed, type Acted, type ActDeps } from './act.js';
import { gather, splitClock, type GatherDeps } from './gather.js';
import type { WorkContext } from '@contest-sync/scheduled-singleton';

/** The contest store a sync reads and writes through (store/dynamo-store.ts, or a test's fake). */
export type StorePort = GatherDeps['store'] & ActDeps['store'];

/**
 * What a sync runs on: the source (its platform and its reply: one job per platform is one more
 * instance), the store, the clock and the model's settings.
 */
export interface SyncDeps extends GatherDeps, ActDeps {
  store: StorePort;
  source: GatherDeps['source'];
  settings: PlanSettings;
  /** The sync has an outbox: it publishes contest events and records what it published. */
  publishing: boolean;
}

/** What a sync needs of its run: the lease's work context, and the console's options. */
export interface SyncJob extends WorkContext {
  /** A dry run reads and judges and writes nothing (its commit refuses). */
  dryRun: boolean;
  acceptHeld: boolean;
}

/** What a sync did: the evidence, the judgement, and the act. */
export interface Synced {
  evidence: Evidence;
  judgement: Judgement;
  acted: Acted;
}

export async function syncContests(job: SyncJob, deps: SyncDeps): Promise<Synced> {
  const progress: Partial<Synced> = { acted: emptyActed() };
  try {
    progress.evidence = await gather(job, deps).catch((error: unknown) => doubtAfterFailure(job, deps, error, progress.acted!));
    progress.judgement = judge(progress.evidence, { settings: deps.settings, acceptHeld: job.acceptHeld, publishing: deps.publishing });
    await act(job, deps, progress.judgement, progress.acted!);
    return progress as Synced;
  } catch (error) {
    if (typeof error === 'object' && error !== null) partial.set(error, progress);
    throw error;
  }
}

/** What a failed sync had done (its counts), by its error. */
const partial = new WeakMap<object, Partial<Synced>>();
export function progressOf(error: unknown): Partial<Synced> {
  return typeof error === 'object' && error !== null ? (partial.get(error) ?? {}) : {};
}

/**
 * The source failed: no current evidence. When in doubt, delay: the contests whose reminders may
 * fire are paused like a stale reply's (best effort, without marking the interval done); the run
 * still fails with the source's error, so that its interval is retried.
 */
async function doubtAfterFailure(job: SyncJob, deps: SyncDeps, error: unknown, acted: Acted): Promise<never> {
  if (!(error instanceof CodeforcesError) || job.dryRun || job.signal.aborted) throw error;
  try {
    const { contests, clock } = splitClock(await deps.store.scanContests(deps.source.platform, job.signal));
    const evidence: Evidence = { reply: NO_REPLY, stored: contests, clock, handedOver: [...job.handoff], nowMs: deps.now() };
    await act(job, deps, judgeStale(evidence, undefined, deps.settings), acted, false);
  } catch {
    // Best effort: the run fails for the source whatever happens here, and the next one tries again.
  }
  throw error;
}

const NO_REPLY: SourceReply = { contests: [], listedIds: new Set(), dating: {}, invalid: 0, attempts: 0, latencyMs: 0 };
