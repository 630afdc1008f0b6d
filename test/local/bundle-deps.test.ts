/** The dependency-size table's pure parts (the esbuild build itself is checked in test/infra/bundle.test.ts). */
import { describe, expect, it } from 'vitest';
import { dependencyRows, packageOf } from '../../local/bundle-deps.js';

describe('packageOf', () => {
  it.each([
    ['node_modules/zod/v4/classic/schemas.js', 'zod'],
    ['node_modules/@smithy/core/dist-es/index.js', '@smithy/core'],
    ['node_modules/@aws-sdk/lib-dynamodb/node_modules/@smithy/x/a.js', '@smithy/x'],
    ['lambda/sync/handler.ts', 'lambda/ (own code)'],
  ])('%s → %s', (input, name) => {
    expect(packageOf(input)).toBe(name);
  });
});

describe('dependencyRows', () => {
  it('keeps the largest packages and sums the rest, with shares of the total', () => {
    const rows = dependencyRows(
      {
        totalBytes: 1000,
        probes: {},
        packages: [
          { name: 'a', bytes: 600 },
          { name: 'b', bytes: 300 },
          { name: 'c', bytes: 60 },
          { name: 'd', bytes: 40 },
        ],
      },
      2,
    );
    expect(rows).toEqual([
      { name: 'a', bytes: 600, share: '60.0 %' },
      { name: 'b', bytes: 300, share: '30.0 %' },
      { name: '2 other packages', bytes: 100, share: '10.0 %' },
    ]);
  });
});
