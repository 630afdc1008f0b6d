/**
 * What every source's client does last: its exchange fetched through the shared HTTP layer (retried,
 * bounded) and the listing it read turned into the reply the judge reads.
 */
import type { SourceErrorClass } from './errors.js';
import { fetchWithRetries, type Exchange, type FetchOptions } from './http/index.js';
import { sourceReply, type ListedReply } from './listing.js';
import type { SourceReply } from './source.js';

/** Throws `errorClass`, the platform's SourceError, for a reply it cannot believe whole. */
export async function fetchSourceReply(
  exchange: Exchange<ListedReply>,
  options: FetchOptions,
  errorClass: SourceErrorClass,
): Promise<SourceReply> {
  const fetched = await fetchWithRetries(exchange, options, errorClass);
  return sourceReply(fetched.value, fetched);
}
