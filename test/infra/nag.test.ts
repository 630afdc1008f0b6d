/**
 * cdk-nag (AwsSolutions + Serverless, as bin/app.ts applies them) over the whole app, with CDK's
 * own CloudFormation validation on, as `cdk synth` runs it: no unacknowledged finding in the
 * validation report, every acknowledgement explained, and every acknowledgement still needed.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { createContestSyncApp } from '../../lib/app.js';
import { CONTEXT_KEYS } from '../../lib/config.js';

interface Report {
  pluginReports: {
    pluginName: string;
    conclusion: string;
    violations: { ruleName: string; violatingConstructs: { constructPath: string }[] }[];
  }[];
}

interface Acknowledgement {
  path: string;
  key: string;
  reason: string;
  data: Record<string, string>;
}

function synthWithNag(context: Record<string, unknown>, cfnValidation: boolean): { app: App; report: Report; error: unknown } {
  const outdir = mkdtempSync(join(tmpdir(), 'contest-sync-nag-'));
  const { app } = createContestSyncApp({ outdir, cfnValidation, context: { 'aws:cdk:bundling-stacks': [], ...context } });
  let error: unknown;
  try {
    app.synth();
  } catch (caught) {
    error = caught; // findings fail synthesis; the report below says which
  }
  const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as Report;
  return { app, report, error };
}

function findings(report: Report): string[] {
  return report.pluginReports.flatMap((plugin) =>
    plugin.violations.flatMap((v) => v.violatingConstructs.map((c) => `${plugin.pluginName}: ${v.ruleName} at ${c.constructPath}`)),
  );
}

function acknowledgements(app: App): Acknowledgement[] {
  return app.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => {
        const data = entry.data as Record<string, string>;
        return Object.entries(data).map(([key, reason]) => ({ path: construct.node.path, key, reason, data }));
      }),
  );
}

const ruleId = (key: string): string => key.replace(/^annotation::/i, '');

// CloudFormation schema validation takes seconds and does not depend on the e-mail setting: once.
describe.each([
  ['default context', {}, true],
  ['with an alarm e-mail subscription', { [CONTEXT_KEYS.alarmEmail]: 'ops@example.com' }, false],
  [
    'with webhooks, a named issuer and CORS origins (docs/api.md)',
    {
      [CONTEXT_KEYS.webhookUrl]: 'https://app.example.com/hooks',
      [CONTEXT_KEYS.jwtIssuer]: 'https://issuer.example.com/',
      [CONTEXT_KEYS.jwtAudience]: 'contest-sync',
      [CONTEXT_KEYS.corsOrigins]: 'https://app.example.com',
    },
    false,
  ],
])('cdk-nag, %s', (_label, context, cfnValidation) => {
  let app: App;
  let report: Report;
  let error: unknown;
  beforeAll(() => {
    ({ app, report, error } = synthWithNag(context, cfnValidation));
  });

  it('synthesizes with zero unacknowledged findings (nag packs, CloudFormation validation, annotations)', () => {
    expect(findings(report)).toEqual([]);
    expect(report.pluginReports.every((plugin) => plugin.conclusion !== 'failure')).toBe(true);
    expect(error).toBeUndefined();
  });

  it('gives every acknowledgement a reason a reviewer can check', () => {
    const acks = acknowledgements(app);
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      const words = ack.reason.trim().split(/\s+/);
      expect(words.length, `${ack.key} on ${ack.path}`).toBeGreaterThanOrEqual(20);
      expect(ack.reason).not.toMatch(/^(todo|tbd|n\/a|none|ok|suppress(ed)?|ignore(d)?|not needed)\b/i);
      expect(ack.reason.toLowerCase()).not.toContain(ruleId(ack.key).toLowerCase());
    }
  });

  it('acknowledges only rules that would otherwise fire on that construct', () => {
    const packs = [new AwsSolutionsChecks(), new ServerlessChecks()];
    const nagAcks = acknowledgements(app).filter((ack) => /^(AwsSolutions|Serverless)-/.test(ruleId(ack.key)));
    expect(nagAcks.length).toBeGreaterThan(0);
    for (const ack of nagAcks) {
      delete ack.data[ack.key];
      try {
        const fired = packs
          .flatMap((pack) => pack.validateScope(app).violations)
          .filter((v) => v.ruleName === ruleId(ack.key))
          .flatMap((v) => v.violatingResources.map((r) => r.constructPath ?? ''));
        expect(
          fired.some((path) => path === ack.path || path.startsWith(`${ack.path}/`)),
          `${ack.key} on ${ack.path}`,
        ).toBe(true);
      } finally {
        ack.data[ack.key] = ack.reason;
      }
    }
  });
});
