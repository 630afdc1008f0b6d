/**
 * The HTTP layer every source shares (docs/sources.md, "The HTTP layer"): bounded, retried,
 * abortable fetches over the lean undici build, and the pure rules they follow.
 */
export { decompress, readCapped, tooLarge } from './body.js';
export {
  DEFAULT_MAX_BODY_BYTES,
  defaultDispatcher,
  fetchWithRetries,
  type Exchange,
  type FetchOptions,
  type Fetched,
  type HttpRequest,
} from './fetch.js';
export {
  AttemptFailure,
  BACKOFF_BASE_MS,
  BACKOFF_CAP_MS,
  MAX_QUOTED_BYTES,
  MIN_ATTEMPT_MS,
  USER_AGENT,
  backoffDelay,
  classifyRequestError,
  failed,
  header,
  isChallenge,
  jsonApiBody,
  jsonBody,
  nextWaitMs,
  parseRetryAfter,
  replyMadeAt,
  retryAfter,
  snippet,
  statusProblem,
  unexpectedStatus,
  type Outcome,
  type Problem,
  type RawReply,
} from './policy.js';
