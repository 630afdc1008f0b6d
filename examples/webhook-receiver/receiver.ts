/**
 * A webhook receiver for contest-sync's events (docs/events.md, "Webhooks"): Express, verifying
 * each request with the shared secret (Standard Webhooks: the signature over id, timestamp and
 * body; a timestamp more than 5 minutes off is refused, so a captured request cannot be replayed
 * later) and handling each event once (`webhook-id` is the event's `detail.eventId`).
 */
import express from 'express';
import { Webhook } from 'standardwebhooks';

export function webhookReceiver(secret: string, handle: (event: unknown) => Promise<void>, seen = new Set<string>()) {
  const webhook = new Webhook(secret);
  const app = express();
  app.post('/webhooks/contest-sync', express.text({ type: 'application/json', limit: '256kb' }), async (req, res) => {
    let event: unknown;
    try {
      event = webhook.verify(req.body as string, req.headers as Record<string, string>); // signature, then the timestamp's window
    } catch {
      return res.status(401).end(); // not from contest-sync, altered, or replayed late
    }
    const id = req.get('webhook-id')!; // = detail.eventId: the same event, however often it is sent
    if (seen.has(id)) return res.status(204).end(); // handled already (or being handled)
    seen.add(id); // in production: a conditional put of the id in a table, kept 48 hours
    try {
      await handle(event); // your side effect, once
    } catch (error) {
      seen.delete(id); // not handled: the relay retries it
      throw error;
    }
    res.status(204).end();
  });
  return app;
}
