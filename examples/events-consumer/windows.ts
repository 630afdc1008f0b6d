/**
 * How long this consumer remembers an event id, and keeps the events it could not take. They
 * follow the product's windows (docs/events.md, "Windows"): the redrive resends only events
 * committed at most 6 days ago, and a resent one reaches the bus within a day, so an id
 * remembered 7 days is remembered for any delivery. An example stands alone: the values are
 * written here, and a test checks them against the product's (lambda/event-windows.ts).
 */
export const DEDUPE_SECONDS = 7 * 86_400;
/** Events the function failed after its retries: kept as long as the product keeps its own dead letters. */
export const DEAD_LETTER_RETENTION_SECONDS = 5 * 86_400;
