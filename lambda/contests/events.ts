/**
 * The contest events (docs/events.md, "Contest events"), pure: what users are told of a contest —
 * announced, rescheduled, withdrawn, back — from what was published before and what the evidence
 * agrees on now; and the register of deleted contests whose withdrawal is still to be told.
 */
import { createHash } from 'node:crypto';
import type { OutboxEvent } from '@contest-sync/scheduled-singleton';
import { CONTEST_EVENT, type ContestEventType } from './event-schemas.js';
import type { ContestItem, Published } from './model.js';
import { confirmedStartOf } from './evidence.js';
import { idSeed, platformIdOf } from '../sources/ids.js';

/** A deleted contest is told withdrawn when it has been missing this long, or its start passed (whichever first). */
export const WITHDRAWN_TOLD_AFTER_SECONDS = 24 * 3600;

export type ContestView = { kind: 'scheduled'; start: number } | { kind: 'withdrawn' } | { kind: 'undecided' };

/** What the evidence agrees on about a stored contest as this run leaves it (a deleted one: the register, `withdrawnDue`). */
export function viewOf(contest: ContestItem): ContestView {
  if (contest.vanishedAt !== undefined) return { kind: 'undecided' };
  if (contest.pending !== undefined || contest.remindersPaused !== undefined || contest.phase !== 'BEFORE') return { kind: 'undecided' };
  const confirmed = confirmedStartOf(contest);
  return confirmed > 0 && confirmed === contest.startTimeSeconds ? { kind: 'scheduled', start: confirmed } : { kind: 'undecided' };
}

/**
 * What was last published of a stored contest. An item written before contest events has no
 * `published`: its view then counts as published (an upgrade announces nothing that did not change).
 */
export function publishedOf(stored: ContestItem | undefined): Published {
  if (stored === undefined) return 'none';
  if (stored.published !== undefined) return stored.published;
  const view = viewOf(stored);
  return view.kind === 'scheduled' ? view.start : 'none';
}

/**
 * A contest deleted after its misses, as the register in the reply clock keeps it: since when it
 * is missing, the start that was published, whether its withdrawal was told, and what the event names.
 */
export interface WithdrawnEntry {
  since: number;
  start: number;
  told: boolean;
  /** The contest's name, at most `WITHDRAWN_NAME_CHARS`. */
  name: string;
  /** The contest's URL, at most `WITHDRAWN_URL_CHARS` (empty in an entry written before it was kept). */
  url: string;
  /** The contest's `publishedSeq` (events told of it, the withdrawal once told included). */
  seq: number;
  /** The contest's platform (the register's key is the contest's qualified id). */
  platform: string;
}

/** A register entry keeps at most this much of the name: the clock item stays far below 400 KB. */
export const WITHDRAWN_NAME_CHARS = 60;
/** And at most this much of the URL (a source's contest URL is far shorter). */
export const WITHDRAWN_URL_CHARS = 120;

/** Whether a deleted contest's withdrawal is told now: missing a day, or its start passed. */
export function withdrawnDue(entry: WithdrawnEntry, nowSeconds: number): boolean {
  return !entry.told && (nowSeconds >= entry.start || nowSeconds >= entry.since + WITHDRAWN_TOLD_AFTER_SECONDS);
}

/** What a contest listed again had published: its start while the withdrawal was not told, else `withdrawn`. */
export function publishedOfEntry(entry: WithdrawnEntry): Published {
  return entry.told ? 'withdrawn' : entry.start;
}

/** The event a view change publishes, if any: its type and the starts it reports. */
export function changeOf(published: Published, view: ContestView): { type: ContestEventType; from?: number; to?: number } | undefined {
  if (view.kind === 'undecided') return undefined;
  if (view.kind === 'withdrawn') return typeof published === 'number' ? { type: CONTEST_EVENT.withdrawn, from: published } : undefined;
  if (published === 'none') return { type: CONTEST_EVENT.announced, to: view.start };
  if (published === 'withdrawn') return { type: CONTEST_EVENT.back, to: view.start };
  return published !== view.start ? { type: CONTEST_EVENT.rescheduled, from: published, to: view.start } : undefined;
}

/** What `published` becomes after a view (an undecided view keeps it). */
export function publishedAfter(published: Published, view: ContestView): Published {
  if (view.kind === 'scheduled') return view.start;
  if (view.kind === 'withdrawn') return published === 'none' ? 'none' : 'withdrawn';
  return published;
}

/**
 * The event id: the contest and the event's number (`publishedSeq` + 1). A retried run, one that
 * stopped between transactions, or a later run after rewrites that published nothing, derives the
 * same id for the same change; the next change of the contest has the next number. The contest
 * is named by its `idSeed` (a Codeforces contest by its number, as before ids were qualified), so
 * no id changes across that upgrade.
 */
export function contestEventId(contestId: string, sequence: number): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([idSeed(contestId), sequence]))
    .digest('hex');
  return `contest:${digest.slice(0, 32)}`;
}

