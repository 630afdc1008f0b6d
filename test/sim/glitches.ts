/**
 * The glitch schedule of a simulated year: at most one glitch per hourly interval, drawn up front
 * from the seed (pure: no I/O). A Codeforces glitch shapes the replies of that hour's runs; a run
 * glitch shapes the invocations (duplicate delivery, a crash mid-run, DynamoDB faults).
 */
import { prng } from '../chaos/faults.js';

export const CODEFORCES_GLITCHES = [
  /** One attempt answered 503, the next one honest. */
  'http-503',
  /** One attempt timed out, the next one honest. */
  'timeout',
  /** One attempt answered `{"status":"FAILED","comment":"Call limit exceeded"}`, the next one honest. */
  'call-limit',
  /** Every attempt of every run fails (503 or timeouts) for 1–3 hours: the runs and their retries fail. */
  'outage',
  /** `{"status":"OK","result":[]}` to the first run of the hour. */
  'empty',
  /** A body cut in the middle (not JSON) to the first run of the hour. */
  'truncated',
  /** 30–70 % of the entries left out (the upcoming ones among them) in the first run's reply (1–2 hours running). */
  'partial',
  /** Every contest listed FINISHED with its start moved hours into the past, in the first run's reply (1–2 hours running). */
  'all-finished',
  /** The upcoming contests' starts moved 1–6 hours into the past, phase BEFORE, in the first run's reply (1–2 hours running). */
  'starts-past',
] as const;
export type CodeforcesGlitch = (typeof CODEFORCES_GLITCHES)[number];

export const RUN_GLITCHES = [
  /** The scheduled event delivered twice, both at once. */
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

/** Probability per hour of each glitch (an outage is an episode of 1–3 hours). */
export const DEFAULT_GLITCH_RATES: Record<Glitch, number> = {
  'http-503': 0.005,
  timeout: 0.003,
  'call-limit': 0.005,
  outage: 0.002,
  empty: 0.003,
  truncated: 0.003,
  partial: 0.004,
  'all-finished': 0.002,
  'starts-past': 0.002,
  duplicate: 0.01,
  crash: 0.005,
  'dynamo-throttle': 0.004,
  'dynamo-conflict': 0.004,
  'dynamo-500': 0.004,
};

/** Harmful replies that may be served in two consecutive hours. */
const REPEATED_REPLIES: ReadonlySet<Glitch> = new Set(['partial', 'all-finished', 'starts-past']);

export interface HourGlitch {
  kind: Glitch;
  /** `crash`: DynamoDB requests the invocation makes before it dies (1–3: before the read, before the write, before the release). */
  crashAfter?: number;
  /** `partial`: the share of entries kept. */
  keep?: number;
  /** `all-finished`, `starts-past`: how far starts move into the past (seconds). */
  backSeconds?: number;
  /** Seed of the per-request draws of this hour (DynamoDB fault policy, partial list). */
  seed: number;
  /** The first hour of the episode: a repeated harmful reply is the same reply (a stale cache). */
  fromHour: number;
}

/** The glitch of each hour (undefined: a quiet hour). Hour 0 is always quiet (the first sync). */
export function glitchSchedule(
  seed: number,
  hours: number,
  rates: Partial<Record<Glitch, number>> = {},
  options: { alwaysRepeatHarmful?: boolean } = {},
): (HourGlitch | undefined)[] {
  const random = prng(seed ^ 0x676c_6974);
  const all = { ...DEFAULT_GLITCH_RATES, ...rates };
  const kinds = Object.keys(all) as Glitch[];
  const out: (HourGlitch | undefined)[] = new Array<HourGlitch | undefined>(hours).fill(undefined);
  for (let hour = 1; hour < hours; hour += 1) {
    const draw = random();
    const extra = { seed: Math.floor(random() * 2 ** 31), knob: random() };
    if (out[hour] !== undefined) continue;
    let acc = 0;
    for (const kind of kinds) {
      acc += all[kind];
      if (draw >= acc) continue;
      // A wrong reply is served at most twice in a row: three in a row is, by design, evidence the
      // model accepts (acceptHeldAfterReplies = 3, missingSyncsBeforeDelete = 3). So no harmful reply
      // right after one.
      if (REPEATED_REPLIES.has(kind) && hour > 0 && out[hour - 1] !== undefined && REPEATED_REPLIES.has(out[hour - 1]!.kind)) break;
      const glitch: HourGlitch = { kind, seed: extra.seed, fromHour: hour };
      if (kind === 'crash') glitch.crashAfter = 1 + Math.floor(extra.knob * 3);
      if (kind === 'partial') glitch.keep = 0.3 + extra.knob * 0.4;
      if (kind === 'all-finished' || kind === 'starts-past') glitch.backSeconds = Math.round((1 + extra.knob * 5) * 3600);
      out[hour] = glitch;
      // Episodes: an outage lasts 1–3 hours; a harmful reply is served again the next hour half of
      // the time (a stale cache: the same wrong list twice, the same evidence in consecutive replies).
      const length = kind === 'outage' ? 1 + Math.floor(extra.knob * 3) : REPEATED_REPLIES.has(kind) ? (options.alwaysRepeatHarmful === true ? 2 : 1 + (extra.seed % 2)) : 1;
      for (let next = hour + 1; next < Math.min(hours, hour + length); next += 1) out[next] = { ...glitch, seed: kind === 'outage' ? extra.seed + next : extra.seed };
      break;
    }
  }
  return out;
}

export function isCodeforcesGlitch(kind: Glitch): kind is CodeforcesGlitch {
  return (CODEFORCES_GLITCHES as readonly string[]).includes(kind);
}

/** Every rate zero: a quiet year (only honest churn). */
export const NO_GLITCHES: Record<Glitch, number> = Object.fromEntries(Object.keys(DEFAULT_GLITCH_RATES).map((kind) => [kind, 0])) as Record<Glitch, number>;

/** The replies that would harm the app, often (several a week each): the broken variants' runs. */
export const HARMFUL_GLITCHES: Partial<Record<Glitch, number>> = { 'all-finished': 0.05, 'starts-past': 0.05, partial: 0.02 };

/** Every glitch but the harmful replies: what the code before the model already survives. */
export const BENIGN_GLITCHES: Partial<Record<Glitch, number>> = { partial: 0, 'all-finished': 0, 'starts-past': 0 };
