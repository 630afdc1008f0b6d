/**
 * The webhook relay's environment and timings, shared with the stack. No imports: the CDK app
 * loads it. docs/events.md, "Webhooks".
 */
export const WEBHOOK_ENV = {
  url: 'WEBHOOK_URL',
  secretArn: 'WEBHOOK_SECRET_ARN',
  /** Requests a second one invocation may send (the stack divides the endpoint's rate by the concurrency). */
  ratePerSecond: 'WEBHOOK_RATE_PER_SECOND',
  queueUrl: 'WEBHOOK_QUEUE_URL',
} as const;

export const WEBHOOK_TIMINGS = {
  /** One request's timeout (seconds): the receiver's documented time to answer. */
  requestTimeoutSeconds: 10,
  /** Messages one invocation is given (the event source mapping's batch). */
  batchSize: 10,
  /**
   * What an invocation keeps after its last request: the backoff of a failed delivery (one SQS
   * call) and its answer (seconds). A request starts only with the receiver's whole timeout and
   * this left.
   */
  finishMarginSeconds: 3,
  /** The relay's timeout: a whole batch at the receiver's slowest answer, with the margin (seconds). */
  relayTimeoutSeconds: 120,
  /** The queue's visibility timeout: six times the relay's, as Lambda asks of a queue it polls (seconds). */
  visibilityTimeoutSeconds: 720,
  /** A failed delivery waits 15 s, then twice as long each time, at most an hour (seconds). */
  firstRetrySeconds: 15,
  maxRetrySeconds: 3600,
  /** Deliveries before a message goes to the dead-letter queue: about a day of retries. */
  maxReceiveCount: 30,
  /** How long the relay keeps a read secret before reading it again (seconds). */
  secretCacheSeconds: 300,
} as const;
