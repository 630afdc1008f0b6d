/**
 * The gather step of a sync (docs/design.md, "One sync: gather, judge, act"): the source's reply
 * and what is stored — the contests, the reply clock, what an earlier run handed over. Reads only.
 */
import type { Evidence } from '../contests/judge.js';
import { REPLY_CLOCK_ID, type ContestItem, type ReplyClockItem, type SourceReply } from '../contests/model.js';
import type { WorkContext } from '@contest-sync/scheduled-singleton';

/** What gathering needs of the run. */
export type GatherJob = Pick<WorkContext, 'signal' | 'deadline' | 'handoff' | 'lastSucceededMs'>;

/** What gathering reads from. */
export interface GatherDeps {
  store: {
    /** Every item of the Contests table: the contests and the reply clock (store/dynamo-store.ts). */
    scanContests(signal?: AbortSignal): Promise<(ContestItem | ReplyClockItem)[]>;
  };
  /** The source's reply (lambda/sources/codeforces/source.ts over the client). */
  fetchReply(options: { signal: AbortSignal; deadline: number }): Promise<SourceReply>;
  now: () => number;
}

export async function gather(job: GatherJob, deps: GatherDeps): Promise<Evidence> {
  const reply = await fetchReply(job, deps);
  job.signal.throwIfAborted();
  const { contests, clock } = splitClock(await deps.store.scanContests(job.signal));
  return {
    reply,
    stored: contests,
    clock,
    handedOver: [...job.handoff].map(Number),
    ...(job.lastSucceededMs !== undefined ? { lastSucceededMs: job.lastSucceededMs } : {}),
    nowMs: deps.now(),
  };
}

/** The reply, leaving part of the remaining time for reading and writing DynamoDB. */
function fetchReply(job: GatherJob, deps: GatherDeps): Promise<SourceReply> {
  const storeReserveMs = Math.min(10_000, Math.max(0, (job.deadline - deps.now()) / 3));
  return deps.fetchReply({ signal: job.signal, deadline: job.deadline - storeReserveMs });
}

/** The Contests table's items: the contests, and the reply clock (the sync's own item). */
export function splitClock(items: readonly (ContestItem | ReplyClockItem)[]): Pick<Evidence, 'clock'> & { contests: ContestItem[] } {
  const contests: ContestItem[] = [];
  const clock: Evidence['clock'] = { withdrawn: {} };
  for (const item of items) {
    if (item.contestId !== REPLY_CLOCK_ID) {
      contests.push(item as ContestItem);
      continue;
    }
    const read = item as ReplyClockItem;
    if (typeof read.replyMadeAt === 'number' && Number.isFinite(read.replyMadeAt)) clock.replyMadeAt = read.replyMadeAt;
    if (read.withdrawn !== null && typeof read.withdrawn === 'object') clock.withdrawn = read.withdrawn;
  }
  return { contests, clock };
}
