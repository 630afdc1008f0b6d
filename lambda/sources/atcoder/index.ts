/**
 * AtCoder as a source (docs/sources.md, "AtCoder"): its settings, and the `Source` its job runs.
 */
import { fetchOptions, type SourceOptions, type SourceSettings } from '../settings.js';
import { ATCODER_SETTINGS } from './settings.js';
import type { Source } from '../source.js';
import { fetchAtCoderReply } from './client.js';
import { PLATFORM } from './source.js';

export { ATCODER_BASE_URL, CONTESTS_PATH, atcoderExchange, fetchAtCoderReply, type AtCoderFetchOptions } from './client.js';
export { ATCODER_SETTINGS } from './settings.js';
export { PLATFORM, LABEL, contestType, contestUrl, parseDuration, parseRated, readAtCoderReply, rowReading, type Rated } from './source.js';

/** The source AtCoder's job runs. */
export function atcoderSource(options: SourceOptions = {}, settings: SourceSettings = ATCODER_SETTINGS): Source {
  return {
    platform: PLATFORM,
    fetchReply: (call) => fetchAtCoderReply(fetchOptions(settings, options, call)),
  };
}
