/**
 * Synthesizes the real contest-sync app in-process (the same createContestSyncApp as bin/app.ts)
 * so that local runs and tests work from the template that would be deployed: table schemas
 * (./tables.ts) and, when asked, the function bundle esbuild produced for Lambda.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENV } from '../lambda/contract.js';
import { createContestSyncApp } from '../lib/app.js';

process.env.CDK_DISABLE_CLI_TELEMETRY ??= 'true';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** A synthesized CloudFormation template (JSON). */
export type CfnTemplate = any;

export interface SynthTemplateOptions {
  /** Run esbuild and return the bundle directory (slower); false skips all asset bundling. */
  bundle: boolean;
  /**
   * Cloud assembly directory.
   * @default a fresh temporary directory (`contest-sync-synth-*`), removed when the process exits
   */
  outdir?: string;
  /** Extra context, e.g. `{ 'contestSync:leaseDurationSeconds': 2 }`. */
  context?: Record<string, unknown>;
  /** Also run the cdk-nag packs (synth throws on unacknowledged findings). Default false. */
  nag?: boolean;
  /** CDK's built-in CloudFormation schema validation (several seconds). Default false. */
  cfnValidation?: boolean;
}

export interface SynthTemplateResult {
  template: CfnTemplate;
  outdir: string;
  /** With `bundle: true`: the directory of the function's bundled asset (contains index.mjs). */
  bundleDir?: string;
}

interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
}

/** Logical id and resource of the sync function: the Lambda whose environment names the Contests table. */
export function findSyncFunction(template: CfnTemplate): { logicalId: string; resource: CfnResource } {
  const resources = (template?.Resources ?? {}) as Record<string, CfnResource>;
  const found = Object.entries(resources).filter(([, resource]) => {
    if (resource.Type !== 'AWS::Lambda::Function') return false;
    const variables = (resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables;
    // The delivery job reads the Contests table too; only the sync calls Codeforces.
    return variables !== undefined && ENV.contestsTable in variables && ENV.codeforcesApiUrl in variables;
  });
  if (found.length !== 1) {
    throw new Error(
      `expected exactly one Lambda function with ${ENV.contestsTable} and ${ENV.codeforcesApiUrl} in its environment, found ${found.length}`,
    );
  }
  const [logicalId, resource] = found[0]!;
  return { logicalId, resource };
}

interface AssetManifestFile {
  source: { path?: string; packaging?: string };
  destinations: Record<string, { objectKey?: string }>;
}

/** Locates the sync function's code asset through its S3Key and the assembly's asset manifests. */
function bundleDirOf(outdir: string, template: CfnTemplate): string {
  return bundleDirOfFunction(outdir, template, findSyncFunction(template).logicalId);
}

/**
 * The directory of the bundled code (with index.mjs) of the Lambda function `logicalId` in a
 * template synthesized into `outdir` with bundling: any app's, e.g. examples/heartbeat.
 */
export function bundleDirOfFunction(outdir: string, template: CfnTemplate, logicalId: string): string {
  const resource = (template?.Resources ?? {})[logicalId] as CfnResource | undefined;
  if (resource?.Type !== 'AWS::Lambda::Function') throw new Error(`${logicalId} is not a Lambda function of the template`);
  const s3Key = (resource.Properties?.Code as { S3Key?: unknown } | undefined)?.S3Key;
  if (typeof s3Key !== 'string') throw new Error(`function ${logicalId} has no literal Code.S3Key`);

  const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8')) as {
    artifacts?: Record<string, { type: string; properties?: { file?: string } }>;
  };
  for (const artifact of Object.values(manifest.artifacts ?? {})) {
    if (artifact.type !== 'cdk:asset-manifest' || artifact.properties?.file === undefined) continue;
    const assets = JSON.parse(readFileSync(join(outdir, artifact.properties.file), 'utf8')) as {
      files?: Record<string, AssetManifestFile>;
    };
    for (const file of Object.values(assets.files ?? {})) {
      const published = Object.values(file.destinations).some((d) => d.objectKey === s3Key);
      if (!published || file.source.path === undefined) continue;
      const dir = join(outdir, file.source.path);
      if (!existsSync(join(dir, 'index.mjs'))) throw new Error(`bundled asset ${dir} has no index.mjs`);
      return dir;
    }
  }
  throw new Error(`no asset in ${outdir} is published as ${s3Key} (function ${logicalId})`);
}

