/**
 * The DynamoDB client the function uses, and the worst case of one call through it: the time
 * budgets of a run (the stop margin kept for the release) are derived from it, so that the margin
 * covers the SDK's own timeouts and retries (the package README, "Timing rules"). No imports: the CDK
 * app reads it too, to refuse a function timeout the lease timing cannot honour.
 */
export const DYNAMO_CLIENT_SETTINGS = {
  /** SDK attempts per call (standard retry mode: throttling, 5xx, network errors). */
  maxAttempts: 3,
  connectionTimeoutMs: 1_000,
  /** Socket timeout of one attempt: DynamoDB answers in milliseconds; 3 s is a stuck connection. */
  requestTimeoutMs: 3_000,
  /** The SDK's standard backoff waits at most base·2^attempt with base 100 ms between attempts. */
  sdkBackoffBaseMs: 100,
} as const;

/** The longest one SDK call can take before it fails: every attempt times out, with backoff between. */
export function worstCallMs(settings: typeof DYNAMO_CLIENT_SETTINGS = DYNAMO_CLIENT_SETTINGS): number {
  const perAttempt = settings.connectionTimeoutMs + settings.requestTimeoutMs;
  let backoff = 0;
  for (let attempt = 1; attempt < settings.maxAttempts; attempt += 1) backoff += settings.sdkBackoffBaseMs * 2 ** attempt;
  return settings.maxAttempts * perAttempt + backoff;
}
