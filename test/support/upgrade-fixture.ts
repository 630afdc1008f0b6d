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
