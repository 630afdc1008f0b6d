/** The bench's emulation of the former package: renewals waiting for the whole commit (perCommitTurn). */
import { describe, expect, it } from 'vitest';
import type { FencedWriterPort, Turn } from '@contest-sync/scheduled-singleton';
import { perCommitTurn } from './long-commit.js';

/** A writer of `transactions` transactions, each in the turn it is given (as the package's writer does). */
function writer(transactions: number, log: string[]): FencedWriterPort {
  return {
    commit: async (_actions, _fence, _signal, _outbox, turn = (transaction) => transaction()) => {
      for (let i = 1; i <= transactions; i += 1) await turn(async () => void log.push(`transaction ${i}`));
      return { transactions };
    },
  };
}

describe('perCommitTurn', () => {
  it('holds the run’s turn for all the transactions of a commit: a renewal waits for the whole commit', async () => {
    const log: string[] = [];
    let turns = 0;
    const turn: Turn = async (task) => {
      turns += 1;
      log.push('turn');
      return task();
    };
    expect(await perCommitTurn(writer(3, log)).commit([], () => ({}), undefined, [], turn)).toEqual({ transactions: 3 });
    expect(turns).toBe(1);
    expect(log).toEqual(['turn', 'transaction 1', 'transaction 2', 'transaction 3']);
    // The package's writer alone takes one turn per transaction.
    log.length = 0;
    await writer(3, log).commit([], () => ({}), undefined, [], turn);
    expect(log).toEqual(['turn', 'transaction 1', 'turn', 'transaction 2', 'turn', 'transaction 3']);
  });
});
