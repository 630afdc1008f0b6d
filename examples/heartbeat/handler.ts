/** The heartbeat job: one row `beat#<interval>` per schedule interval, fenced by the lease, and its `Beat` event once. */
import { setTimeout as sleep } from 'node:timers/promises';
import { scheduledSingleton } from '@contest-sync/scheduled-singleton';

export const handler = scheduledSingleton(
  async ({ interval, runId, fence, signal, commit }) => {
    await sleep(Number(process.env.HEARTBEAT_WORK_DELAY_MS ?? 0), undefined, { signal }); // a test hook: slow work
    const Item = { pk: `beat#${interval ?? runId}`, runId, fence, at: new Date().toISOString() };
    const events = [{ id: Item.pk, detailType: 'Beat', detail: { beat: Item.pk, fence } }]; // the id names the change
    await commit([{ Put: { TableName: process.env.BEATS_TABLE_NAME, Item } }], { final: true, events });
    return { beat: Item.pk };
  },
  { summary: (value) => value },
);
