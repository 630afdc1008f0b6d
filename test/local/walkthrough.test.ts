/**
 * The walkthrough `npm start` prints, as README.md shows it: the same commands, line for line,
 * in an order that works when followed (the feed URL read before `POST /me/calendar` replaces it);
 * and the calendar files following the feeds as the door rebuilds them.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FEED_OBJECTS } from '../../lambda/calendar/contract.js';
import { DEFAULT_PORT, FEED_BUCKET } from '../../local/door/door.js';
import { PUBLIC_FEEDS } from '../../lambda/api/contract.js';
import { DEMO_USER, doorCommands, followCalendars } from '../../local/door/walkthrough.js';
import type { StoredObject } from '../../local/door/object-standin.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The shell block under a README heading. */
function shellBlock(heading: string): string[] {
  const section = README.split(`\n${heading}\n`)[1] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error(`README.md has no sh block under ${heading}`);
  return block.trimEnd().split('\n');
}

describe("the app's door walkthrough", () => {
  it("README.md shows the very commands npm start prints (with the README's token, contest and feed URL)", () => {
    const url = `http://localhost:${DEFAULT_PORT}`;
    expect(shellBlock("### The app's door, locally")).toEqual(
      doorCommands({ url, token: 'eyJhbGciOiJFUzI1NiIs...', contest: 'codeforces:2120', feedUrl: `${url}/calendar/u/YOUR-FEED-TOKEN.ics` }),
    );
  });

  it('reads the feed URL it was given before the POST that replaces it, and the unauthenticated call last', () => {
    const lines = doorCommands({
      url: 'http://localhost:1',
      token: 't',
      contest: 'codeforces:1',
      feedUrl: 'http://localhost:1/calendar/u/F.ics',
    });
    const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
    expect(at(/^export TOKEN=t$/)).toBe(0);
    expect(at(/^curl http:\/\/localhost:1\/calendar\/u\/F\.ics /)).toBeLessThan(at(/-X POST .*\/me\/calendar/));
    expect(at(/no token: 401/)).toBe(lines.length - 1);
  });
});

describe('the calendar files follow the feeds', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('rewrites a file when its feed changes (every platform’s, all platforms’, the user’s), follows a new feed URL, and removes the user’s once revoked', async () => {
    dir = mkdtempSync(join(tmpdir(), 'contest-sync-calendar-'));
    const objects = new Map<string, StoredObject>();
    const put = (key: string, text: string) =>
      objects.set(`${FEED_BUCKET}/${key}`, {
        body: Buffer.from(text),
        etag: `"${text}"`,
        lastModified: Math.floor(Date.now() / 1000) * 1000,
      });
    let hash: string | undefined = 'h1';
    const follower = followCalendars({
      door: { objects: { endpoint: '', objects, requests: new Map(), close: async () => undefined } },
      feeds: { userFeed: async () => (hash === undefined ? undefined : { hash, createdAt: 0 }) },
      dir,
      user: DEMO_USER,
      everyMs: 60_000,
    });
    try {
      for (const feed of PUBLIC_FEEDS) put(FEED_OBJECTS.public(feed), `${feed} v1`);
      put(FEED_OBJECTS.user('h1'), 'user v1');
      await follower.sync();
      const read = (file: string) => readFileSync(file, 'utf8');
      const publicFiles = () => PUBLIC_FEEDS.map((feed) => read(follower.files.public[feed]));
      expect(publicFiles()).toEqual(PUBLIC_FEEDS.map((feed) => `${feed} v1`));
      expect(read(follower.files.user)).toBe('user v1');
      expect(follower.files.user).toBe(join(dir, `${DEMO_USER}.ics`));
      expect(follower.files.public.atcoder).toBe(join(dir, 'atcoder.ics'));
      expect(follower.files.public.all).toBe(join(dir, 'all.ics'));

      // An AtCoder contest moved: its feed and the one of all platforms rebuilt, the others not.
      put(FEED_OBJECTS.public('atcoder'), 'atcoder v2');
      put(FEED_OBJECTS.public('all'), 'all v2');
      hash = 'h2'; // POST /me/calendar: a new token, its feed built under the new hash
      put(FEED_OBJECTS.user('h2'), 'user v2');
      await follower.sync();
      expect(publicFiles()).toEqual(PUBLIC_FEEDS.map((feed) => (feed === 'atcoder' || feed === 'all' ? `${feed} v2` : `${feed} v1`)));
      expect(read(follower.files.user)).toBe('user v2');

      hash = undefined; // DELETE /me/calendar
      await follower.sync();
      expect(existsSync(follower.files.user)).toBe(false);
      expect(read(follower.files.public.all)).toBe('all v2');
    } finally {
      follower.stop();
    }
  });
});
