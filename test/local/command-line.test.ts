/**
 * Every script a person runs answers each mistake in one line that says what to do, then its
 * usage, with exit code 2 — before it starts DynamoDB Local or loads the app (cli/args.ts) — and
 * prints its usage on `--help`. Each script is run as npm runs it (tsx), once per mistake.
 */
import { execFile } from 'node:child_process';
import { connect, createServer, type Server } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOURCE_JOBS } from '../../lambda/sources/jobs.js';
import { DEFAULT_PORT } from '../../local/door/door.js';

const SCRIPTS = {
  'npm start': 'bin/local.ts',
  'npm run status': 'bin/status.ts',
  'npm run redrive': 'bin/redrive.ts',
  'npm run bench': 'bench/bench.ts',
  'npm run simulate': 'test/sim/cli.ts',
  'npm run chaos': 'test/chaos/cli.ts',
} as const;
type Command = keyof typeof SCRIPTS;

/** The environment of a script started by hand: none of npm's settings or flags (some cases add them back). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
  return { ...env, ...extra };
}

async function run(command: Command, args: string[], env: Record<string, string> = {}, timeout = 60_000) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', SCRIPTS[command], ...args], {
      env: cleanEnv(env),
      timeout,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** A refused command line: exit 2, the one line, then the usage and nothing else. */
async function expectRefused(command: Command, args: string[], line: string | RegExp, env: Record<string, string> = {}) {
  const answer = await run(command, args, env);
  const lines = answer.stderr.trimEnd().split('\n');
  expect({ code: answer.code, second: lines[1]?.slice(0, 7 + command.length) }).toEqual({ code: 2, second: `usage: ${command}` });
  if (typeof line === 'string') expect(lines[0]).toBe(`${command}: ${line}`);
  else expect(lines[0]).toMatch(new RegExp(`^${command}: ${line.source}$`));
  expect(
    lines.slice(2).every((l) => l.startsWith('  ')),
    answer.stderr,
  ).toBe(true);
  expect(answer.stdout).toBe('');
}

