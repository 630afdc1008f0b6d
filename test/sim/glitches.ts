/**
 * The glitch schedule of a simulated year: at most one glitch per hourly interval, drawn up front
 * from the seed (pure: no I/O). A Codeforces glitch shapes the replies of that hour's runs; a run
 * glitch shapes the invocations (duplicate delivery, a crash mid-run, DynamoDB faults).
 *
 * A wrong upstream is an episode: the same wrong reply (or the same failure) for 1 to `episode`
 * hours running (default up to 6), whatever the model does with repeated evidence. A wrong reply is
 * served either **frozen** (the body made in the episode's first hour, served again unchanged: a
 * stale cache; its `relativeTimeSeconds` date it to when it was made) or **fresh** (the same lie made
 * again every hour, with fresh `relativeTimeSeconds`: a persisting upstream bug).
 */
import { prng } from '../chaos/faults.js';
import { DAY, HOUR, listAt, phaseFor, type ApiEntry, type Truth } from './truth.js';

export const CODEFORCES_GLITCHES = [
  /** One attempt answered 503, the next one honest. */
  'http-503',
  /** One attempt timed out, the next one honest. */
  'timeout',
  /** One attempt answered `{"status":"FAILED","comment":"Call limit exceeded"}`, the next one honest. */
  'call-limit',
  /** Every attempt of every run fails (503 or timeouts) for the whole episode. */
  'outage',
  /** `{"status":"OK","result":[]}` for the episode. */
  'empty',
  /** A body cut in the middle (not JSON) for the episode. */
  'truncated',
  /** 30–70 % of the entries left out (the upcoming ones among them). */
  'partial',
  /** Every contest listed FINISHED with its start moved hours into the past. */
  'all-finished',
  /** The upcoming contests' starts moved 1–6 hours into the past, phase BEFORE. */
  'starts-past',
  /** An honest reply made 1–6 hours earlier (a lagging replica or a cache). */
  'stale',
  /** One upcoming contest listed as started 1–9 minutes ago (inside the clock-skew allowance), phase CODING. */
  'one-started',
  /** One upcoming contest listed 2 hours to 2 days later than it is. */
  'one-later',
  /**
   * Two or three upcoming contests lied about at once, each its own way: listed later, listed as
   * started minutes ago, left out, listed FINISHED before it ran, or its start moved hours into the past.
   */
  'several-lies',
] as const;
export type CodeforcesGlitch = (typeof CODEFORCES_GLITCHES)[number];

export const RUN_GLITCHES = [
  /** The scheduled event delivered twice, both at once (and two notifiers racing that hour). */
  'duplicate',
  /** The first invocation dies after k DynamoDB requests (its lease left held until it lapses). */
  'crash',
  /** Throttling on a share of the first invocation's DynamoDB requests. */
  'dynamo-throttle',
  /** Transaction conflicts on the first invocation's writes. */
  'dynamo-conflict',
  /** HTTP 500 on a share of the first invocation's DynamoDB requests. */
  'dynamo-500',
] as const;
export type RunGlitch = (typeof RUN_GLITCHES)[number];

export type Glitch = CodeforcesGlitch | RunGlitch;

/** Glitches whose every reply in the hour is wrong (or fails), served as an episode of 1..N hours. */
export const EPISODE_GLITCHES: ReadonlySet<Glitch> = new Set<Glitch>([
  'outage',
  'empty',
  'truncated',
  'partial',
  'all-finished',
  'starts-past',
  'stale',
  'one-started',
  'one-later',
  'several-lies',
]);

/** Wrong replies that the sync receives as a valid list (the rest fail the sync). */
export const WRONG_LISTS: ReadonlySet<Glitch> = new Set<Glitch>([
  'partial',
  'all-finished',
  'starts-past',
  'stale',
  'one-started',
  'one-later',
  'several-lies',
]);

/** Lies about one contest: the hour is wrong for those contests alone. */
export const PER_CONTEST_LIES: ReadonlySet<Glitch> = new Set<Glitch>(['one-started', 'one-later', 'several-lies']);

/** What a `several-lies` reply says of each contest it lies about. */
export const CONTEST_LIES = ['later', 'started', 'missing', 'finished', 'past'] as const;
export type ContestLie = (typeof CONTEST_LIES)[number];

/** Probability per hour that each glitch (an episode, for EPISODE_GLITCHES) begins. */
export const DEFAULT_GLITCH_RATES: Record<Glitch, number> = {
  'http-503': 0.005,
  timeout: 0.003,
  'call-limit': 0.005,
  outage: 0.001,
  empty: 0.002,
  truncated: 0.002,
  partial: 0.002,
  'all-finished': 0.0015,
  'starts-past': 0.0015,
  stale: 0.002,
  'one-started': 0.0015,
  'one-later': 0.0015,
  'several-lies': 0.0015,
  duplicate: 0.01,
  crash: 0.005,
  'dynamo-throttle': 0.004,
  'dynamo-conflict': 0.004,
  'dynamo-500': 0.004,
};