/** The temporary assemblies this process made, removed as it exits. */
const temporary = new Set<string>();
let removing = false;
const TERMINATING = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function removeTemporary(): void {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
  temporary.clear();
}

/**
 * Removes the temporary assemblies however the process ends: on `exit` (a normal end or
 * process.exit), and on a terminating signal (Ctrl-C), which runs no `exit` handler. A signal
 * nothing else listens to then ends the process as it would have (the listener steps aside and the
 * signal is raised again); where the process handles it (npm start, vitest), it goes on its way.
 */
function removeOnExit(dir: string): void {
  if (!removing) {
    removing = true;
    process.once('exit', removeTemporary);
    // First in line: a listener that runs before it (a `once`) would no longer be counted.
    for (const signal of TERMINATING) process.prependListener(signal, onTerminating);
  }
  temporary.add(dir);
}

function onTerminating(signal: NodeJS.Signals): void {
  removeTemporary();
  if (process.listenerCount(signal) > 1) return;
  for (const other of TERMINATING) process.removeListener(other, onTerminating);
  process.kill(process.pid, signal);
}

export async function synthTemplate(options: SynthTemplateOptions): Promise<SynthTemplateResult> {
  let outdir = options.outdir;
  if (outdir === undefined) {
    outdir = mkdtempSync(join(tmpdir(), 'contest-sync-synth-'));
    removeOnExit(outdir);
  }
  const context: Record<string, unknown> = { ...options.context };
  // No stack needs bundling: NodejsFunction skips esbuild and references a placeholder asset.
  if (!options.bundle) context['aws:cdk:bundling-stacks'] = [];

  const { app, stack } = createContestSyncApp({
    outdir,
    context,
    nag: options.nag ?? false,
    cfnValidation: options.cfnValidation ?? false,
  });
  const assembly = app.synth();
  const template: CfnTemplate = assembly.getStackArtifact(stack.artifactId).template;
  return options.bundle ? { template, outdir, bundleDir: bundleDirOf(outdir, template) } : { template, outdir };
}

/** The reminder delivery function of byDue shard `shard` (DUE_SHARD in its environment). */
export function findDeliveryFunction(template: CfnTemplate, shard = 0): { logicalId: string; resource: CfnResource } {
  const resources = (template?.Resources ?? {}) as Record<string, CfnResource>;
  const found = Object.entries(resources).filter(([, resource]) => {
    if (resource.Type !== 'AWS::Lambda::Function') return false;
    const variables = (resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables;
    return variables?.DUE_SHARD === String(shard);
  });
  if (found.length !== 1) throw new Error(`expected exactly one delivery function of shard ${shard}, found ${found.length}`);
  const [logicalId, resource] = found[0]!;
  return { logicalId, resource };
}

const LEGACY_TABLE_ENV = new Set<string>([ENV.legacyContestsTable, ENV.legacyRemindersTable]);

/**
 * A function's environment as the template sets it, every `{ Ref: id }` resolved through `nameOf`
 * (an unknown one left as its id; the previous release's table names left out unless they resolve).
 */
export function resolvedEnvironment(
  template: CfnTemplate,
  logicalId: string,
  nameOf: Readonly<Record<string, string>>,
): Record<string, string> {
  const variables = (template?.Resources?.[logicalId]?.Properties?.Environment?.Variables ?? {}) as Record<string, unknown>;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(variables)) {
    const ref = (value as { Ref?: string } | null)?.Ref;
    // The previous release's tables only where they resolve: a local run without them has no upgrade to wait for.
    if (LEGACY_TABLE_ENV.has(name) && (ref === undefined || nameOf[ref] === undefined)) continue;
    env[name] = ref !== undefined ? (nameOf[ref] ?? ref) : String(value);
  }
  return env;
}