describe('the scripts a person runs', () => {
  it.concurrent.for(Object.keys(SCRIPTS) as Command[])('%s --help prints the usage and exits 0', async (command) => {
    const answer = await run(command, ['--help']);
    expect([answer.code, answer.stdout.split('\n')[0]?.startsWith(`usage: ${command}`), answer.stderr]).toEqual([0, true, '']);
    expect(answer.stdout.split('\n').length).toBeGreaterThan(2);
  });

  it.concurrent.for([
    ['npm start', ['--ofline'], 'unknown option --ofline (did you mean --offline?)'],
    ['npm start', ['--port'], '--port needs a value'],
    ['npm start', ['--port', 'x'], '--port takes a port number (0 to 65535), got x'],
    ['npm start', ['--offline=yes'], '--offline takes no value'],
    ['npm start', ['offline'], 'unexpected argument offline (every option starts with --)'],
    ['npm start', ['--event', '{dryRun}'], /--event is not JSON \(.+\): e\.g\. --event '\{"dryRun":true\}'/],
    [
      'npm start',
      ['--event', '"x"'],
      '--event is not an event the sync takes: invalid event: expected a JSON object ({}, {"dryRun": true}) or an EventBridge Scheduled Event, got a string',
    ],
    ['npm start', ['--event', '{"dryRun":"yes"}'], /--event is not an event the sync takes: invalid console event: dryRun: .+/],
    ['npm run status', ['--runs', 'x'], '--runs takes a whole number, got x'],
    ['npm run status', ['--local', '--stack', 'ContestSync-dev'], 'give one of --stack, --table and --local'],
    ['npm run redrive', [], '--from is required (an ISO time, e.g. 2026-12-01T10:00:00Z)'],
    [
      'npm run redrive',
      ['--from', '2026-12-01T10:00:00Z', '--outbox', 'T'],
      'give --outbox, --contests and --reminders together, or --stack',
    ],
    ['npm run bench', ['--only', 'lease'], '--only takes delivery, door, webhooks, peers, got lease'],
    ['npm run bench', ['--recrod'], 'unknown option --recrod (did you mean --record?)'],
    ['npm run simulate', ['--days', '0'], '--days takes a whole number from 1 to 366, got 0'],
    ['npm run chaos', ['--aws', 'maybe'], '--aws takes on or off, got maybe'],
  ] as [Command, string[], string | RegExp][])('%s %j: one line, the usage, exit 2', async ([command, args, line]) => {
    await expectRefused(command, args, line);
  });

  it.concurrent('npm start --offline without --: npm kept the flag (npm_config_offline), and the script says what works', async () => {
    const npm = { npm_lifecycle_event: 'start', npm_config_offline: 'true' };
    await expectRefused('npm start', [], 'npm took --offline for itself and did not pass it on: use npm start -- --offline', npm);
    await expectRefused('npm start', ['--offline'], 'npm took --no-serve for itself and did not pass it on: use npm start -- --no-serve', {
      npm_lifecycle_event: 'start',
      npm_config_serve: '',
    });
    // Given after --, the flag is the script's: nothing to say.
    const given = await run('npm start', ['--offline', '--help'], npm);
    expect(given.code).toBe(0);
  });

  describe('npm start with its port in use', () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('says so in one line, with a port that is free, before it starts anything', async () => {
      const answer = await run('npm start', ['--offline', '--port', String(port)]);
      expect(answer.code).toBe(2);
      expect(answer.stderr).toMatch(
        new RegExp(`^npm start: port ${port} is in use \\(another npm start\\?\\): stop it, or run npm start -- --port \\d+\\n$`),
      );
      expect(answer.stdout).toBe('');
    });

    it('uses the port the README names by default', async () => {
      expect(DEFAULT_PORT).toBe(3100);
      expect((await run('npm start', ['--help'])).stdout).toContain(`(default ${DEFAULT_PORT}; 0: any free port)`);
    });
  });

  describe('npm start whose sync fails (every platform unreachable)', () => {
    // Each platform's origin, in its job's variable: a local server that drops every connection (no test calls the real sites).
    let upstream: Server;
    let connections = 0;
    let origin: string;
    let port: number;
    beforeAll(async () => {
      upstream = createServer((socket) => {
        connections += 1;
        socket.destroy();
      });
      await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
      // A port nothing listens on, for the door.
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      port = (probe.address() as { port: number }).port;
      await new Promise<void>((resolve) => probe.close(() => resolve()));
    });
    afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

    /** Whether something accepts a connection on 127.0.0.1:`at`. */
    const accepts = (at: number) =>
      new Promise<boolean>((resolve) => {
        const socket = connect(at, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });

    // Its own DynamoDB Local and a synthesis with bundling: minutes on a busy machine. The bound is for a hung run.
    it('exits 1 with one line saying so, prints no token, door URL or commands, and never serves', { timeout: 360_000 }, async () => {
      const env = Object.fromEntries(SOURCE_JOBS.map((job) => [job.baseUrlVariable, `${origin}/${job.platform}`]));
      let served = false;
      let done = false;
      const answered = run('npm start', ['--port', String(port)], env, 330_000).finally(() => {
        done = true;
      });
      // While it runs, the door's port never accepts a connection.
      while (!done) {
        if (await accepts(port)) served = true;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const answer = await answered;
      const labels = SOURCE_JOBS.map((job) => job.label).join(', ');
      // On stderr, apart from the bundler's report of the synthesis (every run prints it): the one line.
      const bundler = /^(Bundling asset |⚡ Done in |\s*\.\.\.\S+\s+\S+$|\s*$)/;
      expect(answer.stderr.split('\n').filter((line) => !bundler.test(line))).toEqual([
        `npm start: the sync of ${labels} failed (its summary above): nothing is served; fix that first, or run npm start -- --offline`,
      ]);
      expect(answer.code).toBe(1);
      // Every platform's job asked the local origin, and each one's summary says it failed.
      expect(connections).toBeGreaterThanOrEqual(SOURCE_JOBS.length);
      for (const job of SOURCE_JOBS) expect(answer.stdout).toContain(`${job.label} could not be reached or answered badly`);
      for (const promise of ['TOKEN', 'eyJ', 'curl', "The app's door", 'local API Gateway', 'Serving', 'Calendar files', `:${port}`])
        expect(answer.stdout, promise).not.toContain(promise);
      expect(served).toBe(false);
      // Nothing it started listens any more: neither the door's port nor DynamoDB Local's.
      const dynamoPort = Number(/DynamoDB Local \(in memory\) on http:\/\/[^:]+:(\d+)/.exec(answer.stdout)?.[1]);
      expect(dynamoPort, answer.stdout.slice(0, 2000)).toBeGreaterThan(0);
      expect([await accepts(port), await accepts(dynamoPort)]).toEqual([false, false]);
    });
  });
});
