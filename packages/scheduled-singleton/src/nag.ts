/**
 * cdk-nag (v3: a CDK validation plugin; findings land in the cloud assembly's
 * validation-report.json and fail `cdk synth`). The only part of the package that imports cdk-nag
 * (an optional peer dependency).
 *
 * A clean synthesis leaves `"pluginReports": []` in validation-report.json, which cannot tell "nag
 * ran and found nothing left unacknowledged" from "nag never ran". Each rule pack therefore also
 * says on stderr what it checked, and `addNagChecks` returns those runs.
 */
import { readFileSync } from 'node:fs';
import {
  Validations,
  type App,
  type IPolicyValidationContext,
  type IPolicyValidationPlugin,
  type PolicyValidationPluginReport,
} from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';

/** What one rule pack checked in one synthesis. */
export interface NagRun {
  readonly pack: string;
  readonly templates: number;
  readonly resources: number;
  /** Findings nobody acknowledged: any fails the synthesis. */
  readonly unacknowledged: number;
}

export interface NagChecks {
  /** One entry per rule pack and stage, filled in during `app.synth()`. */
  readonly runs: NagRun[];
}

/** Adds the AwsSolutions and Serverless rule packs to the app; each prints one line of what it checked. */
export function addNagChecks(app: App, options: { print?: (line: string) => void } = {}): NagChecks {
  const runs: NagRun[] = [];
  const print = options.print ?? ((line: string) => process.stderr.write(`${line}\n`));
  const reported = (plugin: IPolicyValidationPlugin): IPolicyValidationPlugin => ({
    name: plugin.name,
    ...(plugin.version !== undefined ? { version: plugin.version } : {}),
    ...(plugin.ruleIds !== undefined ? { ruleIds: plugin.ruleIds } : {}),
    validate(context: IPolicyValidationContext): PolicyValidationPluginReport {
      const report = plugin.validate(context);
      const resources = context.templatePaths.reduce(
        (sum, path) => sum + Object.keys((JSON.parse(readFileSync(path, 'utf8')) as { Resources?: object }).Resources ?? {}).length,
        0,
      );
      const run = { pack: plugin.name, templates: context.templatePaths.length, resources, unacknowledged: report.violations.length };
      runs.push(run);
      print(
        `cdk-nag ${run.pack}: checked ${run.resources} resources in ${run.templates} template(s): ${run.unacknowledged} finding(s) not acknowledged`,
      );
      return report;
    },
  });
  Validations.of(app).addPlugins(reported(new AwsSolutionsChecks(app)), reported(new ServerlessChecks(app)));
  return { runs };
}
