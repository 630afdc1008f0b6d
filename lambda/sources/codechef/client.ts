/**
 * CodeChef's contest list over the shared HTTP layer: one GET, retried and bounded there
 * (docs/sources.md, "The HTTP layer"), read by source.ts. Throws CodeChefError.
 */
import { CodeChefError } from '../errors.js';
import type { Exchange, FetchOptions } from '../http/index.js';
import type { ListedReply } from '../listing.js';
import { fetchSourceReply } from '../reply.js';
import type { SourceReply } from '../source.js';
import { LABEL, readCodeChefReply, type ReadOptions } from './source.js';

export const CODECHEF_BASE_URL = 'https://www.codechef.com';
export const CONTESTS_PATH = '/api/list/contests/all?sort_by=START&sorting_order=asc&offset=0&mode=all';

export interface CodeChefFetchOptions extends FetchOptions, ReadOptions {
  /** @default CODECHEF_BASE_URL (a trailing slash is fine) */
  baseUrl?: string;
}

export function codechefExchange(options: Pick<CodeChefFetchOptions, 'baseUrl'> & ReadOptions = {}): Exchange<ListedReply> {
  const { baseUrl = CODECHEF_BASE_URL, ...read } = options;
  return {
    label: LABEL,
    request: { url: `${baseUrl.replace(/\/+$/, '')}${CONTESTS_PATH}`, headers: { accept: 'application/json' } },
    interpret: (reply, receivedAtMs) => readCodeChefReply(reply, receivedAtMs, read),
  };
}

/** The contest list as the reply the judge reads. */
export function fetchCodeChefReply(options: CodeChefFetchOptions): Promise<SourceReply> {
  const { baseUrl, recentPastSeconds, maxInvalidShare, ...fetchOptions } = options;
  const exchange = codechefExchange({ baseUrl, recentPastSeconds, maxInvalidShare });
  return fetchSourceReply(exchange, fetchOptions, CodeChefError);
}
