/** Where the construct bundles a job from (findProject): the adopter's project, not this package's. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findProject } from '@contest-sync/scheduled-singleton/cdk';

describe('findProject', () => {
  it("is the nearest folder above the entry with a lock file: the adopter's project, not this package's", () => {
    const root = mkdtempSync(join(tmpdir(), 'find-project-'));
    mkdirSync(join(root, 'app', 'src', 'jobs'), { recursive: true });
    writeFileSync(join(root, 'app', 'package-lock.json'), '{}');
    writeFileSync(join(root, 'app', 'src', 'jobs', 'handler.ts'), '');
    expect(findProject(join(root, 'app', 'src', 'jobs', 'handler.ts'))).toEqual({
      projectRoot: join(root, 'app'),
      depsLockFilePath: join(root, 'app', 'package-lock.json'),
    });
    writeFileSync(join(root, 'app', 'src', 'yarn.lock'), '');
    expect(findProject(join(root, 'app', 'src', 'jobs', 'handler.ts'))?.depsLockFilePath).toBe(join(root, 'app', 'src', 'yarn.lock'));
  });
});
