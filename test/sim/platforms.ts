/**
 * The simulated year's other platforms (docs/simulation.md, "Four sources"): AtCoder, CodeChef and
 * LeetCode, each a truth of its own drawn from what the platform's schedule did (docs/sources.md;
 * three years of recorded schedules), and the reply each platform makes of it at a moment — AtCoder's
 * contests page (HTML), CodeChef's contest list (JSON), LeetCode's GraphQL `allContests` (JSON) — so
 * that each source's own client and mapping read it. Pure: no I/O.
 *
 * A contest of these truths has a number of the simulation's own (the checker's key) and its
 * platform's id (`abc400`, `START170A`, `weekly-contest-530`); `SimIds` turns one into the other.
 */
import { prng } from '../chaos/faults.js';
import {
  DAY,
  HOUR,
  MINUTE,
  WEEK,
  durationAt,
  listedAt,
  nameAt,
  startAt,
  type Truth,
  type TruthChange,
  type TruthContest,
} from './truth.js';

export const SOURCES = ['codeforces', 'atcoder', 'codechef', 'leetcode'] as const;
export type SourceName = (typeof SOURCES)[number];
export type SidePlatform = Exclude<SourceName, 'codeforces'>;
export const SIDE_PLATFORMS: readonly SidePlatform[] = ['atcoder', 'codechef', 'leetcode'];

/** The first simulation number of each platform's contests (Codeforces' own numbers stay below 1,000,000). */
const BASE: Record<SidePlatform, number> = { atcoder: 1_000_000, codechef: 2_000_000, leetcode: 3_000_000 };

/** A truth of one platform: its contests' platform ids beside the simulation's numbers. */
export interface PlatformTruth extends Truth {
  platform: SidePlatform;
  platformIds: Map<number, string>;
  /** CodeChef's rounds listed before they have a date: the code, its sliding start, from when until dated. */
  placeholders: { id: number; from: number; until: number; starts: { at: number; value: number }[] }[];
  /**
   * Listings wrong about a start the truth kept (CodeChef's AM/PM error: 12 hours earlier, back a
   * week later): from `from` until `until` the reply lists the contest `by` seconds off.
   */
  misdated: { id: number; from: number; until: number; by: number }[];
}

/** The listings wrong at `t` about their contest's start (`PlatformTruth.misdated`). */
function misdatedEntriesAt(truth: PlatformTruth, t: number): PlatformTruth['misdated'] {
  return truth.misdated.filter((m) => m.from <= t && t < m.until);
}

/** The contests whose listing at `t` is wrong about their start. */
export function misdatedAt(truth: PlatformTruth, t: number): number[] {
  return misdatedEntriesAt(truth, t).map((m) => m.id);
}