/** Events a run tells from the register at most (they share the reply clock's transaction); the rest are told by the next runs. */
export const WITHDRAWN_TOLD_PER_RUN = 40;

/** How long the register of deleted contests remembers one (a later listing is announced anew). */
export const WITHDRAWN_KEPT_SECONDS = 30 * 24 * 3600;
/**
 * At most this many entries in the register (those not yet told first, then the newest): with
 * names cut to 60 characters the clock item stays under 64 KB, far below DynamoDB's 400 KB,
 * and cheap to read every delivery minute.
 */
export const WITHDRAWN_KEPT_MAX = 200;

export type WithdrawnRegister = Record<string, WithdrawnEntry>;

export interface Announcements {
  events: OutboxEvent[];
  /** Every contest put of the run, with `published` as this run leaves it. */
  puts: ContestItem[];
  /** The register of deleted contests as this run leaves it. */
  withdrawn: WithdrawnRegister;
  /** Whether the register differs from the one read (the clock must be written). */
  withdrawnChanged: boolean;
  /**
   * The register as this run's deletes leave it, before anything is told (undefined: no delete
   * added an entry). It is written in the transaction of each delete (lambda/sync/act.ts), so a
   * contest is never deleted without the register keeping its published start and its event
   * sequence: a run that stops after the delete and before its clock loses neither.
   */
  withdrawnAtDelete?: WithdrawnRegister;
}

export interface AnnounceInput {
  /** The contests as stored before this run. */
  stored: readonly ContestItem[];
  /** The contests this run writes (new, changed, bookkeeping, vanished). */
  puts: readonly ContestItem[];
  /** The contests this run deletes. */
  deletes: readonly string[];
  /** The register of contests deleted after a start was published, as read (the reply clock's `withdrawn`). */
  withdrawn?: Readonly<Record<string, unknown>>;
  nowSeconds: number;
}

/** The register as read: entries that are not well-formed or are too old are dropped. */
function registerOf(read: Readonly<Record<string, unknown>> | undefined, nowSeconds: number): Map<string, WithdrawnEntry> {
  const register = new Map<string, WithdrawnEntry>();
  for (const [id, value] of Object.entries(read ?? {})) {
    const entry = value as Partial<WithdrawnEntry> | null;
    if (entry === null || typeof entry !== 'object' || typeof entry.since !== 'number' || typeof entry.start !== 'number') continue;
    if (entry.since <= nowSeconds - WITHDRAWN_KEPT_SECONDS) continue;
    register.set(id, {
      since: entry.since,
      start: entry.start,
      told: entry.told === true,
      name: String(entry.name ?? '').slice(0, WITHDRAWN_NAME_CHARS),
      url: String(entry.url ?? '').slice(0, WITHDRAWN_URL_CHARS),
      seq: typeof entry.seq === 'number' && Number.isSafeInteger(entry.seq) ? entry.seq : 0,
      // Entries written before the platform was kept were all of the first source.
      platform: typeof entry.platform === 'string' ? entry.platform.slice(0, 32) : 'codeforces',
    });
  }
  return register;
}

/**
 * The contest events of a run, its puts carrying what they publish, and the register of deleted
 * contests in the reply clock: a contest deleted after a start was published is remembered there,
 * told withdrawn when `withdrawnDue`, and published back (or moved, or nothing) if listed again.
 */
