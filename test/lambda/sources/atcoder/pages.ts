/** Small AtCoder pages built like the real one: the sections, their tables, rows of four cells. */

export interface TestRow {
  time?: string;
  id?: string;
  name?: string;
  duration?: string;
  rated?: string;
}

const DEFAULT_ROW: Required<TestRow> = {
  time: '2025-06-07 21:00:00+0900',
  id: 'abc400',
  name: 'AtCoder Beginner Contest 400',
  duration: '01:40',
  rated: ' ~ 1999',
};

const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

export function row(overrides: TestRow = {}): string {
  const r = { ...DEFAULT_ROW, ...overrides };
  return `<tr>
    <td class="text-center"><a href='http://www.timeanddate.com/worldclock/fixedtime.html?p1=248' target='blank'><time class='fixtime fixtime-full'>${r.time}</time></a></td>
    <td ><span class="user-blue">◉</span> <a href="/contests/${r.id}">${escape(r.name)}</a></td>
    <td class="text-center">${r.duration}</td>
    <td class="text-center">${r.rated}</td>
  </tr>`;
}

function section(id: string, rows: string[]): string {
  return `<div id="${id}"><h3>${id}</h3><div class="panel panel-default"><div class="table-responsive">
  <table class="table"><thead><tr><th>Start Time</th><th>Contest Name</th><th>Duration</th><th>Rated Range</th></tr></thead>
  <tbody>${rows.join('\n')}</tbody></table></div></div></div>`;
}

/** A page with the given sections (`undefined`: the section is absent); ids may be renamed. */
export function page(
  sections: { upcoming?: string[]; action?: string[]; recent?: string[] },
  ids = { upcoming: 'contest-table-upcoming', action: 'contest-table-action', recent: 'contest-table-recent' },
): string {
  const parts = (['action', 'upcoming', 'recent'] as const).flatMap((name) =>
    sections[name] === undefined ? [] : [section(ids[name], sections[name])],
  );
  return `<!DOCTYPE html>\n<html>\n<head><title>Contest - AtCoder</title></head>\n<body>\n${parts.join('\n<hr>\n')}\n</body>\n</html>\n`;
}

/** One upcoming and one recent contest: the smallest page the source believes. */
export const minimalPage = (upcoming: TestRow = {}): string =>
  page({
    upcoming: [row(upcoming)],
    recent: [row({ id: 'abc399', time: '2025-05-31 21:00:00+0900', name: 'AtCoder Beginner Contest 399' })],
  });
