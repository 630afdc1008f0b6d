/**
 * What `npm run redrive` may resend, decided apart from any I/O (docs/runbook.md, "Events not
 * delivered"; the windows: lambda/event-windows.ts). An outbox item is resent only when a
 * consumer that may have received it still remembers its id, and when what it says is still true:
 *
 *   - an item committed more than REDRIVE_MAX_AGE ago is refused (`older-than-dedupe-window`):
 *     the consumers' dedupe records of it may be gone, so a resend could be a second delivery;
 *   - a `ReminderDue` is a reminder sent, and a redrive is a send: it follows the rule delivery
 *     claims by (docs/delivery.md, "The rule"). Refused when its start has passed
 *     (`start-passed`: "starts in 30 minutes" days later), when its contest is gone or no longer
 *     lets reminders fire at that start (`contest-gone`, `contest-paused`, `contest-moved`), and
 *     when the reminder row no longer says it was sent for this intent and start
 *     (`reminder-changed`: cancelled, set again, or moved and sent again since);
 *   - an item that is not an outbox item as the package writes it is refused (`malformed`).
 *
 * Everything else in the window is resent as it was (its id, so consumers dedupe it).
 */
import { OUTBOX_ITEM } from '@contest-sync/scheduled-singleton/contract';
import { EVENT_WINDOWS } from '../../lambda/event-windows.js';
import { REMINDER_DUE, ROW_LIMITS, reminderDueId } from '../../lambda/delivery/due.js';
import { currentContestId } from '../../lambda/sources/ids.js';

/** Bounds of an outbox item as the package writes it (runtime/outbox.ts): anything else is not one. */
const LIMITS = { maxKeyBytes: 1024, maxEventIdBytes: 256, maxDetailTypeChars: 128, maxSourceChars: 256, maxDetailBytes: 256 * 1024 };

export type RefuseReason =
  'malformed' | 'older-than-dedupe-window' | 'start-passed' | 'contest-gone' | 'contest-paused' | 'contest-moved' | 'reminder-changed';

/** An outbox item, read and bounded. */
export interface OutboxRecord {
  pk: string;
  eventId: string;
  source: string;
  detailType: string;
  /** The detail as the bus carries it (JSON text). */
  detail: string;
  createdAtMs: number;
  /** The whole item as read, to put back unchanged. */
  item: Record<string, unknown>;
}

/** What a ReminderDue names: the row and the start it was sent for. */
export interface ReminderRef {
  /** The contest's qualified id (an event of the release before ids were qualified names a number: read as `codeforces:<n>`). */
  contestId: string;
  userId: string;
  startTimeSeconds: number;
}

export type Verdict = { resend: true } | { resend: false; reason: RefuseReason; why: string };

export interface PlanEntry {
  /** The item's key, or a bounded rendering of what was found when it is malformed. */
  pk: string;
  eventId?: string;
  detailType?: string;
  createdAtMs?: number;
  verdict: Verdict;
}

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');
const isText = (value: unknown, maxBytes: number): value is string => typeof value === 'string' && value !== '' && utf8(value) <= maxBytes;
const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);
/** A text from outside, cut for a terminal line. */
export const shown = (value: unknown, max = 120): string => {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
};

/** An outbox item as the package writes it, or undefined. */
export function readOutboxItem(item: Record<string, unknown>): OutboxRecord | undefined {
  const pk = item[OUTBOX_ITEM.key];
  const eventId = item[OUTBOX_ITEM.eventId];
  const source = item[OUTBOX_ITEM.source];
  const detailType = item[OUTBOX_ITEM.detailType];
  const detail = item[OUTBOX_ITEM.detail];
  const createdAtMs = item[OUTBOX_ITEM.createdAtMs];
  if (!isText(pk, LIMITS.maxKeyBytes) || !isText(eventId, LIMITS.maxEventIdBytes) || !isText(source, LIMITS.maxSourceChars))
    return undefined;
  if (!isText(detailType, LIMITS.maxDetailTypeChars) || !isText(detail, LIMITS.maxDetailBytes) || !isInteger(createdAtMs)) return undefined;
  if (pk !== `${source}#${eventId}`) return undefined;
  return { pk, eventId, source, detailType, detail, createdAtMs, item };
}

/** The row and start a ReminderDue names, or undefined when its detail does not say them. */
export function reminderOf(record: OutboxRecord): ReminderRef | undefined {
  if (record.detailType !== REMINDER_DUE) return undefined;
  let detail: unknown;
  try {
    detail = JSON.parse(record.detail);
  } catch {
    return undefined;
  }
  if (detail === null || typeof detail !== 'object') return undefined;
  const { userId, startTimeSeconds } = detail as Record<string, unknown>;
  const contestId = currentContestId((detail as Record<string, unknown>).contestId);
  if (contestId === undefined) return undefined;
  if (!isText(userId, ROW_LIMITS.maxUserIdBytes) || !isInteger(startTimeSeconds)) return undefined;
  return { contestId, userId, startTimeSeconds };
}

/**
 * The verdict on one outbox item. `contest` and `reminder` are the items as read now (Contests,
 * Reminders), for a ReminderDue; undefined when there is none.
 */