/** Qualified ids (`atcoder:abc400`) and the simulation's numbers, both ways. Codeforces' numbers are their own. */
export class SimIds {
  private readonly toQualified = new Map<number, string>();
  private readonly toNumber = new Map<string, number>();
  add(truth: PlatformTruth): void {
    for (const [n, id] of truth.platformIds) {
      const qualified = `${truth.platform}:${id}`;
      this.toQualified.set(n, qualified);
      this.toNumber.set(qualified, n);
    }
  }
  qualified(n: number): string {
    return this.toQualified.get(n) ?? `codeforces:${n}`;
  }
  /** The number of a qualified id or a row key (`atcoder:abc400#07`); NaN if no contest of the run has it. */
  number(key: unknown): number {
    const text = String(key).replace(/#\d{2}$/, '');
    const known = this.toNumber.get(text);
    if (known !== undefined) return known;
    const match = /^codeforces:([1-9][0-9]*)$/.exec(text);
    return match === null ? Number.NaN : Number(match[1]);
  }
  platformOf(n: number): SourceName {
    for (const platform of SIDE_PLATFORMS) if (n >= BASE[platform] && n < BASE[platform] + 1_000_000) return platform;
    return 'codeforces';
  }
}

interface Draft {
  platformId: string;
  name: string;
  type: string;
  start: number;
  duration: number;
  /** Days before its start it is posted. */
  leadDays: [number, number];
}

interface Builder {
  contest: TruthContest;
  platformId: string;
}

/**
 * A platform's truth over `days` from `yearStart` (contests from four weeks before it, so that the
 * first replies have finished rounds too), with its own honest churn.
 */
export function buildPlatformTruth(platform: SidePlatform, options: { seed: number; days: number; yearStart: number }): PlatformTruth {
  const random = prng(options.seed ^ { atcoder: 0x6174_6364, codechef: 0x6363_6866, leetcode: 0x6c63_6f64 }[platform]);
  const end = options.yearStart + options.days * DAY;
  const first = options.yearStart - 4 * WEEK;
  const drafts = DRAFTS[platform](first, end + 5 * WEEK);
  const between = (lo: number, hi: number): number => lo + random() * (hi - lo);
  const onHour = (t: number): number => Math.floor(t / HOUR) * HOUR;
  const builders: Builder[] = drafts.map((draft, index) => {
    const announcedAt = onHour(draft.start - between(draft.leadDays[0], draft.leadDays[1]) * DAY);
    return {
      platformId: draft.platformId,
      contest: {
        id: BASE[platform] + index,
        type: draft.type,
        announcedAt,
        starts: [{ at: announcedAt, value: draft.start }],
        durations: [{ at: announcedAt, value: draft.duration }],
        names: [{ at: announcedAt, value: draft.name }],
        withdrawals: [],
        pendingSeconds: 0,
        systemTestSeconds: 0,
        retests: [],
      },
    };
  });
  const changes: TruthChange[] = [];
  const change = (b: Builder, at: number, kind: TruthChange['kind'], near = false, mass = false): void => {
    if (at >= options.yearStart && at < end) changes.push({ at, kind, contestId: b.contest.id, mass, near });
  };
  const move = (b: Builder, at: number, to: number, near = false): void => {
    b.contest.starts.push({ at, value: to });
    change(b, at, 'reschedule', near);
  };
  const placeholders: PlatformTruth['placeholders'] = [];
  const misdated: PlatformTruth['misdated'] = [];
  // Rounds of one CodeChef Starters (its division children) change together.
  const groups = new Map<string, Builder[]>();
  for (const b of builders) {
    const key = platform === 'codechef' ? b.platformId.replace(/[A-D]$/, '') : b.platformId;
    groups.set(key, [...(groups.get(key) ?? []), b]);
  }
  for (const group of groups.values()) {
    const head = group[0]!;
    const start = head.contest.starts[0]!.value;
    const posted = head.contest.announcedAt;
    // A round's division children are posted together.
    for (const b of group) {
      b.contest.announcedAt = posted;
      for (const versions of [b.contest.starts, b.contest.durations, b.contest.names]) versions[0]!.at = posted;
    }
    const draw = random();
    if (platform === 'atcoder') {
      // 30 changes in three years of ~150 rounds a year: +24 h about 12 days ahead, −7 days, −60 min and back within 3 h.
      if (draw < 0.025) {
        const at = onHour(start - between(10, 14) * DAY);
        if (at > posted) move(head, at, start + DAY);
      } else if (draw < 0.04) {
        const at = onHour(start - between(9, 12) * DAY);
        if (at > posted) move(head, at, start - WEEK);
      } else if (draw < 0.07) {
        const at = onHour(start - between(1, 5) * DAY);
        if (at > posted) {
          move(head, at, start - HOUR);
          move(head, at + Math.ceil(between(1, 3)) * HOUR, start);
        }
      }
    } else if (platform === 'codechef') {
      // Placeholders "(Date to be decided)" listed 3–5 weeks ahead, their start sliding ±7 days week by week, dated 7–14 days ahead.
      if (draw < 0.4) {
        const from = onHour(start - between(21, 35) * DAY);
        const slides: { at: number; value: number }[] = [];
        for (let at = from, shift = 0; at < posted; at += WEEK) {
          slides.push({ at, value: start + shift * WEEK });
          shift = Math.max(-1, Math.min(1, shift + (random() < 0.5 ? -1 : 1)));
        }
        if (slides.length > 0) for (const b of group) placeholders.push({ id: b.contest.id, from, until: posted, starts: slides });
      }
      const more = random();
      if (more < 0.01) {
        // An upstream AM/PM error: listed 12 hours earlier, and right again a week later. The
        // round itself never moved: the truth keeps its start, the replies of that week are wrong.
        const at = onHour(start - between(8, 12) * DAY);
        if (at > posted) for (const b of group) misdated.push({ id: b.contest.id, from: at, until: at + WEEK, by: -12 * HOUR });
      } else if (more < 0.2) {
        // Durations raised a day or two before the start.
        const at = onHour(start - between(1, 2) * DAY);
        const raised = Math.ceil(between(1, 4)) * 30 * MINUTE;
        if (at > posted)
          for (const b of group) {
            b.contest.durations.push({ at, value: b.contest.durations[0]!.value + raised });
            change(b, at, 'duration');
          }
      } else if (more < 0.25 && group.length > 1) {
        // Division children removed together, and added again 1–3 days later.
        const at = onHour(between(posted + HOUR, start - 3 * DAY));
        const relistAt = onHour(Math.min(at + between(1, 3) * DAY, start - HOUR));
        if (at > posted && relistAt > at)
          for (const b of group) {
            b.contest.withdrawals.push({ at, relistAt });
            change(b, at, 'withdraw', false, true);
            change(b, relistAt, 'relist', false, true);
          }
      } else if (more < 0.3) {
        // A code and its title disagreeing (START102 titled "Starters 101"), corrected later.
        const at = onHour(between(posted + HOUR, start - HOUR));
        for (const b of group) {
          const name = b.contest.names[0]!.value;
          b.contest.names[0] = { at: posted, value: name.replace(/Starters (\d+)/, (_, n: string) => `Starters ${Number(n) - 1}`) };
          b.contest.names.push({ at, value: name });
          change(b, at, 'rename');
        }
      }
    }
    // LeetCode: no change in three years.
  }
  const contests = builders.map((b) => b.contest);
  return {
    platform,
    yearStart: options.yearStart,
    end,
    contests,
    changes: changes.sort((a, b) => a.at - b.at),
    platformIds: new Map(builders.map((b) => [b.contest.id, b.platformId])),
    placeholders,
    misdated,
  };
}

/** Every `period` from the first `offset` (seconds into the week of `first`'s Monday) up to `end`. */
function every(first: number, end: number, offset: number, period: number): number[] {
  const monday = Math.floor((first - 4 * DAY) / WEEK) * WEEK + 4 * DAY; // epoch day 0 was a Thursday
  const out: number[] = [];
  for (let t = monday + offset; t < end; t += period) if (t >= first) out.push(t);
  return out;
}

const DRAFTS: Record<SidePlatform, (first: number, end: number) => Draft[]> = {
  // ABC every Saturday 21:00 JST (100 min), ARC every other Sunday 21:00 JST (120 min), AGC every
  // eight weeks (180 min), AHC every four weeks on a Saturday 12:00 JST (4 h); posted 2–5 weeks ahead.
  atcoder: (first, end) => {
    const drafts: Draft[] = [];
    const lead: [number, number] = [14, 35];
    every(first, end, 5 * DAY + 12 * HOUR, WEEK).forEach((start, n) =>
      drafts.push({
        platformId: `abc${400 + n}`,
        name: `AtCoder Beginner Contest ${400 + n}`,
        type: 'ABC',
        start,
        duration: 100 * MINUTE,
        leadDays: lead,
      }),
    );
    every(first, end, 6 * DAY + 12 * HOUR, 2 * WEEK).forEach((start, n) =>
      drafts.push({
        platformId: `arc${190 + n}`,
        name: `AtCoder Regular Contest ${190 + n}`,
        type: 'ARC',
        start,
        duration: 120 * MINUTE,
        leadDays: lead,
      }),
    );
    every(first, end, 6 * DAY + 12 * HOUR + WEEK, 8 * WEEK).forEach((start, n) =>
      drafts.push({
        platformId: `agc${72 + n}`,
        name: `AtCoder Grand Contest ${72 + n}`,
        type: 'AGC',
        start,
        duration: 180 * MINUTE,
        leadDays: lead,
      }),
    );
    every(first, end, 5 * DAY + 3 * HOUR, 4 * WEEK).forEach((start, n) =>
      drafts.push({
        platformId: `ahc${50 + n}`,
        name: `AtCoder Heuristic Contest ${50 + n}`,
        type: 'AHC',
        start,
        duration: 4 * HOUR,
        leadDays: lead,
      }),
    );
    return drafts;
  },
  // Starters every Wednesday 20:00 IST (120 min), four division children each; dated 7–14 days ahead.
  codechef: (first, end) =>
    every(first, end, 2 * DAY + 14 * HOUR + 30 * MINUTE, WEEK).flatMap((start, n) =>
      ['A', 'B', 'C', 'D'].map((division, d) => ({
        platformId: `START${170 + n}${division}`,
        name: `Starters ${170 + n} (Div. ${d + 1})`,
        type: 'rated',
        start,
        duration: 120 * MINUTE,
        leadDays: [7, 14] as [number, number],
      })),
    ),
  // Weekly every Sunday 02:30 UTC, biweekly every other Saturday 14:30 UTC (90 min each); listed 1–2 weeks ahead.
  leetcode: (first, end) => [
    ...every(first, end, 6 * DAY + 2 * HOUR + 30 * MINUTE, WEEK).map((start, n) => ({
      platformId: `weekly-contest-${530 + n}`,
      name: `Weekly Contest ${530 + n}`,
      type: 'weekly',
      start,
      duration: 90 * MINUTE,
      leadDays: [7, 14] as [number, number],
    })),
    ...every(first, end, 5 * DAY + 14 * HOUR + 30 * MINUTE, 2 * WEEK).map((start, n) => ({
      platformId: `biweekly-contest-${160 + n}`,
      name: `Biweekly Contest ${160 + n}`,
      type: 'biweekly',
      start,
      duration: 90 * MINUTE,
      leadDays: [7, 14] as [number, number],
    })),
  ],
};

interface Listed {
  platformId: string;
  name: string;
  start: number;
  duration: number;
}

/** The truth's contests listed at `t`, by phase: not started, running, finished (newest first). */
function listedBy(truth: PlatformTruth, t: number): { upcoming: Listed[]; running: Listed[]; finished: Listed[] } {
  const out = { upcoming: [] as Listed[], running: [] as Listed[], finished: [] as Listed[] };
  const misdatedNow = misdatedEntriesAt(truth, t);
  for (const contest of truth.contests) {
    if (!listedAt(contest, t)) continue;
    const misdated = misdatedNow.find((m) => m.id === contest.id);
    const entry = {
      platformId: truth.platformIds.get(contest.id)!,
      name: nameAt(contest, t),
      start: startAt(contest, t) + (misdated?.by ?? 0),
      duration: durationAt(contest, t),
    };
    if (t < entry.start) out.upcoming.push(entry);
    else if (t < entry.start + entry.duration) out.running.push(entry);
    else out.finished.push(entry);
  }
  out.upcoming.sort((a, b) => a.start - b.start);
  out.finished.sort((a, b) => b.start - a.start);
  return out;
}

/** `2027-01-09 21:00:00+0900`, or `+05:30` in ISO form: a moment printed at a zone's offset. */
function zoned(seconds: number, offsetMinutes: number, iso: boolean): string {
  const local = new Date((seconds + offsetMinutes * 60) * 1000).toISOString().slice(0, 19);
  const sign = offsetMinutes >= 0 ? '+' : '-';
  const hh = String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, '0');
  const mm = String(Math.abs(offsetMinutes) % 60).padStart(2, '0');
  return iso ? `${local}${sign}${hh}:${mm}` : `${local.replace('T', ' ')}${sign}${hh}${mm}`;
}

