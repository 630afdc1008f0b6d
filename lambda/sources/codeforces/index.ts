/**
 * Codeforces as a source (docs/sources.md): its settings, and the `Source` its job runs — the
 * `contest.list` client (client.ts) mapped to the model's reply (source.ts).
 */
import { DEFAULTS } from '../../contract.js';
import { fetchOptions, type SourceOptions, type SourceSettings } from '../settings.js';
import type { Source } from '../source.js';
import { fetchContests } from './client.js';
import { CODEFORCES_SETTINGS } from './settings.js';
import { codeforcesReply, PLATFORM } from './source.js';

export { CODEFORCES_SETTINGS } from './settings.js';

/** The source Codeforces' job runs. */
export function codeforcesSource(options: SourceOptions = {}, settings: SourceSettings = CODEFORCES_SETTINGS): Source {
  const { baseUrl = DEFAULTS.codeforcesApiUrl, ...seams } = options;
  return {
    platform: PLATFORM,
    fetchReply: async (call) => codeforcesReply(await fetchContests({ ...fetchOptions(settings, seams, call), baseUrl })),
  };
}