export function verdictOf(
  record: OutboxRecord,
  nowMs: number,
  lookup: { contest?: Record<string, unknown>; reminder?: Record<string, unknown> } = {},
  windows: { redriveMaxAgeSeconds: number } = EVENT_WINDOWS,
): Verdict {
  const ageSeconds = (nowMs - record.createdAtMs) / 1000;
  if (ageSeconds > windows.redriveMaxAgeSeconds) {
    return {
      resend: false,
      reason: 'older-than-dedupe-window',
      why: `committed ${hours(ageSeconds)} ago, more than the ${hours(windows.redriveMaxAgeSeconds)} a redrive may reach back (consumers remember an id ${hours(EVENT_WINDOWS.consumerDedupeSeconds)})`,
    };
  }
  if (record.detailType !== REMINDER_DUE) return { resend: true };
  const ref = reminderOf(record);
  if (ref === undefined) return { resend: false, reason: 'malformed', why: 'a ReminderDue without contestId, userId and startTimeSeconds' };
  const start = ref.startTimeSeconds;
  if (start * 1000 <= nowMs) return { resend: false, reason: 'start-passed', why: `its start ${iso(start)} has passed` };
  const { contest, reminder } = lookup;
  if (contest === undefined) return { resend: false, reason: 'contest-gone', why: `contest ${ref.contestId} is not stored` };
  const dueStart = contest.dueStart;
  if (!isInteger(dueStart))
    return { resend: false, reason: 'contest-paused', why: `contest ${ref.contestId} lets no reminder fire now (no dueStart)` };
  if (dueStart !== start)
    return {
      resend: false,
      reason: 'contest-moved',
      why: `contest ${ref.contestId}'s reminders fire for ${iso(dueStart)}, not ${iso(start)}`,
    };
  const intent = reminder?.intent;
  const sameIntent =
    reminder !== undefined &&
    (intent === undefined || typeof intent === 'string') &&
    reminderDueId(ref.contestId, ref.userId, intent, start) === record.eventId;
  if (!sameIntent || reminder?.notifiedStart !== start) {
    return {
      resend: false,
      reason: 'reminder-changed',
      why:
        reminder === undefined
          ? 'the reminder is gone (cancelled)'
          : !sameIntent
            ? 'the reminder was set again since (another intent)'
            : `the reminder was last sent for ${isInteger(reminder.notifiedStart) ? iso(reminder.notifiedStart) : 'no start'}`,
    };
  }
  return { resend: true };
}

/** The plan for the items scanned in a window: every item, with its verdict, oldest first. */
export function planRedrive(
  items: readonly Record<string, unknown>[],
  nowMs: number,
  lookup: (ref: ReminderRef) => { contest?: Record<string, unknown>; reminder?: Record<string, unknown> },
): PlanEntry[] {
  const entries = items.map((item): PlanEntry & { order: number } => {
    const record = readOutboxItem(item);
    if (record === undefined) {
      return {
        pk: shown(item[OUTBOX_ITEM.key]),
        order: 0,
        verdict: { resend: false, reason: 'malformed', why: 'not an outbox item as the jobs write it' },
      };
    }
    const ref = reminderOf(record);
    return {
      pk: record.pk,
      eventId: record.eventId,
      detailType: record.detailType,
      createdAtMs: record.createdAtMs,
      order: record.createdAtMs,
      verdict: verdictOf(record, nowMs, ref === undefined ? {} : lookup(ref)),
    };
  });
  return entries.sort((a, b) => a.order - b.order).map(({ order: _order, ...entry }) => entry);
}

/** The contests and reminder rows a plan needs to read: those of the ReminderDue items in it. */
export function reminderRefs(items: readonly Record<string, unknown>[]): ReminderRef[] {
  return items.flatMap((item) => {
    const record = readOutboxItem(item);
    const ref = record === undefined ? undefined : reminderOf(record);
    return ref === undefined ? [] : [ref];
  });
}

/** A window given on the command line: ISO times, from before to, the end not in the future. */
export function parseWindow(from: string | undefined, to: string | undefined, nowMs: number): { fromMs: number; toMs: number } {
  if (from === undefined) throw new RedriveUsageError('--from is required (an ISO time, e.g. 2026-12-01T10:00:00Z)');
  const fromMs = Date.parse(from);
  const toMs = to === undefined ? nowMs : Date.parse(to);
  if (!Number.isFinite(fromMs)) throw new RedriveUsageError(`--from ${shown(from, 40)} is not an ISO time`);
  if (!Number.isFinite(toMs)) throw new RedriveUsageError(`--to ${shown(to, 40)} is not an ISO time`);
  if (fromMs >= toMs) throw new RedriveUsageError('--from must be before --to');
  return { fromMs, toMs };
}

export class RedriveUsageError extends Error {
  override readonly name = 'RedriveUsageError';
}

/** What the plan comes to: how many would be (or were) resent, and how many refused, by reason. */
export function summarize(plan: readonly PlanEntry[]): { resend: number; refused: number; reasons: Partial<Record<RefuseReason, number>> } {
  const reasons: Partial<Record<RefuseReason, number>> = {};
  let resend = 0;
  for (const entry of plan) {
    if (entry.verdict.resend) resend += 1;
    else reasons[entry.verdict.reason] = (reasons[entry.verdict.reason] ?? 0) + 1;
  }
  return { resend, refused: plan.length - resend, reasons };
}

function hours(seconds: number): string {
  return seconds >= 2 * 86_400 ? `${(seconds / 86_400).toFixed(1)} days` : `${(seconds / 3600).toFixed(1)} h`;
}
function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}
