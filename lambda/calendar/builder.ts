/**
 * The feed builder: the consumer of the FIFO feed queue (docs/api.md, "Calendar"). A message is a
 * contest event from the bus (folded into the projection; the platform's public feed, the one of
 * every platform and the contest's users' feeds rebuilt) or a user's rebuild (from the API).
 * Messages of one group are handled in order: once one fails, it and every later one of the batch
 * are handed back to the queue. A message that is neither is dropped and counted (retrying cannot
 * make it valid).
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import { applyContestEvent, buildUserFeed, type CalendarDeps } from './feeds.js';
import { isUserId } from '../reminders/user-id.js';
import { contestEventSchema } from './projection.js';

const rebuildSchema = z.object({ rebuild: z.literal('user'), userId: z.string().refine(isUserId) }).strict();

export interface BuilderLog {
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
}

export type BuilderOutcome = 'applied' | 'stale' | 'built' | 'no-feed' | 'superseded' | 'invalid';

export async function handleMessage(deps: CalendarDeps, body: string): Promise<BuilderOutcome> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return 'invalid';
  }
  const event = contestEventSchema.safeParse(parsed);
  if (event.success) return (await applyContestEvent(deps, event.data)).outcome;
  const rebuild = rebuildSchema.safeParse(parsed);
  if (rebuild.success) return buildUserFeed(deps, rebuild.data.userId);
  return 'invalid';
}

export function createBuilder(deps: CalendarDeps, log: BuilderLog): (event: SQSEvent) => Promise<SQSBatchResponse> {
  return async (event) => {
    const counts: Partial<Record<BuilderOutcome, number>> = {};
    const records = event.Records;
    for (const [index, record] of records.entries()) {
      try {
        const outcome = await handleMessage(deps, record.body);
        counts[outcome] = (counts[outcome] ?? 0) + 1;
        if (outcome === 'invalid') log.warn('feed message dropped: neither a contest event nor a rebuild', { messageId: record.messageId });
      } catch (error) {
        log.error('feed message failed; it and the rest of the batch go back to the queue', { messageId: record.messageId, error });
        log.info('feeds built', { summary: true, counts, failed: records.length - index });
        return { batchItemFailures: records.slice(index).map((r) => ({ itemIdentifier: r.messageId })) };
      }
    }
    log.info('feeds built', { summary: true, counts, failed: 0 });
    return { batchItemFailures: [] };
  };
}
