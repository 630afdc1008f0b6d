/**
 * The `unit` project runs its files in one worker without isolation (vitest.config.ts): modules
 * load once for all of them. What a file may change beyond its own modules is put back after it,
 * so that no file's verdict depends on the files before it: the environment variables, the
 * timers, stubbed globals and spies.
 */
import { afterAll, vi } from 'vitest';

const env = { ...process.env };

afterAll(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  for (const name of Object.keys(process.env)) if (!(name in env)) delete process.env[name];
  Object.assign(process.env, env);
});
