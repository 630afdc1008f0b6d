/**
 * The recorded replies of AtCoder and LeetCode and the synthetic one of CodeChef
 * (test/fixtures/sources/, each with its provenance in a `.meta.json` beside it), with their times
 * shifted by (now − the moment they were recorded), as the Codeforces fixture is shifted
 * (local/codeforces-standin.ts): upcoming contests stay upcoming, running ones running.
 */
import { readFileSync } from 'node:fs';

const FIXTURES = new URL('../test/fixtures/sources/', import.meta.url);

export const FIXTURE_FILES = {
  atcoder: 'atcoder-contests-page-2021-04.html',
  codechef: 'codechef-contests.synthetic.json',
  leetcode: 'leetcode-graphql-allContests-2018-07.json',
} as const;

export type FixturePlatform = keyof typeof FIXTURE_FILES;

export function fixtureText(platform: FixturePlatform): string {
  return readFileSync(new URL(FIXTURE_FILES[platform], FIXTURES), 'utf8');
}

/** When the fixture was recorded (epoch seconds), from its `.meta.json`. */
export function recordedAtSeconds(platform: FixturePlatform): number {
  const meta = FIXTURE_FILES[platform].replace(/\.(html|json)$/, '.meta.json');
  return (JSON.parse(readFileSync(new URL(meta, FIXTURES), 'utf8')) as { recordedAtSeconds: number }).recordedAtSeconds;
}

/** A Cloudflare challenge page, as Cloudflare serves one (with `cf-mitigated: challenge`): what a blocked client gets. */
export const CHALLENGE_PAGE =
  '<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title></head><body><noscript>Enable JavaScript and cookies to continue</noscript><script>window._cf_chl_opt={cType:"managed"};</script></body></html>';

const shiftOf = (platform: FixturePlatform, nowMs: number): number => Math.floor(nowMs / 1000) - recordedAtSeconds(platform);

const pad = (n: number): string => String(n).padStart(2, '0');

/** `seconds` as wall-clock fields in a zone `offsetMinutes` east of UTC. */
function wallClock(seconds: number, offsetMinutes: number) {
  const d = new Date((seconds + offsetMinutes * 60) * 1000);
  return {
    date: `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`,
    time: `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`,
    compact: `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}`,
    day: d.getUTCDate(),
    month: d.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' }),
    year: d.getUTCFullYear(),
  };
}

const JST = 9 * 60;
const IST = 5 * 60 + 30;

/** The AtCoder page with every `<time>` (and its timeanddate link) moved by the shift, in +0900. */
export function atcoderPage(nowMs: number = Date.now()): string {
  const shift = shiftOf('atcoder', nowMs);
  const moved = (date: string, time: string): number => Date.parse(`${date}T${time}+09:00`) / 1000 + shift;
  return fixtureText('atcoder')
    .replace(
      /(<time class='fixtime fixtime-full'>)(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})\+0900(<\/time>)/g,
      (_, open: string, date: string, time: string, close: string) => {
        const at = wallClock(moved(date, time), JST);
        return `${open}${at.date} ${at.time}+0900${close}`;
      },
    )
    .replace(/iso=(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})/g, (_, y: string, mo: string, d: string, h: string, mi: string) => {
      return `iso=${wallClock(moved(`${y}-${mo}-${d}`, `${h}:${mi}:00`), JST).compact}`;
    });
}

interface LeetCodeEntry {
  startTime?: unknown;
  originStartTime?: unknown;
  [key: string]: unknown;
}

/** The LeetCode reply with `startTime` (and `originStartTime`) moved by the shift. */
export function leetcodeReply(nowMs: number = Date.now()): { data: { allContests: LeetCodeEntry[] } } {
  const shift = shiftOf('leetcode', nowMs);
  const reply = JSON.parse(fixtureText('leetcode')) as { data: { allContests: LeetCodeEntry[] } };
  const move = (value: unknown): unknown => (typeof value === 'number' ? value + shift : value);
  reply.data.allContests = reply.data.allContests.map((c) => ({
    ...c,
    startTime: move(c.startTime),
    originStartTime: move(c.originStartTime),
  }));
  return reply;
}

type CodeChefEntry = Record<string, unknown>;
type CodeChefLists = Record<'present_contests' | 'future_contests' | 'past_contests', CodeChefEntry[]> & Record<string, unknown>;

/** One CodeChef contest with its ISO times and IST texts moved by `shift`. */
function movedCodeChef(entry: CodeChefEntry, shift: number): CodeChefEntry {
  const moved = { ...entry };
  for (const [iso, text] of [
    ['contest_start_date_iso', 'contest_start_date'],
    ['contest_end_date_iso', 'contest_end_date'],
  ] as const) {
    const value = entry[iso];
    if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) continue;
    const at = wallClock(Date.parse(value) / 1000 + shift, IST);
    moved[iso] = `${at.date}T${at.time}+05:30`;
    if (typeof entry[text] === 'string') moved[text] = `${pad(at.day)} ${at.month} ${at.year}  ${at.time}`;
  }
  return moved;
}

/** The synthetic CodeChef reply with every contest's times moved by the shift. */
export function codechefReply(nowMs: number = Date.now()): CodeChefLists {
  const shift = shiftOf('codechef', nowMs);
  const reply = JSON.parse(fixtureText('codechef')) as CodeChefLists;
  for (const list of ['present_contests', 'future_contests', 'past_contests'] as const) {
    reply[list] = reply[list].map((entry) => movedCodeChef(entry, shift));
  }
  return reply;
}
