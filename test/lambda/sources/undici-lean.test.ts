/**
 * lambda/undici-lean.cjs: the bundle's slim undici entry behaves like undici's own `request`
 * for the form the Codeforces client uses (URL with query, explicit dispatcher), over real HTTP
 * and through a MockAgent, and refuses a call without a dispatcher instead of installing a global one.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockAgent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from '../../../lambda/sources/undici-lean.cjs';

let server: Server;
let base: string;
const seen: { method?: string; url?: string; ua?: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ method: req.method, url: req.url, ua: req.headers['user-agent'] });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'OK', result: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('undici-lean request', () => {
  it('GETs origin + path + query through an Agent, with the given headers', async () => {
    const agent = new Agent({ connect: { timeout: 2_000 } });
    const response = await request(`${base}/api/contest.list?gym=false`, { dispatcher: agent, headers: { 'user-agent': 'lean-test' } });
    expect(response.statusCode).toBe(200);
    expect(await response.body.json()).toEqual({ status: 'OK', result: [] });
    expect(seen.at(-1)).toEqual({ method: 'GET', url: '/api/contest.list?gym=false', ua: 'lean-test' });
    await agent.close();
  });

  it('dispatches to a MockAgent (as the client tests do)', async () => {
    const mock = new MockAgent();
    mock.disableNetConnect();
    mock.get('https://codeforces.example').intercept({ path: '/api/contest.list?gym=false', method: 'GET' }).reply(200, 'mocked');
    const response = await request('https://codeforces.example/api/contest.list?gym=false', { dispatcher: mock });
    expect(await response.body.text()).toBe('mocked');
    await mock.close();
  });

  it('refuses a call without a dispatcher (there is no global one)', () => {
    expect(() => request(`${base}/x`, {} as never)).toThrow(/dispatcher/);
    expect(() => request('', { dispatcher: new Agent() })).toThrow(/invalid url/);
  });
});
