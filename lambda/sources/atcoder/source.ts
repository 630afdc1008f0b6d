/**
 * AtCoder's contests page (`https://atcoder.jp/contests/?lang=en`) as a reply of the model, pure
 * (docs/sources.md, "AtCoder"). AtCoder has no API: the page's upcoming, running and recent tables
 * give each contest's phase (checked against its times), start (printed with its `+0900` offset),
 * duration (`HH:MM`, more hours for long contests) and rated range; the id is the last segment of
 * the link `/contests/<id>`. A page without the tables it expects is a failed reply, never an empty list.
 */
import { failed, header, snippet, statusProblem, type Outcome, type RawReply } from '../http/policy.js';
import { describeIssue, listedReply, safeId, type ListedReply, type Reading } from '../listing.js';
import type { Phase } from '../source.js';
import { parseZonedTime } from '../time.js';
import { readPage, TABLE_IDS, type PageRow, type TableName } from './page.js';
import { CONTEST_HREF, DURATION_PATTERN, pageSchema, rowSchema } from './schema.js';

export const PLATFORM = 'atcoder';
export const LABEL = 'AtCoder';

const PHASE_OF: Record<TableName, Phase> = { upcoming: 'BEFORE', action: 'CODING', recent: 'FINISHED' };
const SERIES = /^(abc|arc|agc|ahc)\d+$/;

export const contestUrl = (id: string): string => `https://atcoder.jp/contests/${id}`;

/** The rated column: `-` (unrated), `All`, or a range ` ~ 1999`, `1200 ~ `, `1200 ~ 2799`. */
export type Rated = { kind: 'unrated' } | { kind: 'all' } | { kind: 'range'; min?: number; max?: number } | { kind: 'unknown' };

export function parseRated(text: string): Rated {
  const value = text.trim();
  if (value === '-' || value === '') return { kind: 'unrated' };
  if (/^all$/i.test(value)) return { kind: 'all' };
  const range = /^(\d{1,5})?\s*[~～]\s*(\d{1,5})?$/.exec(value);
  if (range === null || (range[1] === undefined && range[2] === undefined)) return { kind: 'unknown' };
  return {
    kind: 'range',
    ...(range[1] === undefined ? {} : { min: Number(range[1]) }),
    ...(range[2] === undefined ? {} : { max: Number(range[2]) }),
  };
}

/** `HH:MM` in seconds (`240:00` is ten days); undefined if it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION_PATTERN.exec(text.trim());
  return match === null ? undefined : Number(match[1]) * 3600 + Number(match[2]) * 60;
}

/** The series of a numbered round (`ABC`, `ARC`, `AGC`, `AHC`), else `rated` or `unrated` by the rated column. */
export function contestType(id: string, rated: Rated): string {
  const series = SERIES.exec(id);
  if (series !== null) return series[1]!.toUpperCase();
  return rated.kind === 'all' || rated.kind === 'range' ? 'rated' : 'unrated';
}

/** One row of a table as the model reads it: a contest in the table's phase, or why it is not one. */
export function rowReading(raw: PageRow, phase: Phase): Reading {
  const platformId = safeId(CONTEST_HREF.exec(raw.href ?? '')?.[1]);
  const withId = platformId === undefined ? {} : { platformId };
  const row = rowSchema.safeParse(raw);
  if (!row.success) return { kind: 'invalid', why: describeIssue(row.error), ...withId };
  const start = parseZonedTime(row.data.time);
  if (start === undefined) return { kind: 'invalid', why: `time: not a calendar time: ${row.data.time.slice(0, 40)}`, ...withId };
  const id = CONTEST_HREF.exec(row.data.href)![1]!;
  const candidate = {
    platformId: id,
    name: row.data.name,
    type: contestType(id, parseRated(row.data.rated)),
    phase,
    startTimeSeconds: start,
    durationSeconds: parseDuration(row.data.duration)!,
    url: contestUrl(id),
  };
  return { kind: 'contest', candidate };
}

/** Why a complete 2xx reply is not the contests page at all, or undefined. */
function notThePage(reply: RawReply): Outcome<never> | undefined {
  const first = `first 80 bytes: ${snippet(reply.body)}`;
  if (reply.body.trim() === '') return failed('empty', `${LABEL} replied with an empty body (HTTP ${reply.statusCode})`);
  const type = header(reply.headers, 'content-type');
  if (type !== undefined && !/html/i.test(type))
    return failed('markup', `${LABEL} replied with ${type.slice(0, 60)}, not the contests page (${first})`);
  // A page cut short can still parse (HTML parsers close what is open) and list fewer rows.
  if (!/<\/html>\s*$/i.test(reply.body.slice(-1024))) return failed('markup', `${LABEL} page is truncated: it does not end with </html>`);
  return undefined;
}

/** The reply as the page's contests, or why it cannot be believed whole. */
export function readAtCoderReply(reply: RawReply, receivedAtMs: number, options: { maxInvalidShare?: number } = {}): Outcome<ListedReply> {
  const refused = statusProblem(reply, LABEL, receivedAtMs);
  if (refused !== undefined) return { ok: false, problem: refused };
  const notPage = notThePage(reply);
  if (notPage !== undefined) return notPage;
  const page = pageSchema.safeParse(readPage(reply.body));
  if (!page.success) {
    const missing = page.error.issues.map((issue) => `#${TABLE_IDS[issue.path[0] as TableName]} (${issue.message})`).join(', ');
    return failed('markup', `${LABEL} page lacks the tables it always has: ${missing} (markup changed, or a login or error page)`);
  }
  const { upcoming, action = [], recent } = page.data;
  const rows: [PageRow, Phase][] = [
    ...upcoming.map((row) => [row, PHASE_OF.upcoming] as [PageRow, Phase]),
    ...action.map((row) => [row, PHASE_OF.action] as [PageRow, Phase]),
    ...recent.map((row) => [row, PHASE_OF.recent] as [PageRow, Phase]),
  ];
  const read = (entry: unknown): Reading => rowReading(...(entry as [PageRow, Phase]));
  return listedReply(reply, receivedAtMs, () => rows, read, { platform: PLATFORM, label: LABEL, ...options });
}
