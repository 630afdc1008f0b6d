/**
 * The temporary cloud assembly a synthesis makes (`contest-sync-synth-*`, local/template.ts)
 * leaves with the process: when it ends, when it exits, and when Ctrl-C stops it.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const TMP = mkdtempSync(join(tmpdir(), 'contest-sync-cleanup-'));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

/** Synthesizes (no bundling) in a child whose temporary directory is its own, then `then`; resolves with how it ended and what it left. */
async function synthIn(name: string, then: string, signal?: NodeJS.Signals, before = '') {
  const dir = join(TMP, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  const script = `${before} const { synthTemplate } = await import('./local/template.ts'); const { outdir } = await synthTemplate({ bundle: false }); console.log(outdir); ${then}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: { ...process.env, TMPDIR: dir },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let outdir = '';
  child.stdout.on('data', (chunk: Buffer) => {
    outdir += chunk.toString();
    if (signal !== undefined && outdir.endsWith('\n')) child.kill(signal);
  });
  const ended = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, sig) => resolve({ code, signal: sig })),
  );
  // Only the synthesis's own (tsx keeps its cache in the temporary directory too).
  return { ...ended, outdir: outdir.trim(), left: readdirSync(dir).filter((name) => name.startsWith('contest-sync-synth-')) };
}

// Each case synthesizes in its own child (a few seconds of CPU each): the bound is for a hung child, not a verdict.
describe('the synthesis leaves nothing behind', { timeout: 240_000 }, () => {
  it.concurrent('when the process ends on its own', async () => {
    const ended = await synthIn('ends', '');
    expect(ended.outdir).toMatch(/contest-sync-synth-/);
    expect([ended.code, existsSync(ended.outdir), ended.left]).toEqual([0, false, []]);
  });

  it.concurrent('when it ends through process.exit', async () => {
    const exited = await synthIn('exits', 'process.exit(3);');
    expect([exited.code, exited.left]).toEqual([3, []]);
  });

  it.concurrent.for(['SIGINT', 'SIGTERM'] as const)(
    'when %s (Ctrl-C) stops it, which then ends as the signal would have ended it',
    async (signal) => {
      const stopped = await synthIn(signal, 'setInterval(() => undefined, 1000);', signal);
      expect([stopped.signal, stopped.left]).toEqual([signal, []]);
    },
  );

  it.concurrent('when the process handles Ctrl-C itself (npm start does, once), and goes on to exit its own way', async () => {
    const handles = "process.once('SIGINT', () => setTimeout(() => process.exit(0), 100));";
    const stopped = await synthIn('handled', 'setInterval(() => undefined, 1000);', 'SIGINT', handles);
    expect([stopped.code, stopped.signal, stopped.left]).toEqual([0, null, []]);
  });
});