/** Default longest episode (hours). */
export const DEFAULT_EPISODE = 6;

export interface HourGlitch {
  kind: Glitch;
  /** Wrong lists: the first hour's reply served again (`frozen`), or the same lie made again (`fresh`). */
  mode: 'frozen' | 'fresh';
  /** `crash`: DynamoDB requests the invocation makes before it dies (1–3: before the read, before the write, before the release). */
  crashAfter?: number;
  /** `partial`: the share of entries kept. */
  keep?: number;
  /** `all-finished`, `starts-past`: how far starts move into the past; `stale`: how old the reply is; `one-later`: how much later (seconds). */
  shiftSeconds?: number;
  /** `one-started`: minutes since the lied start (1–9, inside the 10-minute skew allowance). */
  skewMinutes?: number;
  /** Seed of the per-request draws of this hour (DynamoDB fault policy, partial list, the lied-about contest). */
  seed: number;
  /** The first hour of the episode. */
  fromHour: number;
  /** Hours in the episode. */
  length: number;
}

export interface ScheduleOptions {
  /** Longest episode of a wrong upstream (hours; default 6). */
  episode?: number;
  /** Every episode exactly `episode` hours long (the stress runs). */
  fullEpisodes?: boolean;
}

/** The glitch of each hour (undefined: a quiet hour). Hour 0 is always quiet (the first sync). */
export function glitchSchedule(
  seed: number,
  hours: number,
  rates: Partial<Record<Glitch, number>> = {},
  options: ScheduleOptions = {},
): (HourGlitch | undefined)[] {
  const random = prng(seed ^ 0x676c_6974);
  const all = { ...DEFAULT_GLITCH_RATES, ...rates };
  const kinds = Object.keys(all) as Glitch[];
  const episode = options.episode ?? DEFAULT_EPISODE;
  if (!Number.isInteger(episode) || episode < 1) throw new Error(`episode must be a whole number of hours ≥ 1, got ${episode}`);
  const out: (HourGlitch | undefined)[] = new Array<HourGlitch | undefined>(hours).fill(undefined);
  for (let hour = 1; hour < hours; hour += 1) {
    const draw = random();
    const extra = { seed: Math.floor(random() * 2 ** 31), knob: random(), length: random(), mode: random() };
    if (out[hour] !== undefined) continue;
    let acc = 0;
    for (const kind of kinds) {
      acc += all[kind];
      if (draw >= acc) continue;
      const length = EPISODE_GLITCHES.has(kind) ? (options.fullEpisodes === true ? episode : 1 + Math.floor(extra.length * episode)) : 1;
      const glitch: HourGlitch = { kind, mode: extra.mode < 0.5 ? 'frozen' : 'fresh', seed: extra.seed, fromHour: hour, length };
      if (kind === 'crash') glitch.crashAfter = 1 + Math.floor(extra.knob * 3);
      if (kind === 'partial') glitch.keep = 0.3 + extra.knob * 0.4;
      if (kind === 'all-finished' || kind === 'starts-past' || kind === 'stale')
        glitch.shiftSeconds = Math.round((1 + extra.knob * 5) * 3600);
      if (kind === 'one-later') glitch.shiftSeconds = Math.round((2 + extra.knob * 46) * 3600);
      if (kind === 'one-started') glitch.skewMinutes = 1 + Math.floor(extra.knob * 9);
      for (let next = hour; next < Math.min(hours, hour + length); next += 1) {
        // An outage fails differently every hour; a wrong list is the same lie all along.
        out[next] = kind === 'outage' ? { ...glitch, seed: extra.seed + next } : glitch;
      }
      break;
    }
  }
  return out;
}

export function isCodeforcesGlitch(kind: Glitch): kind is CodeforcesGlitch {
  return (CODEFORCES_GLITCHES as readonly string[]).includes(kind);
}

/** Every rate zero: a quiet year (only honest churn). */
export const NO_GLITCHES: Record<Glitch, number> = Object.fromEntries(Object.keys(DEFAULT_GLITCH_RATES).map((kind) => [kind, 0])) as Record<
  Glitch,
  number
>;

/** The wrong lists, often (an episode beginning every few days of each kind): the stress runs. */
export const HARMFUL_GLITCHES: Partial<Record<Glitch, number>> = {
  'all-finished': 0.012,
  'starts-past': 0.012,
  partial: 0.012,
  stale: 0.012,
  'one-started': 0.012,
  'one-later': 0.012,
  'several-lies': 0.012,
};

/** Every glitch but the wrong lists: what the code before the model already survived. */
export const BENIGN_GLITCHES: Partial<Record<Glitch, number>> = Object.fromEntries([...WRONG_LISTS].map((kind) => [kind, 0]));