export function announce(input: AnnounceInput): Announcements {
  const stored = new Map(input.stored.map((item) => [item.contestId, item]));
  const register = registerOf(input.withdrawn, input.nowSeconds);
  // A contest stored again (a run that wrote its put but stopped before the clock) is not withdrawn.
  for (const id of [...register.keys()]) if (stored.has(id)) register.delete(id);
  const events: OutboxEvent[] = [];
  const replacements = replacementsOf(stored, input.puts);
  const puts = input.puts.map((item) => {
    const before = stored.get(item.contestId);
    const entry = before === undefined ? register.get(item.contestId) : undefined;
    const published = entry !== undefined ? publishedOfEntry(entry) : publishedOf(before);
    const seq = entry !== undefined ? entry.seq : (before?.publishedSeq ?? 0);
    const replacedBy = replacements.get(item.contestId);
    // Re-listed under a new id: withdrawn at once, naming the round that replaced it.
    const view: ContestView = replacedBy !== undefined ? { kind: 'withdrawn' } : viewOf(item);
    const change = changeOf(published, view);
    if (change !== undefined) events.push(eventOf(item, change, seq + 1, replacedBy));
    // Listed again: the register forgets it once the item carries what was published.
    register.delete(item.contestId);
    const told = change !== undefined ? seq + 1 : seq;
    return { ...item, published: publishedAfter(published, view), ...(told > 0 ? { publishedSeq: told } : {}) };
  });
  let deleted = 0;
  for (const contestId of input.deletes) {
    const before = stored.get(contestId);
    if (before === undefined) continue;
    const published = publishedOf(before);
    if (published === 'none') continue; // never announced: its withdrawal is no news
    deleted += 1;
    register.set(contestId, {
      since: before.vanishedAt ?? input.nowSeconds,
      start: typeof published === 'number' ? published : before.startTimeSeconds,
      told: published === 'withdrawn',
      name: before.name.slice(0, WITHDRAWN_NAME_CHARS),
      url: before.url.slice(0, WITHDRAWN_URL_CHARS),
      seq: before.publishedSeq ?? 0,
      platform: before.platform,
    });
  }
  const withdrawnAtDelete = deleted > 0 ? bounded(register) : undefined;
  const due = [...register].filter(([, entry]) => withdrawnDue(entry, input.nowSeconds)).slice(0, WITHDRAWN_TOLD_PER_RUN);
  for (const [id, entry] of due) {
    const contest = { contestId: id, platform: entry.platform, name: entry.name, url: entry.url } as ContestItem;
    // The deleted contest's view is withdrawn: the same rule as every other change.
    events.push(eventOf(contest, changeOf(entry.start, { kind: 'withdrawn' })!, entry.seq + 1));
    register.set(id, { ...entry, told: true, seq: entry.seq + 1 });
  }
  const withdrawn = bounded(register);
  const withdrawnChanged =
    JSON.stringify(withdrawn) !== JSON.stringify(Object.fromEntries(registerOf(input.withdrawn, Number.NEGATIVE_INFINITY)));
  return { events, puts, withdrawn, withdrawnChanged, ...(withdrawnAtDelete !== undefined ? { withdrawnAtDelete } : {}) };
}

/** The register as stored: at most WITHDRAWN_KEPT_MAX entries (those not yet told first, then the newest), by id. */
function bounded(register: ReadonlyMap<string, WithdrawnEntry>): WithdrawnRegister {
  const kept = [...register].sort(([, a], [, b]) => Number(a.told) - Number(b.told) || b.since - a.since).slice(0, WITHDRAWN_KEPT_MAX);
  return Object.fromEntries(kept.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/**
 * Rounds re-listed under a new id (docs/events.md, "A round listed again under a new id"): a
 * contest missing from this reply (vanished or still missing) whose platform, name and start are
 * those of a contest this reply lists under another id, upcoming and scheduled at that start —
 * the evidence that the platform re-created the round. Missing id → the id that replaced it (one
 * replacement each: several candidates are no evidence).
 */
export function replacementsOf(stored: ReadonlyMap<string, ContestItem>, puts: readonly ContestItem[]): Map<string, string> {
  const after = new Map(stored);
  for (const item of puts) after.set(item.contestId, item);
  const listed = [...after.values()].filter((c) => c.vanishedAt === undefined && viewOf(c).kind === 'scheduled');
  const replaced = new Map<string, string>();
  for (const missing of puts) {
    if (missing.vanishedAt === undefined || missing.phase !== 'BEFORE') continue;
    const same = listed.filter(
      (c) =>
        c.contestId !== missing.contestId &&
        c.platform === missing.platform &&
        c.name === missing.name &&
        c.startTimeSeconds === missing.startTimeSeconds,
    );
    if (same.length === 1) replaced.set(missing.contestId, same[0]!.contestId);
  }
  return replaced;
}

/** The event of a change: `sequence` is its number among the contest's events (its id). */
function eventOf(
  contest: ContestItem,
  change: { type: ContestEventType; from?: number; to?: number },
  sequence: number,
  replacedBy?: string,
): OutboxEvent {
  const { contestId, platform } = contest;
  // `contest` repeats `contestId` for consumers of the release before ids were qualified (deprecated).
  const base = {
    contestId,
    contest: contestId,
    platform,
    platformId: platformIdOf(contestId),
    sequence,
    name: contest.name,
    url: contest.url,
  };
  const id = contestEventId(contest.contestId, sequence);
  switch (change.type) {
    case CONTEST_EVENT.withdrawn:
      return {
        id,
        detailType: change.type,
        detail: {
          ...base,
          startTimeSeconds: change.from!,
          startTime: iso(change.from!),
          ...(replacedBy !== undefined ? { replacedBy } : {}),
        },
      };
    case CONTEST_EVENT.rescheduled:
      return {
        id,
        detailType: change.type,
        detail: {
          ...base,
          previousStartTimeSeconds: change.from!,
          previousStartTime: iso(change.from!),
          startTimeSeconds: change.to!,
          startTime: iso(change.to!),
          durationSeconds: contest.durationSeconds,
        },
      };
    default:
      return {
        id,
        detailType: change.type,
        detail: {
          ...base,
          type: contest.type,
          startTimeSeconds: change.to!,
          startTime: iso(change.to!),
          durationSeconds: contest.durationSeconds,
        },
      };
  }
}
