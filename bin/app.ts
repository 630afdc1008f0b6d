#!/usr/bin/env node
/** CDK app entry (cdk.json "app"). Settings: the `contestSync:*` context keys, see lib/config.ts. */
import { createContestSyncApp } from '../lib/app.js';
import { ContestSyncConfigError } from '../lib/config.js';

process.env.CDK_DISABLE_CLI_TELEMETRY ??= 'true';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

try {
  const { app } = createContestSyncApp();
  app.synth();
} catch (error) {
  // A bad context value is the deployer's to fix: say which key and why, without a stack trace.
  if (error instanceof ContestSyncConfigError) {
    console.error(`contest-sync: ${error.message}`);
    process.exit(1);
  }
  throw error;
}
