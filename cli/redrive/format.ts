/** What `npm run redrive` prints: every item of the window with its verdict, then the totals. Pure. */
import { EVENT_WINDOWS } from '../../lambda/event-windows.js';
import { shown, summarize, type PlanEntry } from './plan.js';
import type { ResendOutcome } from './outbox.js';

/** At most this many items are listed one by one; the totals count them all. */
export const LISTED = 200;

export function formatRedrive(
  plan: readonly PlanEntry[],
  outcomes: ReadonlyMap<string, ResendOutcome | 'refused-now'>,
  apply: boolean,
  window: { fromMs: number; toMs: number },
): string {
  const lines: string[] = [];
  lines.push(
    `Outbox items committed ${new Date(window.fromMs).toISOString()} to ${new Date(window.toMs).toISOString()}: ${plan.length}` +
      ` (a redrive reaches back ${EVENT_WINDOWS.redriveMaxAgeSeconds / 86_400} days; consumers dedupe ${EVENT_WINDOWS.consumerDedupeSeconds / 86_400} days)`,
  );
  for (const entry of plan.slice(0, LISTED)) {
    const at = entry.createdAtMs === undefined ? '?' : new Date(entry.createdAtMs).toISOString();
    const what = `${at}  ${shown(entry.detailType ?? '?', 40)}  ${shown(entry.eventId ?? entry.pk, 80)}`;
    if (!entry.verdict.resend) {
      lines.push(`refuse  ${what}  ${entry.verdict.reason}: ${shown(entry.verdict.why, 200)}`);
    } else if (!apply) {
      lines.push(`resend  ${what}  (dry run)`);
    } else {
      lines.push(`${(outcomes.get(entry.pk) ?? 'not-reached').padEnd(6)}  ${what}`);
    }
  }
  if (plan.length > LISTED) lines.push(`… and ${plan.length - LISTED} more`);
  const totals = summarize(plan);
  const reasons = Object.entries(totals.reasons)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
  lines.push(`Refused: ${totals.refused}${reasons === '' ? '' : ` (${reasons})`}.`);
  if (!apply) {
    lines.push(`Would resend: ${totals.resend}. Dry run: nothing was written; add --apply to resend them.`);
  } else {
    const counts: Record<string, number> = {};
    for (const outcome of outcomes.values()) counts[outcome] = (counts[outcome] ?? 0) + 1;
    lines.push(
      `Resent: ${counts.resent ?? 0}` +
        (counts.rewritten ? `; written again by a job meanwhile: ${counts.rewritten}` : '') +
        (counts.changed ? `; changed since read, left alone: ${counts.changed}` : '') +
        (counts['refused-now'] ? `; refused when their turn came (a start passed): ${counts['refused-now']}` : '') +
        '.',
    );
  }
  return `${lines.join('\n')}\n`;
}
