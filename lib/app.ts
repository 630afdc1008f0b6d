/**
 * Builds the contest-sync CDK app. bin/app.ts (the `cdk` entry), local/template.ts and the
 * tests all go through here, so they synthesize the same stack with the same checks and the same
 * context: cdk.json's `context` (feature flags, `contestSync:*` settings) is loaded as defaults,
 * which the CLI's own context (`-c`, cdk.context.json) and `options.context` override.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { configFromContext } from './config.js';
import { ContestSyncStack, stackNameOf } from './contest-sync-stack.js';
import { addNagChecks } from './nag.js';
import { addWiringChecks } from './wiring.js';

export const CDK_JSON_PATH = fileURLToPath(new URL('../cdk.json', import.meta.url));

export interface ContestSyncAppOptions {
  /** Cloud assembly directory (default: the CLI's, or a temp dir). */
  readonly outdir?: string;
  /** Extra context, e.g. `contestSync:*` overrides or `aws:cdk:bundling-stacks`. */
  readonly context?: Record<string, unknown>;
  /** Add the cdk-nag rule packs (default true). */
  readonly nag?: boolean;
  /**
   * CDK's built-in CloudFormation schema validation (default true, as in `cdk synth`). It takes
   * several seconds; local schema extraction can skip it.
   */
  readonly cfnValidation?: boolean;
}

/** The `context` object of the repository's cdk.json. */
export function cdkJsonContext(): Record<string, unknown> {
  const parsed = JSON.parse(readFileSync(CDK_JSON_PATH, 'utf8')) as { context?: Record<string, unknown> };
  return parsed.context ?? {};
}

export function createContestSyncApp(options: ContestSyncAppOptions = {}): { app: App; stack: ContestSyncStack } {
  const app = new App({
    builtinCloudFormationValidation: options.cfnValidation ?? true,
    ...(options.outdir === undefined ? {} : { outdir: options.outdir }),
    // App props context is the lowest layer: CDK_CONTEXT_JSON from the CLI still overrides it.
    context: cdkJsonContext(),
    ...(options.context === undefined ? {} : { postCliContext: options.context }),
  });
  // The only place that reads context: the stack and its constructs take typed props.
  const config = configFromContext(app.node);
  const stack = new ContestSyncStack(app, stackNameOf(config.stage), { config });
  // Always, nag or not: a wiring AWS refuses fails every synthesis, the local runs' included.
  addWiringChecks(app);
  if (options.nag ?? true) addNagChecks(app);
  return { app, stack };
}
