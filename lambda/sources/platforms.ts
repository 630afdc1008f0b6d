/**
 * Every platform the product names contests of (docs/sources.md): each is a source folder beside
 * this file. Ids are `<platform>:<id>` in every table and public surface. No imports: the CDK app
 * loads it.
 */
export const PLATFORMS = ['codeforces'] as const;
export type Platform = (typeof PLATFORMS)[number];
