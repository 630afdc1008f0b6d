/** The windows of the events' hops agree (lambda/event-windows.ts): a redrive can neither duplicate nor mislead. */
import { describe, expect, it } from 'vitest';
import { EVENT_WINDOWS, windowProblems } from '../../lambda/event-windows.js';
import { DEAD_LETTER_RETENTION_SECONDS, DEDUPE_SECONDS } from '../../examples/events-consumer/windows.js';

const DAY = 86_400;

describe('the windows', () => {
  it('agree: every dead letter names events the redrive may resend, every resent event reaches consumers while they remember its id, and the outbox keeps them', () => {
    expect(windowProblems(EVENT_WINDOWS)).toEqual([]);
    expect(EVENT_WINDOWS).toMatchObject({
      maxRecordAgeSeconds: DAY,
      deadLetterRetentionSeconds: 5 * DAY,
      redriveMaxAgeSeconds: 6 * DAY,
      consumerDedupeSeconds: 7 * DAY,
      outboxRetentionDays: 7,
    });
  });
  it('the example consumer remembers an id for the whole window, and keeps its dead letters as long as the product does', () => {
    expect(DEDUPE_SECONDS).toBe(EVENT_WINDOWS.consumerDedupeSeconds);
    expect(DEAD_LETTER_RETENTION_SECONDS).toBe(EVENT_WINDOWS.deadLetterRetentionSeconds);
  });
  it('names each link that a change would break (the 14-day queue and 48-hour dedupe they replace, among them)', () => {
    expect(windowProblems({ ...EVENT_WINDOWS, deadLetterRetentionSeconds: 14 * DAY })).toEqual([
      expect.stringMatching(/dead letter may name events older than the redrive accepts/),
    ]);
    expect(windowProblems({ ...EVENT_WINDOWS, consumerDedupeSeconds: 2 * DAY })).toEqual([
      expect.stringMatching(/redriven event may reach a consumer after it forgot the id/),
    ]);
    expect(windowProblems({ ...EVENT_WINDOWS, outboxRetentionDays: 5 })).toEqual([
      expect.stringMatching(/outbox may drop an event the redrive would resend/),
    ]);
  });
});
