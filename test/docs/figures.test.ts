/**
 * Figures the documentation states that a file in the repository records: the recorded bench run's
 * duration (bench/results.json) where docs/performance.md says how long `npm run bench` takes, the
 * heartbeat example's length (examples/heartbeat/), and the README's own (a front door of at most
 * 250 lines; the topics live in docs/).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('figures in the documentation', () => {
  it("docs/performance.md gives npm run bench's duration as the recorded run measured it, with its load", () => {
    const results = JSON.parse(read('bench/results.json')) as {
      durationSeconds: number;
      machine: { cpus: number; loadAverage1m: { atStart: number; atEnd: number } };
    };
    const text = read('docs/performance.md').replace(/\s+/g, ' ');
    const stated =
      /`npm run bench` \((\d+) s on (\d+) cores at load average ([\d.]+) → ([\d.]+), the recorded run's `durationSeconds`\)/.exec(text);
    expect(stated, 'docs/performance.md: "`npm run bench` (N s on C cores at load average A → B, ...)"').not.toBeNull();
    const { durationSeconds, machine } = results;
    expect(stated!.slice(1).map(Number)).toEqual([
      Math.round(durationSeconds),
      machine.cpus,
      machine.loadAverage1m.atStart,
      machine.loadAverage1m.atEnd,
    ]);
  });

  it("README.md counts the heartbeat example's handler and stack as they are", () => {
    const stated = /handler and stack in (\d+) formatted lines/.exec(read('README.md'));
    expect(stated, 'README.md: "handler and stack in N formatted lines"').not.toBeNull();
    const lines = ['handler.ts', 'stack.ts'].map((file) => read(`examples/heartbeat/${file}`).split('\n').length - 1);
    expect(lines[0]! + lines[1]!).toBe(Number(stated![1]));
  });

  it('README.md is at most 250 lines', () => {
    expect(read('README.md').split('\n').length - 1).toBeLessThanOrEqual(250);
  });
});
