/**
 * The previous release's tables as its own code left them (test/fixtures/upgrade/README.md): the
 * template's table resources, each table's items, and what the capture recorded beside them.
 */
import { readFileSync } from 'node:fs';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

export type FixtureRole = 'contests' | 'reminders' | 'coordination' | 'outbox' | 'door';
export const FIXTURE_ROLES: readonly FixtureRole[] = ['contests', 'reminders', 'coordination', 'outbox', 'door'];

export interface FixtureTable {
  role: FixtureRole;
  Type: string;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  Properties: Record<string, any>;
}

export interface UpgradeFixture {
  commit: string;
  capturedAtMs: number;
  /** The previous release's table resources, by logical id. */
  resources: Record<string, FixtureTable>;
  /** Each table's items as DynamoDB JSON (exact types). */
  raw: Record<FixtureRole, Record<string, AttributeValue>[]>;
  state: {
    contests: Record<'A' | 'B' | 'C' | 'D' | 'E' | 'F' | 'G', number>;
    feed: { userId: string; url: string };
    delivered: string[];
    nextReply: Record<string, unknown>[];
    next: Record<string, AttributeValue>[];
  };
}

const read = (file: string): any => JSON.parse(readFileSync(new URL(`../fixtures/upgrade/${file}`, import.meta.url), 'utf8'));

export function loadUpgradeFixture(): UpgradeFixture {
  const tables = read('tables.json');
  const raw = Object.fromEntries(FIXTURE_ROLES.map((role) => [role, read(`${role}.json`)])) as UpgradeFixture['raw'];
  return { commit: tables.commit, capturedAtMs: tables.capturedAtMs, resources: tables.resources, raw, state: read('state.json') };
}

/** A table's items in the document client's form (number sets as Sets). */
export const documentItems = (fixture: UpgradeFixture, role: FixtureRole): Record<string, unknown>[] =>
  fixture.raw[role].map((item) => unmarshall(item));

const DAY_S = 86_400;
/** Times in the data lie within this of the capture (the data holds weeks of contests and TTLs). */
const WINDOW_S = 400 * DAY_S;

/**
 * The fixture moved forward in time: the capture's moment becomes `toMs` (to the whole minute, at
 * most a minute earlier, so that ledger slots, in minutes, move too). Every
 * epoch time in the data — seconds (starts, TTLs, `dueAt`, number sets), milliseconds (leases,
 * stamps), minutes (ledger slots), ISO strings, and the same inside JSON text (the outbox's
 * `detail`) — moves by the same amount; every other value is kept. No other number in these
 * tables falls within a year of the capture in any of those units.
 */
export function shiftedFixture(fixture: UpgradeFixture, toMs: number): UpgradeFixture & { shiftSeconds: number } {
  const shiftSeconds = Math.floor((toMs - fixture.capturedAtMs) / 60_000) * 60;
  const at = Math.floor(fixture.capturedAtMs / 1000);
  const near = (value: number, unit: number) => Math.abs(value - at * unit) <= WINDOW_S * unit;
  const number = (value: number): number => {
    if (!Number.isInteger(value)) return value;
    if (near(value, 1)) return value + shiftSeconds;
    if (near(value, 1000)) return value + shiftSeconds * 1000;
    if (Math.abs(value - Math.floor(at / 60)) <= WINDOW_S / 60) return value + shiftSeconds / 60;
    return value;
  };
  const text = (value: string): string => {
    if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(value)) {
      const ms = Date.parse(value);
      if (near(Math.floor(ms / 1000), 1)) {
        const moved = new Date(ms + shiftSeconds * 1000).toISOString();
        return value.includes('.') ? moved : moved.replace(/\.\d{3}Z$/, 'Z');
      }
    }
    if (value.startsWith('{') && value.endsWith('}')) {
      try {
        return JSON.stringify(plain(JSON.parse(value)));
      } catch {
        return value;
      }
    }
    return value;
  };
  const plain = (value: unknown): unknown => {
    if (typeof value === 'number') return number(value);
    if (typeof value === 'string') return text(value);
    if (Array.isArray(value)) return value.map(plain);
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
    return value;
  };
  const attribute = (value: AttributeValue): AttributeValue => {
    if (value.N !== undefined) return { N: String(number(Number(value.N))) };
    if (value.S !== undefined) return { S: text(value.S) };
    if (value.NS !== undefined) return { NS: value.NS.map((n) => String(number(Number(n)))) };
    if (value.M !== undefined) return { M: item(value.M) };
    if (value.L !== undefined) return { L: value.L.map(attribute) };
    return value;
  };
  const item = (value: Record<string, AttributeValue>) => Object.fromEntries(Object.entries(value).map(([k, v]) => [k, attribute(v)]));
  const raw = Object.fromEntries(FIXTURE_ROLES.map((role) => [role, fixture.raw[role].map(item)])) as UpgradeFixture['raw'];
  return {
    ...fixture,
    capturedAtMs: fixture.capturedAtMs + shiftSeconds * 1000,
    raw,
    state: {
      ...fixture.state,
      nextReply: plain(fixture.state.nextReply) as Record<string, unknown>[],
      next: fixture.state.next.map(item),
    },
    shiftSeconds,
  };
}
