/** Types of ./undici-lean.cjs: undici's own, for the parts it re-exports. */
import type * as undici from 'undici';

export declare const Agent: typeof undici.Agent;
export type Agent = undici.Agent;
export declare const Dispatcher: typeof undici.Dispatcher;
export type Dispatcher = undici.Dispatcher;
export declare const errors: typeof undici.errors;
/** Like undici's `request`, but `options.dispatcher` is required (no global dispatcher). */
export declare function request(
  url: string | URL,
  options: { dispatcher: undici.Dispatcher } & Omit<Parameters<typeof undici.request>[1] & object, 'dispatcher'>,
): ReturnType<typeof undici.request>;
