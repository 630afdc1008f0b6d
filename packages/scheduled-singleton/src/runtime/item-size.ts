/**
 * An item's size as DynamoDB counts it for capacity units, from its document-client form: the
 * UTF-8 bytes of every attribute name plus its value — a string its UTF-8 bytes, a number one byte
 * per two significant digits plus one, a boolean or null one, binary its raw bytes, a set the sum of
 * its elements, a list or map 3 bytes plus each element and one byte per element ("DynamoDB item
 * sizes and formats", Amazon DynamoDB Developer Guide). A write costs one write unit per KB of the
 * larger of the item before and after (twice in a transaction).
 */
export function itemSizeBytes(item: Readonly<Record<string, unknown>>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue;
    bytes += Buffer.byteLength(name, 'utf8') + valueBytes(value);
  }
  return bytes;
}

function valueBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number' || typeof value === 'bigint') return numberBytes(String(value));
  if (typeof value === 'boolean' || value === null) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...(value as Set<unknown>)].reduce<number>((sum, element) => sum + valueBytes(element), 0);
  if (Array.isArray(value)) return 3 + value.reduce<number>((sum, element) => sum + valueBytes(element) + 1, 0);
  if (typeof value === 'object') {
    return (
      3 +
      Object.entries(value as Record<string, unknown>).reduce(
        (sum, [name, element]) => sum + Buffer.byteLength(name, 'utf8') + valueBytes(element) + 1,
        0,
      )
    );
  }
  return 0;
}

/** One byte per two significant digits (leading and trailing zeros trimmed), plus one. */
function numberBytes(text: string): number {
  const digits = text.replace(/^-/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}
