/**
 * `npm run migrate`, the pure part: the marker, the verify report and the rollback's counts as the
 * text an operator reads (docs/runbook.md, "Upgrading to qualified keys"). No I/O.
 */
import type { BackReport } from '../../lambda/migration/back.js';
import type { MigrationMarker } from '../../lambda/migration/marker.js';
import type { TableReport, VerifyReport } from '../../lambda/migration/verify.js';

const utc = (ms: number) => `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
const ago = (ms: number, now: number) => {
  const minutes = Math.round((now - ms) / 60_000);
  return minutes < 1 ? 'just now' : minutes < 120 ? `${minutes} min ago` : `${Math.round(minutes / 60)} h ago`;
};
const n = (value: number) => value.toLocaleString('en-US');

/** What `status` prints. */
export function formatMarker(marker: MigrationMarker | undefined, source: string, now: number): string {
  const lines = [`Upgrade to qualified keys (${source}):`];
  if (marker === undefined) {
    lines.push('state     not started: the sync copies the tables at its next run (the deploy-time run, or the next tick)');
    return `${lines.join('\n')}\n`;
  }
  const phase =
    marker.state === 'copying'
      ? {
          contests: 'copying the contests',
          barrier: 'waiting for the barrier (30 s past the start, every delivery shard once)',
          reminders: 'copying the reminders',
          done: '',
        }[marker.phase]
      : marker.state === 'done'
        ? 'done: this release runs on the new tables'
        : 'rolled back: the next run of this release copies again';
  const { contests, reminders, existing, refused } = marker.counts;
  lines.push(`state     ${marker.state} — ${phase}`);
  lines.push(`started   ${utc(marker.startedAtMs)} (${ago(marker.startedAtMs, now)}), ${marker.runs} run${marker.runs === 1 ? '' : 's'}`);
  if (marker.barrierAtMs !== undefined) lines.push(`barrier   passed ${utc(marker.barrierAtMs)}`);
  lines.push(`copied    ${n(contests)} contests items, ${n(reminders)} reminders; ${n(existing)} already there, ${n(refused)} refused`);
  const end = marker.doneAtMs ?? marker.updatedAtMs;
  const copying = marker.barrierAtMs === undefined ? 0 : (end - marker.barrierAtMs) / 1000;
  if (reminders > 0 && copying > 0) lines.push(`rate      ${n(Math.round(reminders / copying))} reminders a second since the barrier`);
  if (marker.doneAtMs !== undefined) lines.push(`done      ${utc(marker.doneAtMs)} (${ago(marker.doneAtMs, now)})`);
  if (marker.rolledBackAtMs !== undefined) lines.push(`back      ${utc(marker.rolledBackAtMs)} (${ago(marker.rolledBackAtMs, now)})`);
  if (marker.cursor !== undefined) lines.push(`cursor    ${JSON.stringify(marker.cursor).slice(0, 200)}`);
  lines.push(`updated   ${utc(marker.updatedAtMs)} (${ago(marker.updatedAtMs, now)})`);
  return `${lines.join('\n')}\n`;
}

function formatTable(name: string, report: TableReport): string[] {
  const lines = [
    `${name}: ${n(report.legacy)} in the previous release's table: ${n(report.same)} copied as they are, ${n(report.differ)} changed since, ` +
      `${n(report.missing)} without a copy, ${n(report.refused)} refused`,
  ];
  const attributes = Object.entries(report.attributes).sort(([a], [b]) => a.localeCompare(b));
  if (attributes.length > 0) lines.push(`  changed: ${attributes.map(([attribute, count]) => `${attribute} ${n(count)}`).join(', ')}`);
  for (const example of report.examples) {
    lines.push(`  ${example.kind.padEnd(8)} ${example.key}${example.attributes === undefined ? '' : `: ${example.attributes.join(', ')}`}`);
  }
  return lines;
}

/** What `verify` prints; `ok` when every item has an equal copy. */
export function formatVerify(report: VerifyReport): { text: string; ok: boolean } {
  const ok = [report.contests, report.reminders].every((table) => table.same === table.legacy);
  const verdict = ok
    ? 'every item of the previous release has an equal copy'
    : 'not every item has an equal copy: right after the upgrade, that is a fault (docs/runbook.md, "Check the copy"); later, the changes are what this release did since';
  return {
    text: `${[...formatTable('contests', report.contests), ...formatTable('reminders', report.reminders), verdict].join('\n')}\n`,
    ok,
  };
}

/** What `back` prints (a dry run says what it would do). */
export function formatBack(report: BackReport, applied: boolean): string {
  const verb = applied ? 'wrote' : 'would write';
  const del = applied ? 'deleted' : 'would delete';
  const lines = (['contests', 'reminders'] as const).map(
    (table) =>
      `${table}: ${verb} ${n(report[table].written)} items under the previous keys, ${del} ${n(report[table].deleted)} ` +
      `whose copy is gone; ${n(report[table].other)} of other platforms left out`,
  );
  if (!report.deletesOrphans) lines.push('the migration was not done: legacy items without a copy are kept');
  lines.push(applied ? 'the marker is rolled back: deploy the previous release now' : 'a dry run: nothing written (add --apply)');
  return `${lines.join('\n')}\n`;
}
