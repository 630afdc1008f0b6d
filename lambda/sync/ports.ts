/**
 * What a sync runs on (docs/design.md, "One sync: gather, judge, act"): the lease's work context
 * with the console's options, the contest store, the source, the clock and the model's settings.
 * Everything comes in as a parameter, so tests drive the steps with real or fake parts.
 */
import type { ContestWrite } from '../contests/judgement.js';
import type { ContestItem, ReminderItem, ReplyClockItem, SourceReply } from '../contests/model.js';
import type { PlanSettings } from '../contests/plan.js';
import type { ReminderUpdate } from '../contests/reminders.js';
import type { TransactAction, WorkContext } from '../single-execution/index.js';

/** The reads and the write actions of the Contests and Reminders tables (store/dynamo-store.ts). */
export interface StorePort {
  /** Every item of the Contests table: the contests and the reply clock. */
  scanContests(signal?: AbortSignal): Promise<(ContestItem | ReplyClockItem)[]>;
  remindersOf(contestId: number, signal?: AbortSignal): Promise<ReminderItem[]>;
  contestAction(write: ContestWrite): TransactAction;
  reminderAction(update: ReminderUpdate): TransactAction;
  clockAction(clock: { replyMadeAt: number; withdrawn: Readonly<Record<string, unknown>> }, updatedAt: string): TransactAction;
}

export interface SyncDeps {
  store: StorePort;
  /** The source's reply (lambda/codeforces/source.ts over the client). */
  fetchReply(options: { signal: AbortSignal; deadline: number }): Promise<SourceReply>;
  now: () => number;
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
