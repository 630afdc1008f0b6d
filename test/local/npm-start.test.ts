/**
 * `npm start -- --offline` as a user runs it (its own DynamoDB Local, the recorded reply): the
 * sync, a reminder the app sets due now, the delivery job, and the outbox delivered through the
 * stream, the relay and the bus to a consumer that dedupes. Each contest change and the reminder
 * reach the consumer once.
 */
import { SOURCE_JOBS } from '../../lambda/sources/jobs.js';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('npm start -- --offline', () => {
  // Its own DynamoDB Local, a synthesis with bundling and the door: minutes on a machine busy with
  // other work. The bound is for a hung run, not a verdict.
  it(
    'shows the events of a local sync and of a due reminder, each received once, and leaves no synthesis behind',
    { timeout: 360_000 },
    async () => {
      // Its own temporary directory: what the run leaves there is its own.
      const tmp = mkdtempSync(join(tmpdir(), 'contest-sync-npm-start-'));
      const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bin/local.ts', '--offline', '--no-serve', '--port', '0'], {
        env: { ...process.env, TMPDIR: tmp, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', CDK_DISABLE_CLI_TELEMETRY: 'true' },
        timeout: 330_000,
        maxBuffer: 16 * 1024 * 1024,
      }).finally(() => {
        expect(readdirSync(tmp).filter((name) => name.startsWith('contest-sync-synth-'))).toEqual([]);
        rmSync(tmp, { recursive: true, force: true });
      });
      // Every platform's job syncs from its recorded reply and shows its upcoming contests.
      const perPlatform = [...stdout.matchAll(/Upcoming (\S+) contests \((\d+)\)/g)].map((m) => ({ label: m[1], count: Number(m[2]) }));
      expect(perPlatform.map((p) => p.label)).toEqual(SOURCE_JOBS.map((job) => job.label));
      for (const { label, count } of perPlatform) expect(count, label).toBeGreaterThan(0);
      const upcoming = perPlatform.reduce((sum, p) => sum + p.count, 0);
      // A first sync on a new database writes what README.md's --persist lines say (fence 1).
      const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
      const promised = /# fence 1: (\d+) contests written/.exec(readme);
      expect(promised, 'README.md: "# fence 1: N contests written"').not.toBeNull();
      expect(/"contestsWritten": (\d+)/.exec(stdout)?.[1]).toBe(promised![1]);
      expect(/# fence 2: 0 written, (\d+) unchanged/.exec(readme)?.[1], 'the second run: as many unchanged').toBe(promised![1]);
      const received = /Events the app received \((\d+); (\d+) duplicate/.exec(stdout);
      expect(received, stdout.slice(-3000)).not.toBeNull();
      // One announcement per upcoming contest and one ReminderDue: each once.
      expect(Number(received![1])).toBe(upcoming + 1);
      const rows = stdout.split('\n').filter((line) => /'contest-sync\.(contests(\.[a-z]+)?|reminders)'/.test(line));
      expect(rows.filter((line) => line.includes("'ContestAnnounced'"))).toHaveLength(upcoming);
      const reminders = rows.filter((line) => line.includes("'ReminderDue'"));
      expect(reminders).toHaveLength(1);
      expect(reminders[0]).toContain("'local-user'");
      const ids = rows.map((line) => /'((?:contest|reminder-due):[0-9a-f]{32})'/.exec(line)?.[1]);
      expect(new Set(ids).size).toBe(rows.length);
      expect(stdout).toMatch(/Reminder delivery: .*"delivered":1/);
      // --no-serve: the API stops with the run, so no commands promise a server.
      expect(stdout).toContain('The API stopped with this run (--no-serve)');
      expect(stdout).not.toContain('export TOKEN=');
    },
  );
});
