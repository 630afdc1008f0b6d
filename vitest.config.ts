import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Every temporary file of the run under one directory, removed when vitest exits (Ctrl-C
 * included): what CDK makes for each `new App()` without an outdir (`cdk.out*`), the syntheses,
 * the tests' own directories, and what a worker vitest stopped could not remove. The workers and
 * every process they start inherit TMPDIR, which `os.tmpdir()` reads.
 */
if (process.env.CONTEST_SYNC_TEST_TMP === undefined) {
  // Once per run: a worker or a process a test starts that loads this file again keeps the run's.
  const runTmp = mkdtempSync(join(tmpdir(), 'contest-sync-test-'));
  process.env.CONTEST_SYNC_TEST_TMP = runTmp;
  process.env.TMPDIR = runTmp;
  process.once('exit', () => rmSync(runTmp, { recursive: true, force: true }));
}

/**
 * The workspace package by its name, from its sources (as tsconfig.json's `paths` does for tsc,
 * tsx and esbuild): no build step between an edit and a test. Only test/package/ installs the
 * packed tarball, the way an adopter gets it.
 */
const packageSource = (path: string): string => fileURLToPath(new URL(`./packages/scheduled-singleton/src/${path}`, import.meta.url));
const alias = [
  { find: /^@contest-sync\/scheduled-singleton$/, replacement: packageSource('runtime/index.ts') },
  { find: /^@contest-sync\/scheduled-singleton\/cdk$/, replacement: packageSource('cdk/index.ts') },
  { find: /^@contest-sync\/scheduled-singleton\/nag$/, replacement: packageSource('nag.ts') },
  { find: /^@contest-sync\/scheduled-singleton\/contract$/, replacement: packageSource('contract.ts') },
  { find: /^@contest-sync\/scheduled-singleton\/relay$/, replacement: packageSource('relay/index.ts') },
  { find: /^@contest-sync\/scheduled-singleton\/testing$/, replacement: packageSource('testing/index.ts') },
];

/**
 * Three groups, one after the other:
 * - `unit` (and `unit:isolated`): pure logic and mocked I/O; needs neither Java (DynamoDB Local)
 *   nor a CDK synthesis (`npm run test:unit`); two workers.
 * - `fast`: integration and infrastructure tests; one DynamoDB Local and one synthesis of the app
 *   with its real bundle serve them all (test/support/global-setup.ts); vitest's one worker on 2
 *   cores.
 * - `processes`: files that drive many processes with tight lease timings (multi-process single
 *   execution, the chaos run); they run one at a time after the rest, so that they never compete
 *   with each other or with the rest for the two cores.
 */
/**
 * The package's own tests (packages/scheduled-singleton/test/, mirroring its src/): unit, except
 * those on DynamoDB Local (`*.local.test.ts`) and the construct's (`cdk/`, a CDK synthesis).
 */
const packageUnitFiles = ['packages/scheduled-singleton/test/**/*.test.ts'];
const packageFastFiles = ['packages/scheduled-singleton/test/**/*.local.test.ts', 'packages/scheduled-singleton/test/cdk/**/*.test.ts'];
const unitFiles = [
  'test/lambda/**/*.test.ts',
  'test/status/**/*.test.ts',
  'test/redrive/**/*.test.ts',
  'test/migrate/**/*.test.ts',
  'test/docs/**/*.test.ts',
  // The repository's scripts (scripts/): the function-length budget.
  'test/scripts/**/*.test.ts',
  // The bench's own helpers are tested beside them: no file under test/ imports bench code.
  'bench/**/*.test.ts',
  'test/chaos/checker.test.ts',
  'test/chaos/starvation.test.ts',
  // What npm start prints at the door, against README.md; the calendar files following the feeds.
  'test/local/walkthrough.test.ts',
  'test/chaos/faults.test.ts',
  'test/chaos/sources.test.ts',
  'test/chaos/delivery-checker.test.ts',
  // The simulated year's pure parts (truth, glitch schedule, invariant checker).
  'test/sim/truth.test.ts',
  'test/sim/checker.test.ts',
  'test/sim/app.test.ts',
];
/**
 * Unit files that replace a module (`vi.mock`): they need a module graph of their own, so they run
 * isolated (project `unit:isolated`), the rest of `unit` shares one.
 */
const isolatedUnitFiles = ['packages/scheduled-singleton/test/runtime/singleton-client.test.ts'];
const processFiles = [
  'test/multiprocess/**/*.test.ts',
  'test/chaos/chaos.test.ts',
  'test/examples/**/*.test.ts',
  'test/package/**/*.test.ts',
  'test/sim/sim.test.ts',
];

export default defineConfig({
  resolve: { alias },
  test: {
    // One DynamoDB Local and one synthesis for the `fast` and `processes` groups together; the
    // setup does nothing for `unit`.
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 180_000,
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      CDK_DISABLE_CLI_TELEMETRY: 'true',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [...unitFiles, ...packageUnitFiles],
          exclude: [...configDefaults.exclude, ...packageFastFiles, ...isolatedUnitFiles],
          // Pure logic and mocked clients: threads start faster than processes, and without isolation the
          // modules (the AWS SDK, Powertools, the product) load once per worker instead of once per file,
          // most of the project's time (docs/testing.md). What a file changes outside its modules is put
          // back after it (test/support/unit-isolation.ts). Two workers, not vitest's one on 2 cores: a
          // file waiting on real timers (run.test.ts' 7 s commit) leaves the other core to the rest.
          pool: 'threads',
          isolate: false,
          maxWorkers: 2,
          setupFiles: ['test/support/unit-isolation.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'unit:isolated', include: isolatedUnitFiles, pool: 'threads', maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts', ...packageFastFiles],
          exclude: [...configDefaults.exclude, ...unitFiles, ...processFiles],
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: { name: 'processes', include: processFiles, fileParallelism: false, sequence: { groupOrder: 2 } },
      },
    ],
  },
});
