/**
 * Every platform the product names contests of (docs/sources.md): each is a source folder beside
 * this file, listed here even before its job runs, so that every table, event and surface already
 * holds its ids. Ids are `<platform>:<platformId>` everywhere (lambda/sources/ids.ts). No imports:
 * the CDK app loads it.
 */
export const PLATFORMS = ['codeforces', 'atcoder', 'codechef', 'leetcode'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** Each platform as people write its name: in calendar names and the API's description. */
export const PLATFORM_LABELS: Readonly<Record<Platform, string>> = {
  codeforces: 'Codeforces',
  atcoder: 'AtCoder',
  codechef: 'CodeChef',
  leetcode: 'LeetCode',
};
