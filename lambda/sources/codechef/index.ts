/**
 * CodeChef as a source (docs/sources.md, "CodeChef"): its settings, and the `Source` its job runs.
 */
import { fetchOptions, type SourceOptions } from '../settings.js';
import { CODECHEF_SETTINGS, type CodeChefSettings } from './settings.js';
import type { Source } from '../source.js';
import { fetchCodeChefReply } from './client.js';
import { PLATFORM } from './source.js';

export { CODECHEF_BASE_URL, CONTESTS_PATH, codechefExchange, fetchCodeChefReply, type CodeChefFetchOptions } from './client.js';
export { CODECHEF_SETTINGS, type CodeChefSettings } from './settings.js';
export { PLATFORM, LABEL, PLACEHOLDER_NAME, contestType, contestUrl, entryReading, readCodeChefReply } from './source.js';

/** The source CodeChef's job runs. */
export function codechefSource(options: SourceOptions = {}, settings: CodeChefSettings = CODECHEF_SETTINGS): Source {
  return {
    platform: PLATFORM,
    fetchReply: (call) => fetchCodeChefReply({ ...fetchOptions(settings, options, call), recentPastSeconds: settings.recentPastSeconds }),
  };
}
