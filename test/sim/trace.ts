/**
 * A trace of chosen contests through a simulated run (`npm run simulate -- --trace ID[,ID…]`,
 * docs/simulation.md "Tracing a violation"): for each, the truth and the reply every sync got, the
 * contest item and the reminder rows as the sync left them, what the app wrote, what the delivery
 * job left, and each notification the users received — one line per change, in virtual time.
 * What a violation's detail names is then read off as a sequence of replies and writes.
 */
import { listedAt, startAt, phaseAt, type Truth } from './truth.js';

/** The attributes of a contest item the firing rule reads (the rest is what the app shows). */
const CONTEST_FIELDS = [
  'phase',
  'startTimeSeconds',
  'confirmedStart',
  'awaitedStart',
  'confirmedBefore',
  'dueStart',
  'remindersPaused',
  'vanishedAt',
  'missingSyncs',
  'pending',
] as const;
/** The attributes of a reminder row the firing rule and delivery read. */
const REMINDER_FIELDS = [
  'minutesBefore',
  'intent',
  'remindAt',
  'dueAt',
  'dueStart',
  'paused',
  'notifiedAt',
  'notifiedStart',
  'sentStarts',
] as const;

export function iso(seconds: unknown): string {
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 1e9
    ? new Date(seconds * 1000).toISOString().replace(':00.000Z', 'Z').replace('.000Z', 'Z')
    : String(seconds);
}

function shown(value: unknown): string {
  if (value instanceof Set) return `{${[...(value as Set<unknown>)].map(iso).join(',')}}`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k}:${k === 'since' ? iso(v) : typeof v === 'string' ? v.replace(/(\d{10})/, (m) => iso(Number(m))) : shown(v)}`)
      .join(' ')}}`;
  }
  return iso(value);
}

function describeItem(item: Record<string, unknown> | undefined, fields: readonly string[]): string {
  if (item === undefined) return '(none)';
  const parts = fields.filter((f) => item[f] !== undefined).map((f) => `${f}=${shown(item[f])}`);
  return parts.length === 0 ? '(empty)' : parts.join(' ');
}

export class Tracer {
  private readonly last = new Map<string, string>();
  private readonly ids: ReadonlySet<number>;

  constructor(
    ids: readonly number[],
    private readonly truth: Truth,
    private readonly write: (line: string) => void,
  ) {
    this.ids = new Set(ids);
  }

  has(contestId: number): boolean {
    return this.ids.has(contestId);
  }

  get contests(): number[] {
    return [...this.ids];
  }

  private line(at: number, contestId: number, text: string): void {
    this.write(`${iso(at)} ${contestId} ${text}`);
  }

  /** Prints `prefix + text` only when `text` differs from the last printed under `key`. */
  private changed(at: number, contestId: number, key: string, text: string, prefix = '', suffix = ''): void {
    if (this.last.get(key) === text) return;
    this.last.set(key, text);
    this.line(at, contestId, prefix + text + suffix);
  }

  /** The truth, once an hour (printed when it changed). */
  hour(at: number, glitch: string | undefined): void {
    for (const id of this.ids) {
      const contest = this.truth.contests.find((c) => c.id === id);
      if (contest === undefined) continue;
      const truth = listedAt(contest, at) ? `truth: ${phaseAt(contest, at)} start ${iso(startAt(contest, at))}` : 'truth: not listed';
      this.changed(at, id, `truth/${id}`, truth);
      if (glitch !== undefined) this.line(at, id, `  hour's glitch: ${glitch}`);
    }
  }

  /** What one reply said of each traced contest. */
  reply(
    at: number,
    entries: readonly { id: number; phase: string; startTimeSeconds: number; relativeTimeSeconds?: number }[] | undefined,
    note: string,
  ): void {
    for (const id of this.ids) {
      const entry = entries?.find((e) => e.id === id);
      const said =
        entries === undefined
          ? `reply (${note}): no list`
          : entry === undefined
            ? `reply (${note}): missing`
            : `reply (${note}): ${entry.phase} start ${iso(entry.startTimeSeconds)}`;
      const made = entry?.relativeTimeSeconds !== undefined ? ` made ${iso(entry.startTimeSeconds + entry.relativeTimeSeconds)}` : '';
      // An honest reply saying what the one before said is not printed again.
      this.changed(at, id, `reply/${id}`, said, '', made);
    }
  }

  /** A run's outcome. */
  run(at: number, what: string): void {
    for (const id of this.ids) this.line(at, id, what);
  }

  /** The contest item and reminder rows as stored now (printed when they changed). */
  stored(
    at: number,
    who: string,
    contestId: number,
    contest: Record<string, unknown> | undefined,
    reminders: Record<string, unknown>[],
  ): void {
    this.changed(at, contestId, `contest/${contestId}`, `contest ${describeItem(contest, CONTEST_FIELDS)}`, `  after ${who}: `);
    const users = new Set<string>();
    for (const row of reminders) {
      const user = String(row.userId);
      users.add(user);
      this.changed(
        at,
        contestId,
        `reminder/${contestId}/${user}`,
        `reminder ${user} ${describeItem(row, REMINDER_FIELDS)}`,
        `  after ${who}: `,
      );
    }
    for (const key of [...this.last.keys()].filter((k) => k.startsWith(`reminder/${contestId}/`))) {
      const user = key.slice(`reminder/${contestId}/`.length);
      if (!users.has(user)) this.changed(at, contestId, key, `reminder ${user} (gone)`, `  after ${who}: `);
    }
  }

  note(at: number, contestId: number, text: string): void {
    this.line(at, contestId, text);
  }
}
