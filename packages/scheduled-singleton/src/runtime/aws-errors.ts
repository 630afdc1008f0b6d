/** Small helpers to read AWS SDK errors without depending on their classes. */
import { bound } from './text.js';

/** A TransactionCanceledException whose reason at `index` is a failed condition. */
export function isCancelledAt(error: unknown, index: number): boolean {
  return cancellationCodes(error)[index] === 'ConditionalCheckFailed';
}

/** The per-action reasons of a TransactionCanceledException (empty for other errors). */
export function cancellationCodes(error: unknown): string[] {
  if ((error as { name?: string } | undefined)?.name !== 'TransactionCanceledException') return [];
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
  return (reasons ?? []).map((reason) => reason.Code ?? 'None');
}

/**
 * `Name: message` of any error, at most 1 KB: the text of every error the function reports
 * (results, log lines, run records). A message may quote a reply or an item.
 */
export function describe(error: unknown): string {
  if (error instanceof Error) return bound(`${error.name}: ${error.message}`);
  return bound(String(error));
}
