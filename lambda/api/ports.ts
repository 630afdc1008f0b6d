/**
 * What the HTTP API needs of the rest of the product, as narrow interfaces (ports) it is given:
 * the reminder write path (lambda/reminders/, docs/tables.md), the contests as the app shows them,
 * and the calendar feeds. The routes (lambda/api/routes.ts) depend on these only; the entry
 * (lambda/api/handler.ts) wires the real modules, the tests their doubles.
 */
import type { Platform } from './contract.js';
import type { FeedRead, Feeds } from '../calendar/feeds.js';

export type { FeedRead, Feeds };

/** A reminder as the write path shows it (its internal bookkeeping is not). */
export interface ReminderView {
  /** The platform-qualified id: `codeforces:2120`. */
  contestId: string;
  minutesBefore: number;
  /** Epoch seconds. */
  remindAt: number;
  state: 'scheduled' | 'paused' | 'sent';
  /** With `sent`: the start it was sent for (epoch seconds). */
  sentStart?: number;
}

/**
 * The reminder write path. Refusals are errors whose `code` is `invalid-input`,
 * `contest-not-found`, `contest-started` or `conflict` (with `fields` for invalid input).
 */
export interface ReminderWritePath {
  setReminder(input: { contestId: string; userId: string; minutesBefore: number }): Promise<{ reminder: ReminderView; changed: boolean }>;
  cancelReminder(input: { contestId: string; userId: string }): Promise<{ cancelled: boolean }>;
  listReminders(input: { userId: string; limit?: number; cursor?: string }): Promise<{ reminders: ReminderView[]; cursor?: string }>;
}

/** A stored contest as the app may show it (docs/tables.md: what the app reads). */
export interface ContestRecord {
  /** The platform-qualified id. */
  contestId: string;
  name: string;
  type?: string;
  phase: string;
  startTimeSeconds: number;
  durationSeconds: number;
  url: string;
}

export interface ContestPageRequest {
  /** One platform's contests; none: every platform's, merged. */
  platform?: Platform;
  status: 'upcoming' | 'recent';
  limit: number;
  cursor?: string;
  /** Epoch seconds. */
  now: number;
}

export interface ContestReader {
  /** A page of shown contests (never a vanished one); `cursor` when there may be more. */
  page(request: ContestPageRequest): Promise<{ contests: ContestRecord[]; cursor?: string }>;
}

/** The router's request store: the user a `/me/` route acts for. */
export type RouterEnv = { store: { request: { userId: string } } };
