/**
 * The multi-process tests run the deployed bundles on the Node.js Lambda runs them on, not on the
 * Node running vitest: every bundled function of the synthesized stack declares the runtime of
 * the pinned binary's major (test/support/lambda-node.ts), and each bundle, started the way every
 * multi-process test starts it (test/support/processes.ts), reports that major as its
 * `process.version`.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { mappingFromTemplate } from '../../local/stream-poller.js';
import {
  bundleDirOfFunction,
  findDeliveryFunction,
  findSyncFunction,
  resolvedEnvironment,
  type CfnTemplate,
} from '../../local/template.js';
import { LAMBDA_NODE_MAJOR, lambdaNode } from '../support/lambda-node.js';
import { invokeBundle } from '../support/processes.js';
import type { TestTables } from '../support/tables.js';
import { useWorld, type World } from '../support/world.js';

let world: World;
let tables: TestTables;
useWorld('runtime', (fresh) => {
  world = fresh;
  tables = fresh.tables;
});

interface Bundled {
  logicalId: string;
  runtime: unknown;
  entry: string;
}

/** Every Lambda function of the template whose code is one of the synthesis's bundles (an index.mjs). */
function bundledFunctions(template: CfnTemplate, outdir: string): Bundled[] {
  const found: Bundled[] = [];
  for (const [logicalId, resource] of Object.entries(template.Resources as Record<string, { Type: string; Properties: any }>)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    let dir: string;
    try {
      dir = bundleDirOfFunction(outdir, template, logicalId);
    } catch {
      continue; // CDK's own handlers (trigger provider, custom resources): not bundled by the stack
    }
    found.push({ logicalId, runtime: resource.Properties.Runtime, entry: join(dir, 'index.mjs') });
  }
  return found;
}

describe('the bundles run on the Lambda runtime’s Node', () => {
  it(`the stack's bundled functions are nodejs${LAMBDA_NODE_MAJOR}.x; each bundle runs in a child process on v${LAMBDA_NODE_MAJOR}`, async () => {
    const templatePath = inject('templatePath');
    const template: CfnTemplate = JSON.parse(readFileSync(templatePath, 'utf8'));
    const bundled = bundledFunctions(template, dirname(templatePath));

    const sync = findSyncFunction(template).logicalId;
    const delivery = findDeliveryFunction(template, 0).logicalId;
    const outbox = Object.entries(template.Resources as Record<string, { Type: string; Properties: any }>).find(
      ([, r]) => r.Type === 'AWS::DynamoDB::Table' && r.Properties.StreamSpecification !== undefined,
    )![0];
    const relay = mappingFromTemplate(template, outbox).functionLogicalId;
    expect(bundled.map((f) => f.logicalId)).toEqual(expect.arrayContaining([sync, delivery, relay]));
    for (const f of bundled)
      expect({ function: f.logicalId, runtime: f.runtime }).toEqual({ function: f.logicalId, runtime: `nodejs${LAMBDA_NODE_MAJOR}.x` });
    expect(lambdaNode().version).toMatch(new RegExp(`^v${LAMBDA_NODE_MAJOR}\\.`));

    // Each bundle does real work where it can with nothing but the tables and the stand-in: a dry
    // sync, a dry delivery pass, an empty stream batch. A bundle the stack gains later gets `{}`:
    // only the Node it ran on is checked.
    const events: Record<string, unknown> = { [sync]: { dryRun: true }, [delivery]: { dryRun: true }, [relay]: { Records: [] } };
    for (const f of bundled) {
      const env = { ...resolvedEnvironment(template, f.logicalId, {}), ...tables.env, CODEFORCES_API_URL: world.standin.baseUrl };
      const outcome = await invokeBundle({ entry: f.entry, event: events[f.logicalId] ?? {}, env, timeoutMs: 30_000 }).done;
      expect(outcome.node, `${f.logicalId}: ${outcome.stderr.slice(0, 500)}`).toMatch(new RegExp(`^v${LAMBDA_NODE_MAJOR}\\.`));
      expect(outcome.node).toBe(lambdaNode().version);
      if (f.logicalId in events) expect(outcome.ok, `${f.logicalId}: ${JSON.stringify(outcome.error)}`).toBe(true);
    }
    expect(world.standin.requests.length).toBeGreaterThan(0); // the dry sync fetched contest.list
  });
});
