/**
 * cdk-nag (v3: a CDK validation plugin; findings land in the cloud assembly's
 * validation-report.json and fail `cdk synth`). The only part of the package that imports cdk-nag
 * (an optional peer dependency).
 */
import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';

/** Adds the AwsSolutions and Serverless rule packs to the app. */
export function addNagChecks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
}
