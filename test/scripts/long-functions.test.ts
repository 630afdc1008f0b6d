/**
 * The function-length budget of the product's source (scripts/long-functions.ts; `npm run
 * functions` lists the long ones), and the script's measure on small sources.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  formatLongFunctions,
  LONG_FUNCTION_LINES,
  measureFunctions,
  measureProduct,
  productSourceFiles,
  type FunctionLength,
} from '../../scripts/long-functions.js';

/**
 * THE BUDGET: what the product's source may hold. Set to the tree's figures when it was
 * introduced, so it holds today; lower the numbers as long functions are split (never raise them
 * to let a function grow).
 */
const BUDGET = {
  /** No function is longer than this many lines. */
  longestLines: 166,
  /** At most this many functions are over LONG_FUNCTION_LINES (50) lines. */
  functionsOver50: 26,
};

/**
 * Named functions and the most lines each may have (today's lengths; lower them as they are
 * split). The name is the one `npm run functions` prints; `file` says where it was. A name the
 * product no longer has is reported as gone (its test is skipped), not failed.
 */
const NAMED_LIMITS: readonly { name: string; file: string; maxLines: number }[] = [
  { name: 'planContests', file: 'lambda/contests/plan.ts', maxLines: 25 },
  // The sync's work (it was `contestWork`, 122 lines): gather, judge, act.
  { name: 'syncContests', file: 'lambda/sync/sync.ts', maxLines: 15 },
  { name: 'ScheduledSingletonJob.constructor', file: 'packages/scheduled-singleton/src/cdk/scheduled-singleton-job.ts', maxLines: 50 },
  { name: 'ContestSyncStack.constructor', file: 'lib/contest-sync-stack.ts', maxLines: 50 },
];

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const product = measureProduct(ROOT);
const where = (f: FunctionLength) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`;

describe('the function-length budget', () => {
  it(`no function is over ${BUDGET.longestLines} lines; at most ${BUDGET.functionsOver50} are over ${LONG_FUNCTION_LINES}`, () => {
    expect(product.length).toBeGreaterThan(100); // the product's source was found and parsed
    const tooLong = product.filter((f) => f.lines > BUDGET.longestLines).map(where);
    expect(tooLong, 'functions over the longest allowed').toEqual([]);
    const long = product.filter((f) => f.lines > LONG_FUNCTION_LINES);
    expect(
      long.length,
      `functions over ${LONG_FUNCTION_LINES} lines (npm run functions):\n${long.map(where).join('\n')}`,
    ).toBeLessThanOrEqual(BUDGET.functionsOver50);
  });

  it.for(NAMED_LIMITS)('$name is at most $maxLines lines', ({ name, file, maxLines }, context) => {
    const found = product.filter((f) => f.name === name);
    if (found.length === 0) {
      console.info(`[function budget] ${name} (was in ${file}) is gone: no function of that name; drop it from NAMED_LIMITS`);
      context.skip(`${name} is gone`);
    }
    for (const f of found) expect(f.lines, where(f)).toBeLessThanOrEqual(maxLines);
  });
});

describe('the measure (scripts/long-functions.ts)', () => {
  const source = [
    '/** A declaration: its comment is not counted. */', // 1
    'export function plan(a: number): number {', // 2
    '  const double = (x: number) => {', // 3
    '    return x * 2;', // 4
    '  };', // 5
    '', // 6
    '  return double(a);', // 7
    '}', // 8
    'function overloaded(a: string): string;', // 9: a signature, no body
    'function overloaded(a: unknown): unknown {', // 10
    '  return a;', // 11
    '}', // 12
    'export class Job extends Base {', // 13
    '  private readonly run = async () => 1;', // 14
    '  constructor(scope: unknown) {', // 15
    '    super(scope);', // 16
    '    items.forEach((item) => {', // 17
    '      use(item);', // 18
    '    });', // 19
    '  }', // 20
    '  get size(): number {', // 21
    '    return 0;', // 22
    '  }', // 23
    '  static create(): Job {', // 24
    '    return new Job(undefined);', // 25
    '  }', // 26
    '  abstract later(): void;', // 27: no body
    '}', // 28
    'const handlers = {', // 29
    '  tick() {', // 30
    '    return 1;', // 31
    '  },', // 32
    '  tock: function named() {', // 33
    '    return 2;', // 34
    '  },', // 35
    '  late: (() => 3) as () => number,', // 36
    '};', // 37
    'module.exports.handler = async function (event: unknown) {', // 38
    '  return event;', // 39
    '};', // 40
    'export function factory() {', // 41
    '  return (x: number) => {', // 42
    '    return x;', // 43
    '  };', // 44
    '}', // 45
    'export const fallback = options.send ?? ((x: number) => x);', // 46
    'export default () => {', // 47
    '  return 0;', // 48
    '};', // 49
  ].join('\n');

  it('names every function with a body, where it starts and how many lines it spans', () => {
    const measured = measureFunctions('example.ts', source).map(({ name, line, lines }) => ({ name, line, lines }));
    expect(measured).toEqual([
      { name: 'plan', line: 2, lines: 7 },
      { name: 'double', line: 3, lines: 3 },
      { name: 'overloaded', line: 10, lines: 3 },
      { name: 'Job.run', line: 14, lines: 1 },
      { name: 'Job.constructor', line: 15, lines: 6 },
      { name: '<callback of items.forEach>', line: 17, lines: 3 },
      { name: 'get Job.size', line: 21, lines: 3 },
      { name: 'Job.create', line: 24, lines: 3 },
      { name: 'handlers.tick', line: 30, lines: 3 },
      { name: 'handlers.tock', line: 33, lines: 3 },
      { name: 'handlers.late', line: 36, lines: 1 },
      { name: 'module.exports.handler', line: 38, lines: 3 },
      { name: 'factory', line: 41, lines: 5 },
      { name: '<returned by factory>', line: 42, lines: 3 },
      { name: 'fallback', line: 46, lines: 1 },
      { name: 'default', line: 47, lines: 3 },
    ]);
  });

  it('lists the functions over the threshold, longest first, with file:line', () => {
    const all = measureFunctions('example.ts', source).sort((a, b) => b.lines - a.lines);
    expect(formatLongFunctions(all, 1, 5).split('\n')).toEqual([
      '2 of 16 functions in 1 files are over 5 lines; the longest has 7.',
      'lines  where          function',
      '    7  example.ts:2   plan',
      '    6  example.ts:15  Job.constructor',
    ]);
    expect(formatLongFunctions(all, 1, 7)).toBe('0 of 16 functions in 1 files are over 7 lines; the longest has 7.');
  });

  it("reads the product's source only: no tests, no declaration files", () => {
    const files = productSourceFiles(ROOT);
    expect(files).toEqual(
      expect.arrayContaining([
        'lambda/sync/sync.ts',
        'lib/contest-sync-stack.ts',
        'packages/scheduled-singleton/src/cdk/scheduled-singleton-job.ts',
      ]),
    );
    for (const file of files) {
      expect(file).toMatch(/^(lambda|lib|local|bin|cli|examples|packages\/[^/]+\/src)\//);
      expect(file).not.toMatch(/\.test\.|\.d\.c?ts$/);
    }
    expect(files.some((file) => file.startsWith('test/'))).toBe(false);
    // Longest first.
    expect(product.map((f) => f.lines)).toEqual([...product.map((f) => f.lines)].sort((a, b) => b - a));
  });
});
