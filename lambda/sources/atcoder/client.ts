/**
 * AtCoder's contests page over the shared HTTP layer: one GET, retried and bounded there
 * (docs/sources.md, "The HTTP layer"), read by source.ts. Throws AtCoderError.
 */
import { AtCoderError } from '../errors.js';
import type { Exchange, FetchOptions } from '../http/index.js';
import type { ListedReply } from '../listing.js';
import { fetchSourceReply } from '../reply.js';
import type { SourceReply } from '../source.js';
import { LABEL, readAtCoderReply } from './source.js';

export const ATCODER_BASE_URL = 'https://atcoder.jp';
/** The English page: the same tables and ids as the Japanese one, names in English where AtCoder has them. */
export const CONTESTS_PATH = '/contests/?lang=en';

export interface AtCoderFetchOptions extends FetchOptions {
  /** @default ATCODER_BASE_URL (a trailing slash is fine) */
  baseUrl?: string;
  /** More invalid rows than this share fail the reply. @default 0.1 */
  maxInvalidShare?: number;
}

export function atcoderExchange(options: Pick<AtCoderFetchOptions, 'baseUrl' | 'maxInvalidShare'> = {}): Exchange<ListedReply> {
  const base = (options.baseUrl ?? ATCODER_BASE_URL).replace(/\/+$/, '');
  const read = options.maxInvalidShare === undefined ? {} : { maxInvalidShare: options.maxInvalidShare };
  return {
    label: LABEL,
    request: { url: `${base}${CONTESTS_PATH}`, headers: { accept: 'text/html,application/xhtml+xml', 'accept-language': 'en' } },
    interpret: (reply, receivedAtMs) => readAtCoderReply(reply, receivedAtMs, read),
  };
}

/** The contests page as the reply the judge reads. */
export function fetchAtCoderReply(options: AtCoderFetchOptions): Promise<SourceReply> {
  const { baseUrl, maxInvalidShare, ...fetchOptions } = options;
  return fetchSourceReply(atcoderExchange({ baseUrl, maxInvalidShare }), fetchOptions, AtCoderError);
}