const escapeHtml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** AtCoder's contests page at `t`: the running, upcoming and recent (latest 50) tables, rows as the real page has them. */
export function atcoderPage(truth: PlatformTruth, t: number): string {
  const { upcoming, running, finished } = listedBy(truth, t);
  const row = (c: Listed): string => {
    const minutes = Math.round(c.duration / 60);
    const rated = c.platformId.startsWith('abc') ? ' ~ 1999' : c.platformId.startsWith('arc') ? ' ~ 2799' : 'All';
    return `<tr>
<td class="text-center"><a href='http://www.timeanddate.com/worldclock/fixedtime.html?iso=x&p1=248' target='blank'><time class='fixtime fixtime-full'>${zoned(c.start, 540, false)}</time></a></td>
<td ><span aria-hidden='true' data-toggle='tooltip' title="Algorithm">Ⓐ</span> <span class="user-blue">◉</span> <a href="/contests/${c.platformId}">${escapeHtml(c.name)}</a></td>
<td class="text-center">${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}</td>
<td class="text-center">${rated}</td>
</tr>`;
  };
  const section = (id: string, rows: Listed[]): string =>
    `<div id="${id}"><h3>${id}</h3><div class="panel panel-default"><div class="table-responsive"><table class="table table-default table-striped table-hover table-condensed table-bordered small">
<thead><tr><th width="20%">Start Time</th><th>Contest Name</th><th width="8%">Duration</th><th width="12%">Rated Range</th></tr></thead>
<tbody>${rows.map(row).join('\n')}</tbody></table></div></div></div>`;
  const parts = [
    ...(running.length > 0 ? [section('contest-table-action', running)] : []),
    section('contest-table-upcoming', upcoming),
    section('contest-table-recent', finished.slice(0, 50)),
  ];
  return `<!DOCTYPE html>\n<html>\n<head><title>Contest - AtCoder</title></head>\n<body>\n${parts.join('\n<hr>\n')}\n</body>\n</html>\n`;
}

