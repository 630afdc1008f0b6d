/**
 * EventBridge event patterns, for the local bus stand-in (local/bus-standin.ts) and the stream
 * poller's filter criteria (local/stream-poller.ts): does an event match a rule's pattern? The
 * rules of EventBridge's documented matching, one function each:
 *
 *   - a pattern is an object; every key must match (AND), a missing field matches only
 *     `{"exists": false}`;
 *   - a nested object descends into the event; a leaf is an array of alternatives (OR);
 *   - an event array matches when any of its elements matches any alternative;
 *   - an alternative is a value (string, number, boolean, null: exact) or one operator:
 *     prefix, suffix (each optionally `equals-ignore-case`), equals-ignore-case, anything-but
 *     (values, prefix, suffix, equals-ignore-case, wildcard), numeric (comparisons, AND),
 *     exists, cidr (IPv4), wildcard;
 *   - `$or` takes a list of patterns, any of which may match.
 *
 * Where AWS documents them:
 *   - Amazon EventBridge User Guide — Creating Amazon EventBridge event patterns
 *     https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html
 *     (fields AND, values OR, arrays, nesting, exact values; `exists: false` for a missing field)
 *   - Amazon EventBridge User Guide — Comparison operators for use in event patterns
 *     https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html
 *     (prefix, suffix, equals-ignore-case, anything-but, numeric, exists, cidr, wildcard, $or)
 *   - AWS Lambda Developer Guide — Control which events Lambda sends to your function (event filtering)
 *     https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html
 *     (the same syntax for an event source mapping's FilterCriteria: local/stream-poller.ts)
 *
 * Tested against AWS's documented examples in test/local/event-pattern.test.ts. A pattern this
 * matcher does not understand is refused with an error naming the operator, never guessed at.
 */

export type Pattern = Record<string, unknown>;

