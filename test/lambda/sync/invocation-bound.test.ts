/** The sync's own event parser (lambda/events.ts) bounds what it quotes: an error text of at most 1 KB. */
import { describe, expect, it } from 'vitest';
import { MAX_TEXT_BYTES, utf8Bytes } from '@contest-sync/scheduled-singleton';
import { EventValidationError, parseEvent } from '../../../lambda/sync/invocation.js';

describe('EventValidationError of the sync', () => {
  it('is at most 1 KB when the event carries a huge unknown key or a huge time', () => {
    for (const event of [
      { ['k'.repeat(1_000_000)]: 1 },
      { source: 'aws.events', 'detail-type': 'Scheduled Event', time: 't'.repeat(1_000_000) },
    ]) {
      let thrown: unknown;
      try {
        parseEvent(event);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(EventValidationError);
      expect(utf8Bytes((thrown as Error).message)).toBeLessThanOrEqual(MAX_TEXT_BYTES);
    }
  });
});
