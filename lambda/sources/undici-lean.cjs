'use strict';
/**
 * The part of undici the function uses — `Agent` and `request(url, { dispatcher })` — without
 * the rest of its package entry (fetch, WebSocket, EventSource, caches, mock agents, proxy
 * agents), which esbuild cannot tree-shake out of undici's CommonJS index: about 310 KB less in
 * index.mjs (README "Performance"). Same files as `import { Agent, request } from 'undici'`, at
 * the pinned undici version; the index's global-dispatcher side effect is left out, so `request`
 * needs an explicit `dispatcher` (the Codeforces client always passes one).
 */
const Agent = require('undici/lib/dispatcher/agent.js');
const Dispatcher = require('undici/lib/dispatcher/dispatcher.js');
const apiRequest = require('undici/lib/api/api-request.js');
const util = require('undici/lib/core/util.js');
const errors = require('undici/lib/core/errors.js');

/** undici's top-level `request` for the `request(url, opts)` form with `opts.dispatcher`. */
function request(url, opts) {
  if (!url || (typeof url !== 'string' && typeof url !== 'object')) {
    throw new errors.InvalidArgumentError('invalid url');
  }
  if (opts == null || typeof opts !== 'object') {
    throw new errors.InvalidArgumentError('invalid opts: pass { dispatcher }');
  }
  const { dispatcher } = opts;
  if (!dispatcher || typeof dispatcher.dispatch !== 'function') {
    throw new errors.InvalidArgumentError('invalid opts.dispatcher: this build of undici has no global dispatcher');
  }
  const parsed = util.parseURL(url);
  return apiRequest.call(dispatcher, {
    ...opts,
    origin: parsed.origin,
    path: parsed.search ? `${parsed.pathname}${parsed.search}` : parsed.pathname,
    method: opts.method || (opts.body ? 'PUT' : 'GET'),
  });
}

module.exports.Agent = Agent;
module.exports.Dispatcher = Dispatcher;
module.exports.errors = errors;
module.exports.request = request;
