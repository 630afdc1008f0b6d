/**
 * LeetCode's GraphQL over the shared HTTP layer: one POST, retried and bounded there
 * (docs/sources.md, "The HTTP layer"), read by source.ts. LeetCode refuses requests that do not
 * look like its own site's (no JSON Content-Type, no Referer or Origin), so the request carries
 * them and a browser-compatible User-Agent that still names the product; it blocks at times (a
 * 403, a 429, a challenge page): a failed reply, never a wipe. Throws LeetCodeError.
 */
import { LeetCodeError } from '../errors.js';
import type { Exchange, FetchOptions } from '../http/index.js';
import type { ListedReply } from '../listing.js';
import { fetchSourceReply } from '../reply.js';
import type { SourceReply } from '../source.js';
import { QUERY } from './schema.js';
import { LABEL, readLeetCodeReply } from './source.js';

export const LEETCODE_BASE_URL = 'https://leetcode.com';
export const GRAPHQL_PATH = '/graphql';
/** Browser-compatible (`Mozilla/5.0 (compatible; …)`, as crawlers name themselves) and the product's name. */
export const LEETCODE_USER_AGENT = 'Mozilla/5.0 (compatible; contest-sync/0.1; +programming contest calendar sync)';

export interface LeetCodeFetchOptions extends FetchOptions {
  /** @default LEETCODE_BASE_URL (a trailing slash is fine) */
  baseUrl?: string;
  maxInvalidShare?: number;
}

export function leetcodeExchange(options: Pick<LeetCodeFetchOptions, 'baseUrl' | 'maxInvalidShare'> = {}): Exchange<ListedReply> {
  const { baseUrl = LEETCODE_BASE_URL, maxInvalidShare } = options;
  const headers = {
    accept: 'application/json',
    'content-type': 'application/json',
    origin: LEETCODE_BASE_URL,
    referer: `${LEETCODE_BASE_URL}/contest/`,
    'user-agent': LEETCODE_USER_AGENT,
  };
  const read = maxInvalidShare === undefined ? {} : { maxInvalidShare };
  return {
    label: LABEL,
    request: {
      url: `${baseUrl.replace(/\/+$/, '')}${GRAPHQL_PATH}`,
      method: 'POST',
      headers,
      body: JSON.stringify({ query: QUERY, variables: {} }),
    },
    interpret: (reply, receivedAtMs) => readLeetCodeReply(reply, receivedAtMs, read),
  };
}

/** allContests as the reply the judge reads. */
export function fetchLeetCodeReply(options: LeetCodeFetchOptions): Promise<SourceReply> {
  const { baseUrl, maxInvalidShare, ...fetchOptions } = options;
  return fetchSourceReply(leetcodeExchange({ baseUrl, maxInvalidShare }), fetchOptions, LeetCodeError);
}
