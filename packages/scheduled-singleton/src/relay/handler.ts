/** The outbox relay function OutboxDelivery bundles: the stream consumer, configured by its environment. */
import { outboxRelay } from './index.js';

export const handler = outboxRelay();