/** CodeChef's contest list at `t` (placeholders "(Date to be decided)" among the future ones, their starts sliding). */
export function codechefList(truth: PlatformTruth, t: number): string {
  const { upcoming, running, finished } = listedBy(truth, t);
  const entry = (c: Listed) => ({
    contest_code: c.platformId,
    contest_name: c.name,
    contest_start_date: new Date((c.start + 330 * 60) * 1000).toUTCString(),
    contest_end_date: new Date((c.start + c.duration + 330 * 60) * 1000).toUTCString(),
    contest_start_date_iso: zoned(c.start, 330, true),
    contest_end_date_iso: zoned(c.start + c.duration, 330, true),
    contest_duration: String(Math.round(c.duration / 60)),
    distinct_users: 0,
  });
  const placeholders: Listed[] = [];
  for (const p of truth.placeholders) {
    if (t < p.from || t >= p.until) continue;
    let start = p.starts[0]!.value;
    for (const slide of p.starts) if (slide.at <= t) start = slide.value;
    const id = truth.platformIds.get(p.id)!;
    placeholders.push({ platformId: id, name: `Starters ${id.replace(/\D/g, '')} (Date to be decided)`, start, duration: 2 * HOUR });
  }
  return JSON.stringify({
    status: 'success',
    message: 'All contests list',
    present_contests: running.map(entry),
    future_contests: [...upcoming, ...placeholders].sort((a, b) => a.start - b.start).map(entry),
    past_contests: finished.slice(0, 20).map(entry),
  });
}

/** LeetCode's GraphQL `allContests` at `t`: every contest it lists, newest first. */
export function leetcodeReply(truth: PlatformTruth, t: number): string {
  const { upcoming, running, finished } = listedBy(truth, t);
  const all = [...upcoming, ...running, ...finished].sort((a, b) => b.start - a.start);
  return JSON.stringify({
    data: {
      allContests: all.map((c) => ({
        containsPremium: false,
        title: c.name,
        titleSlug: c.platformId,
        startTime: c.start,
        duration: c.duration,
        originStartTime: c.start,
        isVirtual: false,
      })),
    },
  });
}
