/**
 * What tests do to the AtCoder, CodeChef and LeetCode replies the local stand-ins serve
 * (local/source-standins.ts): the markup or envelope changed, entries added (at and past the
 * contract's bounds), one entry's start without its offset. Pure.
 */
import type { StandinPlatform } from '../../local/source-standins.js';

const pad = (n: number) => String(n).padStart(2, '0');

/** `seconds` as `YYYY-MM-DD<sep>HH:MM:SS` on the wall clock of a zone `offsetMinutes` east of UTC. */
function wallClock(seconds: number, offsetMinutes: number, sep: string): string {
  const d = new Date((seconds + offsetMinutes * 60) * 1000);
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  return `${date}${sep}${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

export interface Entry {
  id: string;
  name: string;
  startSeconds: number;
}

export type Body = string | Record<string, any>;

/** What a test does to a platform's body (the stand-in's, local/source-standins.ts). */
export interface SourceBodies {
  /** The markup or JSON envelope changed, and what the error says of it. */
  otherShape(body: Body): Body;
  shapeError: RegExp;
  withEntries(body: Body, entries: Entry[]): Body;
  withoutOffset(body: Body, platformId: string): Body;
}

const copy = <T>(value: T): T => structuredClone(value);

export const SOURCE_BODIES: Record<StandinPlatform, SourceBodies> = {
  atcoder: {
    otherShape: (body) => (body as string).replace(/id="contest-table-/g, 'id="contest-list-'),
    shapeError: /^AtCoderError: AtCoder page lacks the tables it always has: #contest-table-upcoming/,
    withEntries(body, entries) {
      const page = body as string;
      const at = page.indexOf('</tbody>', page.indexOf('id="contest-table-upcoming"'));
      const rows = entries.map(
        (e) =>
          `<tr><td class="text-center"><time class='fixtime fixtime-full'>${wallClock(e.startSeconds, 540, ' ')}+0900</time></td>` +
          `<td><a href="/contests/${e.id}">${e.name}</a></td><td class="text-center">01:40</td><td class="text-center">-</td></tr>`,
      );
      return page.slice(0, at) + rows.join('') + page.slice(at);
    },
    withoutOffset(body, platformId) {
      return (body as string)
        .split('<tr>')
        .map((row) => (row.includes(`href="/contests/${platformId}"`) ? row.replace(/(fixtime-full'>[^<]*)\+0900</, '$1<') : row))
        .join('<tr>');
    },
  },
  codechef: {
    otherShape: (body) => {
      const { future_contests: future, ...rest } = copy(body) as Record<string, unknown>;
      return { ...rest, present_contests: undefined, data: { upcoming: future } };
    },
    shapeError: /^CodeChefError: CodeChef reply is not its contest list: present_contests: /,
    withEntries(body, entries) {
      const reply = copy(body) as Record<string, any>;
      for (const e of entries) {
        reply.future_contests.push({
          contest_code: e.id,
          contest_name: e.name,
          contest_start_date_iso: `${wallClock(e.startSeconds, 330, 'T')}+05:30`,
          contest_end_date_iso: `${wallClock(e.startSeconds + 7200, 330, 'T')}+05:30`,
          contest_duration: '120',
          distinct_users: 0,
        });
      }
      return reply;
    },
    withoutOffset(body, platformId) {
      const reply = copy(body) as Record<string, any>;
      for (const list of ['present_contests', 'future_contests', 'past_contests']) {
        for (const entry of reply[list] ?? []) {
          if (entry.contest_code === platformId)
            entry.contest_start_date_iso = String(entry.contest_start_date_iso).replace(/[+-]\d{2}:\d{2}$/, '');
        }
      }
      return reply;
    },
  },
  leetcode: {
    otherShape: (body) => ({ data: { contests: (copy(body) as Record<string, any>).data.allContests } }),
    shapeError: /^LeetCodeError: LeetCode reply is not an allContests answer: data\.allContests: /,
    withEntries(body, entries) {
      const reply = copy(body) as Record<string, any>;
      for (const e of entries) reply.data.allContests.push({ title: e.name, titleSlug: e.id, startTime: e.startSeconds, duration: 5400 });
      return reply;
    },
    withoutOffset(body, platformId) {
      const reply = copy(body) as Record<string, any>;
      for (const entry of reply.data.allContests) {
        if (entry.titleSlug === platformId) entry.startTime = wallClock(entry.startTime as number, 0, ' ');
      }
      return reply;
    },
  },
};
