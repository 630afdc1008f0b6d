/**
 * LeetCode as a source (docs/sources.md, "LeetCode"): its settings, and the `Source` its job runs.
 */
import { fetchOptions, type SourceOptions, type SourceSettings } from '../settings.js';
import { LEETCODE_SETTINGS } from './settings.js';
import type { Source } from '../source.js';
import { fetchLeetCodeReply } from './client.js';
import { PLATFORM } from './source.js';

export {
  GRAPHQL_PATH,
  LEETCODE_BASE_URL,
  LEETCODE_USER_AGENT,
  fetchLeetCodeReply,
  leetcodeExchange,
  type LeetCodeFetchOptions,
} from './client.js';
export { QUERY } from './schema.js';
export { LEETCODE_SETTINGS } from './settings.js';
export { PLATFORM, LABEL, contestType, contestUrl, entryReading, readLeetCodeReply } from './source.js';

/** The source LeetCode's job runs. */
export function leetcodeSource(options: SourceOptions = {}, settings: SourceSettings = LEETCODE_SETTINGS): Source {
  return {
    platform: PLATFORM,
    fetchReply: (call) => fetchLeetCodeReply(fetchOptions(settings, options, call)),
  };
}
