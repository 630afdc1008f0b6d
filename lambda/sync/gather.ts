/**
 * The gather step of a sync (docs/design.md, "One sync: gather, judge, act"): the source's reply
 * and what is stored — the contests, the reply clock, what an earlier run handed over. Reads only.
 */
import type { Evidence } from '../contests/judge.js';
import { isReplyClockId, type ContestItem, type ReplyClockItem, type SourceReply } from '../contests/model.js';
import type { Source } from '../sources/source.js';
import type { WorkContext } from '@contest-sync/scheduled-singleton';

/** What gathering needs of the run. */
export type GatherJob = Pick<WorkContext, 'signal' | 'deadline' | 'handoff' | 'lastSucceededMs'>;

/** What gathering reads from. */
export interface GatherDeps {
  store: {
    /** The items of the Contests table of one platform: its contests and its reply clock (sync/store.ts). */
    scanContests(platform: string, signal?: AbortSignal): Promise<(ContestItem | ReplyClockItem)[]>;
  };
  /** The platform this sync keeps (lambda/sources/<platform>/): its reply, and its platform name. */
  source: Source;
  now: () => number;
}

export async function gather(job: GatherJob, deps: GatherDeps): Promise<Evidence> {
  const reply = await fetchReply(job, deps);
  job.signal.throwIfAborted();
  const { contests, clock } = splitClock(await deps.store.scanContests(deps.source.platform, job.signal));
  return {
    reply,
    stored: contests,
    clock,
    handedOver: [...job.handoff],
    ...(job.lastSucceededMs !== undefined ? { lastSucceededMs: job.lastSucceededMs } : {}),
    nowMs: deps.now(),
  };
}

/** The reply, leaving part of the remaining time for reading and writing DynamoDB. */
function fetchReply(job: GatherJob, deps: GatherDeps): Promise<SourceReply> {
  const storeReserveMs = Math.min(10_000, Math.max(0, (job.deadline - deps.now()) / 3));
  return deps.source.fetchReply({ signal: job.signal, deadline: job.deadline - storeReserveMs });
}

/** The Contests table's items: the contests, and the reply clock (the sync's own item). */
export function splitClock(items: readonly (ContestItem | ReplyClockItem)[]): Pick<Evidence, 'clock'> & { contests: ContestItem[] } {
  const contests: ContestItem[] = [];
  const clock: Evidence['clock'] = { withdrawn: {} };
  for (const item of items) {
    if (!isReplyClockId(item.contestId)) {
      contests.push(item as ContestItem);
      continue;
    }
    const read = item as ReplyClockItem;
    if (typeof read.replyMadeAt === 'number' && Number.isFinite(read.replyMadeAt)) clock.replyMadeAt = read.replyMadeAt;
    if (read.withdrawn !== null && typeof read.withdrawn === 'object') clock.withdrawn = read.withdrawn;
    if (isShardCount(read.dueShards)) clock.dueShards = read.dueShards;
    if (isShardCount(read.retiredDueShards)) clock.retiredDueShards = read.retiredDueShards;
  }
  return { contests, clock };
}

const isShardCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
