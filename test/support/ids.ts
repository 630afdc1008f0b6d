/**
 * Contest ids as tests name them: a Codeforces contest by its number, qualified through the
 * Codeforces source (the only place that knows its ids are numbers), or a qualified id as it is.
 */
import { codeforcesId } from '../../lambda/sources/codeforces/source.js';

export type TestId = number | string;

/** `cf(2120)` → `codeforces:2120`; a string is taken as a qualified id already. */
export const cf = (id: TestId): string => (typeof id === 'number' ? codeforcesId(id) : id);

/**
 * The Codeforces number of a qualified id the product stored or published (`codeforces:2120` →
 * 2120), for a test whose world is Codeforces' (the simulation's truth lists numbered rounds). A
 * row key `codeforces:2120#07` names its contest too; anything else is NaN.
 */
export const codeforcesNumber = (id: unknown): number => {
  const match = /^codeforces:([1-9][0-9]*)(?:#\d{2})?$/.exec(String(id));
  return match === null ? Number.NaN : Number(match[1]);
};