/**
 * A wrong list made at `madeAt` for the episode `glitch` (first reply at `t0`): the truth then,
 * changed the same way all episode long. `relativeTimeSeconds` is madeAt − start, as Codeforces
 * computes it when it makes a reply.
 */
export function wrongList(truth: Truth, glitch: HourGlitch, t0: number, madeAt: number, targets: readonly number[] = []): ApiEntry[] {
  const target = targets[0];
  const at = glitch.kind === 'stale' ? madeAt - (glitch.shiftSeconds ?? HOUR) : madeAt;
  const dated = (entry: ApiEntry, startTimeSeconds: number, phase = entry.phase): ApiEntry => ({
    ...entry,
    startTimeSeconds,
    phase,
    relativeTimeSeconds: at - startTimeSeconds,
  });
  const list = listAt(truth, at);
  const back = glitch.shiftSeconds ?? HOUR;
  switch (glitch.kind) {
    case 'partial':
      return list.filter((entry) => hash01(`keep/${entry.id}`, glitch.seed) < (glitch.keep ?? 0.5));
    case 'all-finished':
      return list.map((entry) => dated(entry, Math.min(entry.startTimeSeconds, t0 - back), 'FINISHED'));
    case 'starts-past':
      return list.map((entry) => (entry.startTimeSeconds > at ? dated(entry, t0 - back, 'BEFORE') : entry));
    case 'one-started':
      return list.map((entry) => {
        if (entry.id !== target) return entry;
        const start = t0 - 60 * (glitch.skewMinutes ?? 5);
        return dated(entry, start, phaseFor(start, entry.durationSeconds, at));
      });
    case 'one-later':
      return list.map((entry) => {
        if (entry.id !== target) return entry;
        const start = entry.startTimeSeconds + back;
        return dated(entry, start, phaseFor(start, entry.durationSeconds, at));
      });
    case 'several-lies':
      return list.flatMap((entry) => {
        const index = targets.indexOf(entry.id);
        if (index === -1) return [entry];
        const knob = hash01(`knob/${index}`, glitch.seed);
        switch (contestLie(glitch, index)) {
          case 'later': {
            const start = entry.startTimeSeconds + Math.round((2 + knob * 46) * HOUR);
            return [dated(entry, start, phaseFor(start, entry.durationSeconds, at))];
          }
          case 'started': {
            const start = t0 - 60 * (1 + Math.floor(knob * 9));
            return [dated(entry, start, phaseFor(start, entry.durationSeconds, at))];
          }
          case 'missing':
            return [];
          case 'finished':
            return [{ ...entry, phase: 'FINISHED' }];
          case 'past':
            return [dated(entry, t0 - Math.round((1 + knob * 5) * HOUR), 'BEFORE')];
        }
      });
    default:
      return list;
  }
}

/** The lie a `several-lies` episode tells of its `index`-th contest. */
export function contestLie(glitch: HourGlitch, index: number): ContestLie {
  return CONTEST_LIES[Math.floor(hash01(`lie/${index}`, glitch.seed) * CONTEST_LIES.length)]!;
}

/** The contest a per-contest lie is about: one starting 1 hour to 3 days after the episode begins (undefined: none). */
export function pickTarget(truth: Truth, glitch: HourGlitch, t: number): number | undefined {
  return pickTargets(truth, glitch, t)[0];
}

/**
 * The contests a per-contest lie is about: one (`one-*`) or two to three (`several-lies`), starting
 * 1 hour to 3 days after the episode begins — in half the episodes (when there is one) a contest
 * whose start the lie lasts until or past, so that the truth returns close to the start or after it.
 */
export function pickTargets(truth: Truth, glitch: HourGlitch, t: number): number[] {
  if (!PER_CONTEST_LIES.has(glitch.kind)) return [];
  const ahead = listAt(truth, t).filter((entry) => entry.startTimeSeconds > t + HOUR && entry.startTimeSeconds < t + 3 * DAY);
  const covered = ahead.filter((entry) => entry.startTimeSeconds <= t + (glitch.length + 1) * HOUR);
  const candidates = covered.length > 0 && hash01('covered', glitch.seed) < 0.5 ? covered : ahead;
  const count = glitch.kind === 'several-lies' ? 2 + Math.floor(hash01('count', glitch.seed) * 2) : 1;
  const picked: number[] = [];
  for (let i = 0; picked.length < Math.min(count, candidates.length); i += 1) {
    const id = candidates[Math.floor(hash01(i === 0 ? 'target' : `target/${i}`, glitch.seed) * candidates.length)]!.id;
    if (!picked.includes(id)) picked.push(id);
  }
  return picked;
}

/** A seeded draw in [0, 1) from a text (the same text and seed, the same draw). */
export function hash01(text: string, seed: number): number {
  let h = (seed ^ 0x811c9dc5) >>> 0;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return prng(h)();
}
