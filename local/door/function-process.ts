/**
 * A bundled Lambda function kept warm in a child process (./function-host.mjs), invoked over IPC
 * as the Lambda service invokes it: one event, one result. Its environment is the one given
 * (the template's, pointed at the local stand-ins) and nothing of this process's.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface FunctionProcess {
  invoke<T>(event: unknown): Promise<T>;
  stop(): Promise<void>;
}

const HOST = fileURLToPath(new URL('./function-host.mjs', import.meta.url));

export async function startFunctionProcess(options: {
  entry: string;
  name: string;
  env: Record<string, string>;
  /** Where the function's own output (its JSON logs) goes; default nowhere. */
  output?: (text: string) => void;
}): Promise<FunctionProcess> {
  const child: ChildProcess = fork(HOST, [options.entry, options.name], {
    env: { PATH: process.env.PATH ?? '', ...options.env },
    execArgv: [],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  for (const stream of [child.stdout, child.stderr]) stream?.on('data', (chunk: Buffer) => options.output?.(chunk.toString()));
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let next = 0;
  const ready = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${options.name} exited (${code}) before it was ready`)));
    child.on('message', (message: { ready?: boolean; id?: number; ok?: boolean; result?: unknown; error?: { message?: string } }) => {
      if (message.ready === true) return resolve();
      const waiting = pending.get(message.id ?? -1);
      pending.delete(message.id ?? -1);
      if (message.ok === true) waiting?.resolve(message.result);
      else waiting?.reject(new Error(`${options.name} failed: ${message.error?.message ?? 'unknown error'}`));
    });
  });
  await ready;
  return {
    invoke<T>(event: unknown): Promise<T> {
      const id = (next += 1);
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        child.send({ id, event });
      });
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill();
      await exited;
    },
  };
}
