import { defineConfig } from 'vitest/config';

/**
 * Two groups: the fast files run in parallel first; then the files that drive many processes
 * with tight lease timings (multi-process single-execution, the chaos run) run one at a time, so
 * that they never compete with each other or with the rest for the two cores.
 */
const processFiles = ['test/multiprocess/**/*.test.ts', 'test/examples/**/*.test.ts', 'test/chaos/chaos.test.ts'];

export default defineConfig({
  test: {
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
        test: { name: 'fast', include: ['test/**/*.test.ts'], exclude: processFiles, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'processes', include: processFiles, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
