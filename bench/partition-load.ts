/**
 * The write units each partition key takes, tallied from the requests DynamoDB Local applied
 * (the proxy's `setAfterApply`), at AWS's rates (DynamoDB developer guide, "Capacity management
 * for transactions" and "Read/write capacity mode"): an action of a transaction costs 2 write
 * units per KB of item, a plain write 1 per KB, and a write that changes an item a GSI projects
 * costs the index 1 unit per KB on the index's partition key. One partition serves ~1,000 write
 * units a second, so the most units any single key takes bounds the time of a burst on AWS,
 * however many jobs write it. Pure: no I/O; bench/round.ts feeds it.
 */

/** The partition key attribute of each table (DescribeTable), and what the Reminders table's indexes are keyed on. */
export interface KeyNames {
  /** Table name → its partition key attribute. */
  partitionKeys: ReadonlyMap<string, string>;
  reminders: string;
  /** The stack's DUE_SHARDS: a claimed row's byDue entry was under its bucket mod this. */
  dueShards: number;
  /** How a table is named in the keys (its role: `Reminders`), else its name. */
  labels?: ReadonlyMap<string, string>;
}

type Json = Record<string, unknown>;
const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Item size in KB as AWS rounds it (up), estimated high from the request's JSON (at least 1). */
const kilobytes = (item: unknown): number => Math.max(1, Math.ceil(Buffer.byteLength(JSON.stringify(item ?? {}), 'utf8') / 1024));

/** An attribute value as DynamoDB's JSON carries it (`{"S": "x"}`, `{"N": "1"}`), as text. */
const valueText = (value: unknown): string => (isJson(value) ? String(Object.values(value)[0]) : String(value));

/** A bucket key `<contestId>#<bucket>`: its bucket (two digits), or undefined. */
const bucketOfKey = (contestKey: string): number | undefined => {
  const match = /#(\d{2})$/.exec(contestKey);
  return match === null ? undefined : Number(match[1]);
};

/** One write an action makes, on one partition key: `table key=value` or `table/index key=value`. */
export interface KeyWrite {
  key: string;
  units: number;
}

/**
 * The writes of one applied request. A claim (an Update of a Reminders row that removes
 * `dueShard`) also removes the row's byDue entry (1 unit on `dueShard = bucket mod DUE_SHARDS`)
 * and changes its byUser entry (1 unit on the user).
 */
export function keyWrites(operation: string, body: Json | undefined, names: KeyNames): KeyWrite[] {
  if (body === undefined) return [];
  const transaction = operation === 'TransactWriteItems';
  const actions: Json[] = transaction
    ? (Array.isArray(body.TransactItems) ? body.TransactItems : []).flatMap((item) =>
        isJson(item) ? Object.values(item).filter(isJson) : [],
      )
    : ['PutItem', 'UpdateItem', 'DeleteItem'].includes(operation)
      ? [body]
      : [];
  return actions.flatMap((action) => {
    const table = String(action.TableName);
    const attribute = names.partitionKeys.get(table);
    const source = isJson(action.Key) ? action.Key : isJson(action.Item) ? action.Item : undefined;
    if (attribute === undefined || source === undefined) return [];
    const value = valueText(source[attribute]);
    const units = (transaction ? 2 : 1) * (isJson(action.Item) ? kilobytes(action.Item) : 1);
    const label = names.labels?.get(table) ?? table;
    const writes: KeyWrite[] = [{ key: `${label} ${attribute}=${value}`, units }];
    if (
      table === names.reminders &&
      typeof action.UpdateExpression === 'string' &&
      /REMOVE[^=]*\bdueShard\b/.test(action.UpdateExpression)
    ) {
      const bucket = bucketOfKey(value);
      if (bucket !== undefined) writes.push({ key: `${label}/byDue dueShard=${bucket % names.dueShards}`, units: 1 });
      if (isJson(action.Key)) writes.push({ key: `${label}/byUser userId=${valueText(action.Key.userId)}`, units: 1 });
    }
    return writes;
  });
}

/** Write units by partition key, summed. */
export class PartitionLoad {
  readonly units = new Map<string, number>();

  add(writes: readonly KeyWrite[]): void {
    for (const { key, units } of writes) this.units.set(key, (this.units.get(key) ?? 0) + units);
  }

  /** The `n` keys that took the most units, most first. */
  hottest(n: number): KeyWrite[] {
    return [...this.units]
      .map(([key, units]) => ({ key, units }))
      .sort((a, b) => b.units - a.units || a.key.localeCompare(b.key))
      .slice(0, n);
  }
}