export class EventPatternError extends Error {
  override readonly name = 'EventPatternError';
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Whether `event` matches `pattern` (a parsed EventPattern). */
export function matches(pattern: Pattern, event: unknown): boolean {
  if (!isObject(pattern)) throw new EventPatternError(`an event pattern must be an object, got ${JSON.stringify(pattern)}`);
  return Object.entries(pattern).every(([key, rule]) => {
    if (key === '$or') return orMatches(rule, event);
    const present = isObject(event) && Object.prototype.hasOwnProperty.call(event, key);
    const value = present ? event[key] : undefined;
    if (Array.isArray(rule)) return leafMatches(rule, present, value);
    if (isObject(rule)) return present && isObject(value) ? matches(rule, value) : nestedAbsent(rule);
    throw new EventPatternError(`pattern field ${key} must be an array of values or an object, got ${JSON.stringify(rule)}`);
  });
}

/** `$or`: any of the patterns matches. */
function orMatches(rule: unknown, event: unknown): boolean {
  if (!Array.isArray(rule) || rule.length < 2) throw new EventPatternError('$or takes an array of at least two patterns');
  return rule.some((alternative) => matches(alternative as Pattern, event));
}

/** A nested pattern against a missing object: only `exists: false` leaves can match. */
function nestedAbsent(rule: Record<string, unknown>): boolean {
  return Object.entries(rule).every(([key, inner]) => {
    if (key === '$or') return (inner as Pattern[]).some((alternative) => nestedAbsent(alternative));
    if (Array.isArray(inner)) return leafMatches(inner, false, undefined);
    return isObject(inner) && nestedAbsent(inner);
  });
}

/** A leaf: the alternatives against the field (each element of an array field). */
function leafMatches(alternatives: unknown[], present: boolean, value: unknown): boolean {
  if (alternatives.length === 0) throw new EventPatternError('a pattern leaf must list at least one value');
  const values = Array.isArray(value) ? value : [value];
  return alternatives.some((alternative) => {
    if (isObject(alternative) && 'exists' in alternative) return existsMatches(alternative.exists, present);
    if (!present) return false;
    return values.some((one) => alternativeMatches(alternative, one));
  });
}

function existsMatches(expected: unknown, present: boolean): boolean {
  if (typeof expected !== 'boolean') throw new EventPatternError('exists takes true or false');
  return expected === present;
}

/** One alternative against one value. */
function alternativeMatches(alternative: unknown, value: unknown): boolean {
  if (!isObject(alternative)) return exactMatches(alternative, value);
  const entries = Object.entries(alternative);
  if (entries.length !== 1) throw new EventPatternError(`a matching operator object has one key, got ${JSON.stringify(alternative)}`);
  const [operator, operand] = entries[0]!;
  switch (operator) {
    case 'prefix':
      return affixMatches(operand, value, (text, affix) => text.startsWith(affix));
    case 'suffix':
      return affixMatches(operand, value, (text, affix) => text.endsWith(affix));
    case 'equals-ignore-case':
      return typeof value === 'string' && typeof operand === 'string' && value.toLowerCase() === operand.toLowerCase();
    case 'anything-but':
      return anythingButMatches(operand, value);
    case 'numeric':
      return numericMatches(operand, value);
    case 'cidr':
      return cidrMatches(operand, value);
    case 'wildcard':
      return typeof value === 'string' && wildcardMatches(operand, value);
    default:
      throw new EventPatternError(`unsupported event pattern operator: ${operator}`);
  }
}

/** Exact: strings, numbers (numerically), booleans and null. */
function exactMatches(expected: unknown, value: unknown): boolean {
  if (typeof expected === 'number' && typeof value === 'number') return expected === value;
  return expected === value;
}

/** prefix / suffix, with an optional `equals-ignore-case` operand. */
function affixMatches(operand: unknown, value: unknown, test: (text: string, affix: string) => boolean): boolean {
  if (typeof value !== 'string') return false;
  if (typeof operand === 'string') return test(value, operand);
  if (isObject(operand) && typeof operand['equals-ignore-case'] === 'string')
    return test(value.toLowerCase(), operand['equals-ignore-case'].toLowerCase());
  throw new EventPatternError(`prefix/suffix takes a string or { "equals-ignore-case": string }, got ${JSON.stringify(operand)}`);
}

/** anything-but: a value, a list of values, or prefix / suffix / equals-ignore-case / wildcard. */
function anythingButMatches(operand: unknown, value: unknown): boolean {
  if (value === undefined) return false;
  if (Array.isArray(operand)) return !operand.some((one) => exactMatches(one, value));
  if (!isObject(operand)) return !exactMatches(operand, value);
  const [operator, inner] = Object.entries(operand)[0] ?? [];
  // The string operators match strings only.
  if (typeof value !== 'string') return false;
  const list = (x: unknown): string[] => (Array.isArray(x) ? (x as string[]) : [x as string]);
  switch (operator) {
    case 'prefix':
      return !list(inner).some((affix) => value.startsWith(affix));
    case 'suffix':
      return !list(inner).some((affix) => value.endsWith(affix));
    case 'equals-ignore-case':
      return !list(inner).some((text) => text.toLowerCase() === value.toLowerCase());
    case 'wildcard':
      return !list(inner).some((glob) => wildcardMatches(glob, value));
    default:
      throw new EventPatternError(`unsupported anything-but operand: ${JSON.stringify(operand)}`);
  }
}

const COMPARE: Record<string, (a: number, b: number) => boolean> = {
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '=': (a, b) => a === b,
  '>=': (a, b) => a >= b,
  '>': (a, b) => a > b,
};

/** numeric: pairs of comparison and number, all of which must hold. */
function numericMatches(operand: unknown, value: unknown): boolean {
  if (!Array.isArray(operand) || operand.length === 0 || operand.length % 2 !== 0)
    throw new EventPatternError(`numeric takes [op, number, ...], got ${JSON.stringify(operand)}`);
  if (typeof value !== 'number') return false;
  for (let i = 0; i < operand.length; i += 2) {
    const compare = COMPARE[operand[i] as string];
    const bound = operand[i + 1];
    if (compare === undefined || typeof bound !== 'number')
      throw new EventPatternError(`numeric comparison ${JSON.stringify(operand[i])} ${JSON.stringify(bound)} is not supported`);
    if (!compare(value, bound)) return false;
  }
  return true;
}

const ipv4 = (text: string): number | undefined => {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
};

/** cidr: an IPv4 address inside the block. */
function cidrMatches(operand: unknown, value: unknown): boolean {
  const [base, bits] = typeof operand === 'string' ? operand.split('/') : [];
  const network = base === undefined ? undefined : ipv4(base);
  const length = Number(bits);
  if (network === undefined || !Number.isInteger(length) || length < 0 || length > 32)
    throw new EventPatternError(`cidr takes an IPv4 block, got ${JSON.stringify(operand)}`);
  const address = typeof value === 'string' ? ipv4(value) : undefined;
  if (address === undefined) return false;
  const size = 2 ** (32 - length);
  return Math.floor(address / size) === Math.floor(network / size);
}

/** wildcard: `*` matches any run of characters (`\*` a literal star). */
function wildcardMatches(operand: unknown, value: string): boolean {
  if (typeof operand !== 'string') throw new EventPatternError(`wildcard takes a string, got ${JSON.stringify(operand)}`);
  const source = operand
    .split(/(\\\*|\*)/)
    .map((part) => (part === '*' ? '.*' : part === '\\*' ? '\\*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, 's').test(value);
}
